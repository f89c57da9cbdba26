package horizon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// t0 is the fixtures' clock: tests pass times in, as workflows do.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// sampleBlock is a lead's plan for a small CLI feature set.
func sampleBlock() PlanBlock {
	return PlanBlock{
		Ambiguity:   "medium",
		Assumptions: []string{"Dates are ISO 8601 in UTC.", "  ", "The CLI keeps its flag names."},
		Milestones: []PlanBlockMilestone{
			{Title: "Parsing", Features: []PlanBlockFeature{
				{ID: "f1", Title: "Parse ISO dates", Kind: "Mechanical", Acceptance: []string{"ParseDate accepts 2026-03-01"}, Paths: []string{"internal/date/**"}},
				{ID: "f2", Title: "Parse durations", Kind: "bounded", Acceptance: []string{"ParseDuration accepts 3d", "rejects -1d"}, Paths: []string{"internal/date/*.go"}},
				{ID: "f3", Title: "Fetch holidays from the calendar API", Kind: "open", Acceptance: []string{"holidays are cached"}, Paths: []string{"internal/holiday/**"}},
				{ID: "f4", Title: "Skip holidays in ranges", Kind: "bounded", Acceptance: []string{"a range over 25 Dec skips it"}, DependsOn: []string{"f3"}},
				{ID: "f5", Title: "Localised month names", Kind: "bounded", Acceptance: []string{"de and fr month names"}},
			}},
			{Title: "CLI", Features: []PlanBlockFeature{
				{ID: "f6", Title: "horizon-date command", Kind: "bounded", Acceptance: []string{"prints the range"}, Paths: []string{"cmd/date/"}, DependsOn: []string{"f1", "f2"}},
			}},
		},
	}
}

func gate(verdict, receipt string) *GateRun {
	g := &GateRun{ReceiptID: receipt, Verdict: verdict, Command: ".horizon/verify.sh", DurationMS: 1200, FailingKnown: true}
	if verdict != "pass" {
		g.ExitCode = 1
		g.Failing = []string{"date.TestParse"}
	}
	return g
}

// passAttempt: gate pass with a receipt, auditor accepts.
func passAttempt(n int, receipt string, findings ...Finding) Attempt {
	return Attempt{N: n, Tier: "T1", Model: "local/coder", Outcome: OutcomeAccepted, Report: &Report{Status: "satisfied", Summary: "done"},
		Gate: gate("pass", receipt), Audit: &Audit{Verdict: "accept", Findings: findings},
		Usage: Usage{Input: 1000, Output: 200, Cost: 0.01}, StartedAt: at(n * 10), EndedAt: at(n*10 + 5)}
}

// failAttempt: gate red.
func failAttempt(n int, receipt string) Attempt {
	return Attempt{N: n, Tier: "T1", Model: "local/coder", Outcome: OutcomeGateFailed, Report: &Report{Status: "satisfied", Summary: "tried"},
		Gate: gate("fail", receipt), Usage: Usage{Input: 800, Output: 100, Cost: 0.005}, StartedAt: at(n * 10), EndedAt: at(n*10 + 5)}
}

// samplePlan is sampleBlock part-way through a run: f1 accepted; f2
// decomposed, f2.1 accepted with a concern, f2.2 running; f3 blocked on a
// credential; f4 waits on f3; f5 skipped; f6 pending.
func samplePlan(t *testing.T) Plan {
	t.Helper()
	p, err := PlanFromBlock("Add date ranges that skip holidays to the CLI", sampleBlock())
	require.NoError(t, err)
	require.NoError(t, p.Start("f1"))
	require.NoError(t, p.RecordAttempt("f1", failAttempt(1, "r-0001"), 2))
	require.NoError(t, p.RecordAttempt("f1", passAttempt(2, "r-0002"), 2))
	require.NoError(t, p.Accept("f1", "1a2b3c4"))

	require.NoError(t, p.Start("f2"))
	for n := 1; n <= 6; n++ {
		require.NoError(t, p.RecordAttempt("f2", failAttempt(n, "r-01"+string(rune('0'+n))), 2))
	}
	require.Equal(t, StrategyDecomposition, StrategyFor(6, 2))
	require.NoError(t, p.Decompose("f2", []Feature{
		{Title: "Parse day and week units", Acceptance: []string{"3d and 2w parse"}},
		{Title: "Reject negative durations", Acceptance: []string{"-1d is an error"}, Paths: []string{"internal/date/neg.go"}},
	}))
	require.NoError(t, p.Start("f2.1"))
	require.NoError(t, p.RecordAttempt("f2.1", passAttempt(1, "r-0201", Finding{File: "internal/date/dur.go", Line: 12, Severity: "concern", Note: "weeks assume 7 days; no ISO week handling"}, Finding{Severity: "nit", Note: "naming"}), 2))
	require.NoError(t, p.Accept("f2.1", "5d6e7f8"))
	require.NoError(t, p.Start("f2.2"))
	require.NoError(t, p.RecordAttempt("f2.2", failAttempt(1, "r-0202"), 2))

	require.NoError(t, p.Start("f3"))
	require.NoError(t, p.RecordAttempt("f3", Attempt{N: 1, Model: "cloud/big", Outcome: OutcomeBlocked,
		Report: &Report{Status: "blocked", Blocker: &Blocker{Type: "missing_credential", Evidence: "CALENDAR_API_KEY is not set; GET https://calendar.example/v1 returned 401"}},
		Asked:  []Ask{{Kind: AskPermission, Text: "read: /lanes/f3/.env"}},
		Usage:  Usage{Input: 500, Output: 50, Cost: 0.02}, StartedAt: at(100)}, 2))
	b, ok := ClassifyReportBlocker(*p.Milestones[0].Features[findIdx(p, "f3")].Attempts[0].Report)
	require.True(t, ok)
	require.NoError(t, p.Block("f3", b))
	require.NoError(t, p.Skip("f5", "Out of scope: the user asked for English only."))
	return p
}

func findIdx(p Plan, id string) int {
	_, fi, ok := p.locate(id)
	if !ok {
		panic(id)
	}
	return fi
}
