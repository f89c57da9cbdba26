package horizon

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeEscapesEveryControl(t *testing.T) {
	// Every C0 but newline and tab, DEL, every C1.
	for r := rune(0); r < 0xa0; r++ {
		if r >= 0x20 && r < 0x7f || r == '\n' || r == '\t' {
			require.Equal(t, string(r), Safe(string(r)))
			continue
		}
		got := Safe("a" + string(r) + "b")
		require.True(t, strings.HasPrefix(got, `a\`) && strings.HasSuffix(got, "b"), "%U → %q", r, got)
		requireInert(t, got)
	}
	for _, tc := range []struct{ in, want string }{
		{"title \x1b]0;owned\x07 end", `title \x1b]0;owned\x07 end`},
		{"clip \x1b]52;c;ZXZpbA==\x1b\\", `clip \x1b]52;c;ZXZpbA==\x1b\`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"csi8 \u009b31m", `csi8 \u009b31m`},
		{"osc8 \u009d0;t\u009c", `osc8 \u009d0;t\u009c`},
		{"abc\u202eevil.exe", `abc\u202eevil.exe`},
		{"\u2066iso\u2069 \u200ertl\u200f \u061c", `\u2066iso\u2069 \u200ertl\u200f \u061c`},
		{"zero\u200bwidth\u2028line\ufeff", `zero\u200bwidth\u2028line\ufeff`},
		{"bad \xff byte", `bad \xff byte`},
		{"plain — ünïcode ✓ 日本\n\tindented", "plain — ünïcode ✓ 日本\n\tindented"},
		{"cr\rover", `cr\x0dover`},
	} {
		got := Safe(tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
		requireInert(t, got)
	}
}

// requireInert: no byte a terminal acts on is left.
func requireInert(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		require.False(t, (r < 0x20 && r != '\n' && r != '\t') || unsafeRune(r), "%U left in %q", r, s)
	}
}

func TestSafeKeepsJSON(t *testing.T) {
	in := map[string]string{"goal": "x\u202e\u009b\x7fy\x1b]0;t\x07"}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	var out map[string]string
	require.NoError(t, json.Unmarshal([]byte(Safe(string(b))), &out), Safe(string(b)))
	require.Equal(t, in, out, "the \\u forms are JSON escapes of the same runes")
}

func TestSafeWriterJoinsSplitRunes(t *testing.T) {
	var buf bytes.Buffer
	w := NewSafeWriter(&buf)
	in := []byte("ok ✓ \u202e\x1b[31m end")
	for _, c := range in {
		_, err := w.Write([]byte{c})
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	require.Equal(t, Safe(string(in)), buf.String())
}

// The Markdown horizon writes (the Temporal UI's run page, handoff.md)
// shows a hostile goal and plan title visibly, never raw.
func TestMarkdownIsSafe(t *testing.T) {
	hostile := "Add CSV \x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07\x1b[8mhidden\x1b[0m \u202etxt.exe"
	p := samplePlan(t)
	p.Milestones[0].Title = hostile
	st := RunState{RunID: "run-1", Goal: hostile, Plan: &p}
	for name, md := range map[string]string{
		"run markdown": st.Markdown(),
		"handoff":      Handoff(HandoffInput{RunID: "run-1", Plan: p, Reason: hostile}),
	} {
		requireInert(t, md)
		require.Contains(t, md, `\x1b]0;owned\x07`, name)
	}
}
