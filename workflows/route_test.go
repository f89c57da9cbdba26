package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

func ladderEnv(t *testing.T, tiers ladder.Availability) *env {
	return ladderEnvCtx(t, tiers, 0)
}

func ladderEnvCtx(t *testing.T, tiers ladder.Availability, localContext int) *env {
	var s testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment()}
	registerRuns(e)
	e.RegisterActivity(&activities.Activities{})
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{
		Gate:   ".horizon/verify.sh",
		Models: map[horizon.Role]string{horizon.RoleWorker: "cloud/big", horizon.RoleAuditor: "cloud/review"},
		Paid:   map[horizon.Role]bool{horizon.RoleWorker: true, horizon.RoleAuditor: true},
		Tiers:  tiers, LocalContext: localContext,
	}, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lane"}, nil)
	e.mockHandoff()
	return e
}

var allTiers = ladder.Availability{
	ladder.T0: {Available: true, Applier: activities.ApplierCodemod},
	ladder.T1: {Available: true, Applier: activities.ApplierOpenCode, Model: "local/coder"},
	ladder.T2: {Reason: "no reader configured"},
	ladder.T3: {Available: true, Applier: activities.ApplierOpenCode, Model: "cloud/big"},
	ladder.T4: {Reason: "none"},
}

// A mechanical card is first tried with the T0 codemods: no model session,
// and the gate and auditor judge it like any other attempt.
func TestMechanicalCardTriesCodemodsFirst(t *testing.T) {
	e := ladderEnv(t, allTiers)
	e.OnActivity(a.Codemod, mock.Anything, mock.Anything).Return(activities.CodemodOutput{Files: []string{"a.go"}, Applied: 2}, nil).Once()
	workers := 0
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		if in.Role == horizon.RoleWorker {
			workers++
		}
		return accept, nil
	})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	in := input()
	in.Model, in.Kind = "", "mechanical"
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, 0, workers, "T0 needs no model")
	require.Equal(t, "T0", s.Attempts[0].Tier)
	require.Equal(t, activities.ApplierCodemod, s.Attempts[0].Applier)
	require.Contains(t, s.Attempts[0].Report.Summary, "2 changes in 1 files")
	require.Equal(t, horizon.OutcomeAccepted, s.Attempts[0].Outcome)
}

// A bounded card gets two local (T1) attempts; failing twice with the same
// failing set it climbs to the metered T3 model, on the paid queue.
func TestBoundedCardClimbsAfterTwoLocalFailures(t *testing.T) {
	e := ladderEnv(t, allTiers)
	type call struct{ model, queue string }
	var calls []call
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		if in.Role == horizon.RoleWorker {
			calls = append(calls, call{in.Model, activityQueue(ctx)})
			return satisfied, nil
		}
		return accept, nil
	})
	e.gates("fail", "fail", "pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	in := input()
	in.Model, in.PaidQueue, in.MaxAttempts = "", "horizon-paid", 5
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Len(t, s.Attempts, 3)
	require.Equal(t, []string{"T1", "T1", "T3"}, []string{s.Attempts[0].Tier, s.Attempts[1].Tier, s.Attempts[2].Tier})
	require.Equal(t, "local/coder", calls[0].model)
	require.Equal(t, "local/coder", calls[1].model)
	require.Equal(t, "cloud/big", calls[2].model)
	require.Equal(t, "horizon-paid", calls[2].queue, "metered sessions run on the paid queue")
	require.NotEqual(t, "horizon-paid", calls[0].queue)
	require.Contains(t, s.Attempts[2].Route, "T3")
}

// No usable tier: the run is blocked with the ladder's reason as evidence.
func TestNoUsableTierBlocks(t *testing.T) {
	e := ladderEnv(t, ladder.Availability{ladder.T1: {Reason: "no local model"}, ladder.T3: {Reason: "no cloud model"}})
	e.gates()
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.StatusBlocked, s.Status)
	require.Equal(t, horizon.BlockerPlatformLimit, s.Blocker.Type)
	require.Contains(t, s.Blocker.Evidence, "no usable tier")
}

// Near the daily ceiling (today's spend across runs from DaySpend) the
// ladder keeps to local tiers instead of climbing to the metered one.
func TestNearDayCeilingStaysLocal(t *testing.T) {
	e := ladderEnv(t, allTiers)
	e.OnActivity(a.DaySpend, mock.Anything).Return(0.9, nil)
	var models []string
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		models = append(models, in.Model)
		return satisfied, nil
	})
	e.gates("fail", "fail", "fail")
	in := input()
	in.Model, in.DayCeiling, in.MaxAttempts = "", 1.0, 3
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, []string{"local/coder", "local/coder", "local/coder"}, models, "throttled to T1")
	require.InDelta(t, 0.9, s.DaySpent, 1e-9)
}

// At the daily ceiling the run pauses; raising it (set-day-ceiling) lets
// it go on.
func TestDayCeilingPausesUntilRaised(t *testing.T) {
	e := ladderEnv(t, allTiers)
	e.OnActivity(a.DaySpend, mock.Anything).Return(1.5, nil)
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		if in.Role == horizon.RoleAuditor {
			return accept, nil
		}
		return satisfied, nil
	})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	var paused horizon.RunState
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&paused))
		e.UpdateWorkflow(UpdateSetDayCeiling, "raise", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, 10.0)
	}, time.Minute)
	in := input()
	in.Model, in.DayCeiling = "", 1.0
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.PhasePaused, paused.Phase)
	require.Contains(t, paused.Reason, "ceiling")
	require.Empty(t, paused.Attempts)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, 10.0, s.DayCeiling)
}

// A local attempt whose prompt exceeded the local model's context window
// records the context_overflow trigger (from the token count OpenCode
// reported, not from anything the model said).
func TestLocalContextOverflowTrigger(t *testing.T) {
	e := ladderEnvCtx(t, allTiers, 50) // satisfied's sessions report 100 input tokens
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(satisfied, nil)
	e.gates("fail")
	in := input()
	in.Model, in.MaxAttempts = "", 1
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.Error(t, err)
	kinds := []string{}
	for _, tr := range s.Attempts[0].Triggers {
		kinds = append(kinds, tr.Kind)
	}
	require.Contains(t, kinds, "context_overflow")
}
