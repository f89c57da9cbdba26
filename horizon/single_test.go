package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSingleFeaturePlanHandoffMatchesReceipts(t *testing.T) {
	st := RunState{
		RunID: "run-1", Goal: "Make add.sh add\nmore words", Feature: "f1", Status: StatusCompleted, Commit: "abc123",
		Attempts: []Attempt{
			{N: 1, Outcome: OutcomeRejected, Gate: &GateRun{ReceiptID: "r-1", Verdict: "pass"}, Audit: &Audit{Verdict: "reject"}},
			{N: 2, Action: "retrieve", Outcome: OutcomeRetrieved},
			{N: 2, Outcome: OutcomeAccepted, Gate: &GateRun{ReceiptID: "r-2", Verdict: "pass"}, Audit: &Audit{Verdict: "accept"}},
		},
	}
	p := SingleFeaturePlan(st)
	require.Len(t, p.Milestones, 1)
	f := p.Milestones[0].Features[0]
	require.Equal(t, FeatureAccepted, f.Status)
	require.Equal(t, "Make add.sh add", f.Title)
	require.Len(t, f.Attempts, 2, "the retrieval step is not an attempt")
	require.Equal(t, []string{"r-1", "r-2"}, f.ReceiptIDs)

	md := Handoff(HandoffInput{RunID: st.RunID, Status: st.Status, Plan: p, ReceiptVerdicts: map[string]string{"r-1": "pass", "r-2": "pass"}})
	require.Contains(t, md, "abc123")
	require.Contains(t, md, "r-2")
	require.NotContains(t, md, "Not verified")

	// The same run whose passing receipt is missing from the ledger is not
	// reported as verified.
	md = Handoff(HandoffInput{RunID: st.RunID, Status: st.Status, Plan: p, ReceiptVerdicts: map[string]string{"r-1": "pass"}})
	require.Contains(t, md, "Not verified")
}
