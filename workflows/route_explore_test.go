package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// An attempt that fails on an unresolved name is followed by a read-only
// retrieval step on the model ranked for the explore role at that tier
// (preflight's Rung.Explore), and the next attempt goes back to the
// tier's build model.
func TestRetrievalRunsOnTheExploreModel(t *testing.T) {
	tiers := ladder.Availability{}
	for k, v := range allTiers {
		tiers[k] = v
	}
	t1 := tiers[ladder.T1]
	t1.Explore = "local/scout"
	tiers[ladder.T1] = t1
	e := ladderEnv(t, tiers)
	var sessions []string
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		sessions = append(sessions, string(in.Role)+" "+in.Model)
		switch in.Role {
		case horizon.RoleAuditor:
			return accept, nil
		case horizon.RoleExplorer:
			return activities.SessionOutput{SessionID: "ses_x", Notes: "ParseISO is in dates/iso.go"}, nil
		}
		return satisfied, nil
	})
	gates := 0
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
		if in.Attempt == 0 {
			return horizon.GateRun{Verdict: "fail", ExitCode: 1, Failing: []string{"TestAdd"}, Tree: "base"}, nil
		}
		gates++
		if gates == 1 {
			return horizon.GateRun{Verdict: "fail", ExitCode: 1, Tail: "calc/calc.go:5:37: undefined: ParseISO", Failing: []string{"TestAdd"}, Tree: "t1"}, nil
		}
		return horizon.GateRun{Verdict: "pass", Tree: "t2"}, nil
	})
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	in := input()
	in.Model, in.MaxAttempts = "", 5
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, []string{"worker local/coder", "explorer local/scout", "worker local/coder", "auditor cloud/review"}, sessions)
	require.Equal(t, actionRetrieve, s.Attempts[1].Action)
	require.Equal(t, "local/scout", s.Attempts[1].Model, "the attempt records the model it ran on")
}
