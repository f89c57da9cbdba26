package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
)

// plannedState is a planned run whose two features were accepted with
// passing receipts on disk, two decisions saved and the final integration
// gate run.
func plannedState(t *testing.T, a *Activities, integration gate.Verdict) horizon.RunState {
	t.Helper()
	p, err := horizon.PlanFromBlock("Add parsing and printing", horizon.PlanBlock{Ambiguity: "LOW", Milestones: []horizon.PlanBlockMilestone{{Title: "M", Features: []horizon.PlanBlockFeature{
		{ID: "f1", Title: "Parse dates", Kind: "bounded", Acceptance: []string{"2026-03-01 parses"}},
		{ID: "f2", Title: "Print dates", Kind: "bounded", Acceptance: []string{"prints ISO"}, DependsOn: []string{"f1"}},
	}}}})
	require.NoError(t, err)
	receipts := filepath.Join(a.runDir(testRun), "receipts.jsonl")
	for i, id := range []string{"f1", "f2"} {
		rid := "r-" + id
		require.NoError(t, p.Start(id))
		require.NoError(t, p.RecordAttempt(id, horizon.Attempt{N: 1, Outcome: horizon.OutcomeAccepted,
			Gate:  &horizon.GateRun{ReceiptID: rid, Verdict: "pass", Command: ".horizon/verify.sh", FailingKnown: true},
			Audit: &horizon.Audit{Verdict: "accept"}}, 2))
		require.NoError(t, p.Accept(id, strings.Repeat(string(rune('a'+i)), 7)))
		require.NoError(t, gate.AppendReceipt(receipts, gate.Receipt{ID: rid, Run: testRun, Feature: id, Verdict: gate.Pass}))
	}
	require.True(t, p.Done())
	require.NoError(t, gate.AppendReceipt(receipts, gate.Receipt{ID: "r-integration", Run: testRun, Feature: "_integration", Verdict: integration}))

	_, err = a.SavePlan(context.Background(), PlanArtifacts{RunID: testRun, Plan: p, Decisions: []horizon.Decision{
		decision(1, "Assume UTC dates"), decision(2, "Run f2 after f1"),
	}})
	require.NoError(t, err)
	ig := &horizon.GateRun{ReceiptID: "r-integration", Verdict: string(integration), Command: ".horizon/verify.sh", FailingKnown: true}
	if integration != gate.Pass {
		ig.ExitCode, ig.Failing = 1, []string{"date.TestRoundTrip"}
	}
	return horizon.RunState{
		RunID: testRun, Goal: "Add parsing and printing", Status: horizon.StatusCompleted, Branch: horizon.IntegrationBranch(testRun),
		Feature: "single-feature ID that must not show", Plan: &p, Integration: ig,
		Baseline: &horizon.GateRun{Verdict: "pass", FailingKnown: true}, Decisions: 2,
	}
}

func TestWriteHandoffPlanned(t *testing.T) {
	tests := []struct {
		name  string
		gate  gate.Verdict
		edit  func(st *horizon.RunState)
		wants []string
		not   []string
	}{
		{
			name: "completed",
			gate: gate.Pass,
			wants: []string{
				"- **f1** Parse dates — commit `aaaaaaa`; gate pass (receipt `r-f1`, attempt 1); audit accept",
				"- **f2** Print dates — commit `bbbbbbb`; gate pass (receipt `r-f2`, attempt 1); audit accept",
				"2 feature(s): 2 verified",
				"## Integration gate\n\n- **Verdict:** pass (exit 0) on the tip of `horizon/r1`\n- **Receipt:** `r-integration`\n- **Command:** `.horizon/verify.sh`\n",
				"· f1 · Assume UTC dates — because Assume UTC dates",
				"· f1 · Run f2 after f1 — because Run f2 after f1",
			},
			not: []string{"single-feature ID", "None recorded.\n\n## Assumptions", "integration gate on"},
		},
		{
			name: "integration gate failed",
			gate: gate.Fail,
			edit: func(st *horizon.RunState) {
				st.Status, st.ReasonKind, st.Reason = horizon.StatusFailed, horizon.ReasonIntegration, "the integration gate kept failing"
			},
			wants: []string{
				"- **Status:** failed — the integration gate kept failing",
				"- **Verdict:** fail (exit 1) on the tip of `horizon/r1`",
				"The integration gate on `horizon/r1` (receipt `r-integration`) ended fail: the accepted features do not pass the gate together; failing: date.TestRoundTrip.",
			},
		},
		{
			name: "stopped by the budget",
			gate: gate.Pass,
			edit: func(st *horizon.RunState) {
				st.Budget = &horizon.Budget{Spend: 1}
				st.Status, st.ReasonKind, st.Reason = horizon.StatusFailed, horizon.ReasonBudget, "run budget: spend limit $1.0000 reached ($1.2000 spent)"
			},
			wants: []string{"- **Status:** failed — run budget: spend limit $1.0000 reached ($1.2000 spent)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Home: t.TempDir()}
			st := plannedState(t, a, tt.gate)
			if tt.edit != nil {
				tt.edit(&st)
			}
			out, err := a.WriteHandoff(context.Background(), st)
			require.NoError(t, err)
			require.Equal(t, filepath.Join(a.runDir(testRun), "handoff.md"), out.Path)
			b, err := os.ReadFile(out.Path)
			require.NoError(t, err)
			md := string(b)
			for _, w := range tt.wants {
				require.Contains(t, md, w)
			}
			for _, n := range tt.not {
				require.NotContains(t, md, n)
			}
		})
	}
}

// A single-feature run (no plan) still renders its goal as one feature
// and shows no integration section.
func TestWriteHandoffSingle(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	out, err := a.WriteHandoff(context.Background(), horizon.RunState{RunID: testRun, Goal: "Fix add", Feature: "f1", Status: horizon.StatusBlocked,
		Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "no key"}})
	require.NoError(t, err)
	b, err := os.ReadFile(out.Path)
	require.NoError(t, err)
	require.Contains(t, string(b), "- **f1** Fix add — `missing_credential`: no key")
	require.Contains(t, string(b), "## Decisions\n\n- None recorded.")
	require.NotContains(t, string(b), "## Integration gate")
}

// A corrupt decisions log fails the handoff rather than silently dropping
// decisions.
func TestWriteHandoffBadDecisions(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	require.NoError(t, os.MkdirAll(a.runDir(testRun), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(a.runDir(testRun), "decisions.jsonl"), []byte("garbage\n"), 0o600))
	_, err := a.WriteHandoff(context.Background(), horizon.RunState{RunID: testRun})
	require.ErrorContains(t, err, "decisions.jsonl: line 1")
}
