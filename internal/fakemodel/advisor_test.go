package fakemodel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// An advisor's note does not restart the worker's step count; a waking
// blocker does, like any prompt.
func TestAdvisorNotesKeepTheStep(t *testing.T) {
	note := "<system-reminder>\nThe user sent the following message:\n[horizon advisor · concern r2.1]\nAdd has no test\n</system-reminder>"
	c := readConversation([]chatMessage{
		{Role: "system", Content: raw("You are horizon's worker.")},
		{Role: "user", Content: raw("brief")},
		{Role: "assistant", Content: raw("step 0")},
		{Role: "user", Content: raw(note)},
		{Role: "assistant", Content: raw("step 1")},
	})
	require.Equal(t, 2, c.step)
	require.Equal(t, "brief", c.lastUser)
	require.Contains(t, c.haystack, "Add has no test", "rules still see the note")

	c = readConversation([]chatMessage{
		{Role: "user", Content: raw("brief")},
		{Role: "assistant", Content: raw("step 0")},
		{Role: "user", Content: raw("[horizon advisor · blocker r1.1]\nAdd subtracts")},
	})
	require.Equal(t, 0, c.step)
}

func raw(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
