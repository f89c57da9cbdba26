package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// The gate recorded at preflight travels to every gate run with the
// protected paths and the baseline's receipt; a gate run that exits 0
// while a test failing at baseline vanished is not a pass: the auditor
// never sees it, it is never committed, vanished_tests names the test,
// and the next brief says deleting a failing test is not a way to pass.
func TestVanishedFailingTestIsNeverAccepted(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	s := &env{TestWorkflowEnvironment: suite.NewTestWorkflowEnvironment()}
	registerRuns(s)
	s.RegisterActivity(&activities.Activities{})
	s.mockHandoff()
	s.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lanes/run-1/f1"}, nil)
	rec := &horizon.GateRecord{Commit: "abc123", Script: ".zecor/verify.sh", Mode: "100755", Hash: "d00d", Source: ".zecor/verify.sh"}
	s.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{Gate: rec.Source, GateRecord: rec}, nil)
	s.sessions([]activities.SessionOutput{satisfied, satisfied}, []activities.SessionOutput{accept})
	var inputs []activities.GateInput
	s.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
			inputs = append(inputs, in)
			switch in.Attempt {
			case 0:
				return horizon.GateRun{ReceiptID: "r-base", Verdict: "fail", ExitCode: 1, Command: rec.Source, Failing: []string{"calc.TestAdd"}, FailingKnown: true, Tree: "base"}, nil
			case 1: // the worker deleted the failing test
				return horizon.GateRun{ReceiptID: "r-1", Verdict: "pass", Command: rec.Source, FailingKnown: true, Tree: "t1",
					Vanished: []string{"calc.TestAdd"}, Reverted: []string{".horizon/verify.sh"}}, nil
			}
			return horizon.GateRun{ReceiptID: "r-2", Verdict: "pass", Command: rec.Source, FailingKnown: true, Tree: "t2"}, nil
		})
	s.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
	in := input()
	in.Limits.GateProtected = []string{".horizon/", "tests/"}
	s.ExecuteWorkflow(SingleRunWorkflow, in)
	st, err := result(t, s)
	require.NoError(t, err)

	require.Equal(t, rec, st.Gate, "the record is in the run's state")
	require.Len(t, inputs, 3)
	for _, gi := range inputs {
		require.Equal(t, rec, gi.Record, "every gate run gets the record")
		require.Equal(t, []string{".horizon/", "tests/"}, gi.Protected)
	}
	require.Empty(t, inputs[0].BaselineReceipt)
	require.Equal(t, "r-base", inputs[1].BaselineReceipt)

	require.Equal(t, []horizon.Outcome{horizon.OutcomeGateFailed, horizon.OutcomeAccepted}, outcomes(st))
	require.Nil(t, st.Attempts[0].Audit, "the auditor never judged the attempt whose failing test vanished")
	var kinds []string
	for _, tr := range st.Attempts[0].Triggers {
		kinds = append(kinds, tr.Kind)
		if tr.Kind == "vanished_tests" {
			require.Equal(t, []string{"calc.TestAdd"}, tr.Evidence)
		}
	}
	require.Contains(t, kinds, "vanished_tests")
	require.Contains(t, kinds, "out_of_scope", "reverted protected paths are out-of-scope evidence")
	require.Contains(t, s.briefs[1], "did not run at all: calc.TestAdd")
	require.Contains(t, s.briefs[1], "were reverted before the gate ran")
	require.Contains(t, st.Markdown(), "failing tests vanished (not accepted): calc.TestAdd")
}
