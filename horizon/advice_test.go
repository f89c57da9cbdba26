package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAdviceSummaryAndAuditorContext(t *testing.T) {
	recs := []AdviceRecord{
		{ID: "r1.1", Severity: SeverityBlocker, Delivered: SeverityBlocker, Note: "Add subtracts", Evidence: &AdviceEvidence{File: "add.go", Line: 5}, Verdict: AdviceDelivered, Woke: true},
		{ID: "r2.1", Severity: SeverityBlocker, Delivered: SeverityConcern, Note: "no test", Verdict: AdviceDowngraded},
		{ID: "r2.2", Severity: SeverityConcern, Note: "zebra", Verdict: AdviceRefuted},
		{ID: "r2.3", Severity: SeverityNit, Note: "LGTM", Verdict: AdviceSuppressed},
		{ID: "r2.4", Severity: SeverityNit, Delivered: SeverityNit, Note: "rename x", Verdict: AdviceDelivered},
		{ID: "r3", Verdict: AdviceFailed, Reason: "timed out"},
	}
	require.Equal(t, "advice: 2 delivered (1 woke), 1 downgraded, 1 refuted, 1 suppressed, 1 failed", AdviceSummary(recs))
	require.Empty(t, AdviceSummary(nil))
	require.Equal(t, "- blocker: Add subtracts (add.go:5)\n- concern: no test\n", AdviceForAuditor(recs), "nits and what never reached the worker are left out")
}

// The Web UI's Markdown carries the advice summary per attempt that had
// advice, in a one-feature run and per feature of a planned run.
func TestAdviceInMarkdown(t *testing.T) {
	recs := []AdviceRecord{
		{ID: "r1.1", Severity: SeverityBlocker, Delivered: SeverityBlocker, Note: "Add subtracts", Verdict: AdviceDelivered, Woke: true},
		{ID: "r1.2", Severity: SeverityConcern, Note: "zebra", Verdict: AdviceRefuted},
	}
	single := &RunState{Status: StatusRunning, Attempts: []Attempt{{N: 1}, {N: 2, Advice: recs}}}
	md := single.Markdown()
	require.Contains(t, md, "\nAdvisor:\n\n- attempt 2: advice: 1 delivered (1 woke), 1 refuted\n")
	require.NotContains(t, md, "attempt 1:")

	planned := &RunState{Status: StatusRunning, Plan: &Plan{Milestones: []Milestone{{ID: "m1", Features: []Feature{
		{ID: "f1", Attempts: []Attempt{{N: 1, Advice: recs}}},
		{ID: "f2", Attempts: []Attempt{{N: 1}}},
	}}}}}
	md = planned.Markdown()
	require.Contains(t, md, "\nAdvisor:\n\n- `f1` attempt 1: advice: 1 delivered (1 woke), 1 refuted\n")
	require.NotContains(t, md, "`f2` attempt")

	require.NotContains(t, (&RunState{Status: StatusRunning, Attempts: []Attempt{{N: 1}}}).Markdown(), "Advisor")
}
