package horizon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewAsksBounds(t *testing.T) {
	var raw []Ask
	raw = append(raw, Ask{Kind: AskQuestion, Text: "Which  database?\nsqlite or postgres"}, Ask{Kind: AskQuestion, Text: "which database? sqlite or POSTGRES"})
	raw = append(raw, Ask{Kind: AskPermission, Text: strings.Repeat("x", 2*MaxAskText)}, Ask{Kind: AskPermission, Text: "  "})
	for i := range 10 {
		raw = append(raw, Ask{Kind: AskPermission, Text: "read: f" + strings.Repeat("1", i)})
	}
	got := NewAsks(raw)
	require.Len(t, got, MaxAsks)
	require.Equal(t, Ask{Kind: AskQuestion, Text: "Which database? sqlite or postgres"}, got[0], "one line; the repeat (case, spaces) dropped")
	require.LessOrEqual(t, len(got[1].Text), MaxAskText+len("…"))
	require.Equal(t, "read: f", got[2].Text, "the empty one dropped")
}

func TestAskReadsOldStrings(t *testing.T) {
	var as []Ask
	require.NoError(t, json.Unmarshal([]byte(`["permission bash: rm -rf build", "question: Which database?", {"kind": "question", "text": "Why?"}]`), &as))
	require.Equal(t, []Ask{{Kind: AskPermission, Text: "bash: rm -rf build"}, {Kind: AskQuestion, Text: "Which database?"}, {Kind: AskQuestion, Text: "Why?"}}, as)
	b, err := json.Marshal(as[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"kind": "permission", "text": "bash: rm -rf build"}`, string(b))
}

func TestAskBlocker(t *testing.T) {
	q := Ask{Kind: AskQuestion, Text: "Which database should the cache use?"}
	p := Ask{Kind: AskPermission, Text: "read: /lane/.env"}
	blocked := &Report{Status: ReportBlocked, Summary: "need a decision"}
	tests := []struct {
		name     string
		earlier  []Attempt
		cur      Attempt
		want     BlockerType
		evidence string
	}{
		{name: "nothing asked", cur: Attempt{N: 1, Report: blocked}},
		{name: "asked once", cur: Attempt{N: 1, Asked: []Ask{q}}},
		{name: "asked once, then went on", earlier: []Attempt{{N: 1}}, cur: Attempt{N: 2, Asked: []Ask{p}, Report: &Report{Status: ReportContinue}}},
		{name: "a different request on attempt 2", earlier: []Attempt{{N: 1, Asked: []Ask{p}}}, cur: Attempt{N: 2, Asked: []Ask{q}}},
		{name: "the same permission on attempt 2", earlier: []Attempt{{N: 1, Asked: []Ask{p}}}, cur: Attempt{N: 2, Asked: []Ask{p}},
			want: BlockerPermissionDenied, evidence: "asked again on attempts 1, 2): permission: read: /lane/.env"},
		{name: "the same question on attempt 3", earlier: []Attempt{{N: 1, Asked: []Ask{q}}, {N: 2}}, cur: Attempt{N: 3, Asked: []Ask{{Kind: AskQuestion, Text: "which database should the  cache use?"}}},
			want: BlockerNeedsDecision, evidence: "asked again on attempts 1, 3)"},
		{name: "asked and reported blocked", cur: Attempt{N: 1, Asked: []Ask{p, q}, Report: blocked},
			want: BlockerNeedsDecision, evidence: "reported blocked after asking on attempt 1): question: Which database"},
		{name: "denied and reported blocked", cur: Attempt{N: 1, Asked: []Ask{p}, Report: blocked},
			want: BlockerPermissionDenied, evidence: "permission: read: /lane/.env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := AskBlocker(tt.earlier, tt.cur)
			if tt.want == "" {
				require.False(t, ok, "%+v", b)
				return
			}
			require.True(t, ok)
			require.Equal(t, tt.want, b.Type)
			require.Contains(t, b.Evidence, tt.evidence)
		})
	}
}

func TestAsksShowInTheSingleRunMarkdown(t *testing.T) {
	s := &RunState{Status: StatusRunning, Attempts: []Attempt{{N: 1, Asked: []Ask{{Kind: AskQuestion, Text: "Which | database?"}}}, {N: 2}}}
	require.Contains(t, s.Markdown(), asksHeading+":\n\n- attempt 1: question: Which \\| database?\n")
	require.NotContains(t, (&RunState{Attempts: []Attempt{{N: 1}}}).Markdown(), "Asked")
	require.Equal(t, []string{"asked question: Which | database?"}, s.Attempts[0].AskLines())
}
