package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An advisor's message ID sorts among OpenCode's own by time, and the same
// note at the same instant always gets the same ID.
func TestAdviceMessageID(t *testing.T) {
	at := time.UnixMilli(1764586800123)
	id := AdviceMessageID("run/f1/1/r1.1", at)
	require.Len(t, id, len("msg_")+26)
	require.Equal(t, id, AdviceMessageID("run/f1/1/r1.1", at))
	require.NotEqual(t, id, AdviceMessageID("run/f1/1/r1.2", at))
	require.Less(t, id, AdviceMessageID("run/f1/1/r1.1", at.Add(time.Millisecond)))
	require.Greater(t, id, AdviceMessageID("run/f1/1/r1.1", at.Add(-time.Millisecond)))
}

func TestWithoutNotes(t *testing.T) {
	user := func(id, text string, meta map[string]any) ocMessage {
		return ocMessage{Info: ocInfo{ID: id, Role: "user"}, Parts: []ocPart{{Type: "text", Text: text, Metadata: meta}}}
	}
	msgs := []ocMessage{
		user("m1", "brief", nil),
		{Info: ocInfo{ID: "m2", Role: "assistant"}},
		user("m3", "[horizon advisor · concern r1.1]\nAdd subtracts", map[string]any{adviceKey: "r1.1", adviceWake: false}),
		user("m4", "[horizon advisor · nit r1.2] no metadata", nil),
		user("m5", "[horizon advisor · blocker r2.1]\nstop", map[string]any{adviceKey: "r2.1", adviceWake: true}),
	}
	var ids []string
	for _, m := range withoutNotes(msgs) {
		ids = append(ids, m.Info.ID)
	}
	require.Equal(t, []string{"m1", "m2", "m5"}, ids, "notes go, a waking blocker is a prompt and stays")
	m := readMessage(msgs[4])
	require.Equal(t, "r2.1", m.Advice)
	require.True(t, m.Wake)
	require.Empty(t, readMessage(msgs[0]).Advice)
}
