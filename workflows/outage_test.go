package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// A provider that refuses the credentials blocks its feature with the
// provider's words as evidence, at once (not retried); the independent
// feature goes on.
func TestPlanProviderRefusalBlocksTheFeature(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	b, err := horizon.NewBlocker(horizon.BlockerMissingCredential, "the model provider refused the session (HTTP 401): Incorrect API key provided")
	require.NoError(t, err)
	w.sessionErrs["f1"] = []error{temporal.NewNonRetryableApplicationError(b.Evidence, activities.ErrTypeProviderRefused, nil, b)}
	e := w.env()
	var waiting horizon.RunState
	cb := &testsuite.TestUpdateCallback{OnReject: func(error) {}, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		waiting = query(t, e)
		e.UpdateWorkflow(UpdateUnblock, "ok", cb, Unblock{Note: "the API key is fixed"})
	}, time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusBlocked, waiting.Status)
	require.Equal(t, horizon.FeatureBlocked, statuses(waiting.Plan)["f1"])
	require.Equal(t, horizon.FeatureAccepted, statuses(waiting.Plan)["f2"], "the independent feature went on")
	f1, _ := waiting.Plan.Feature("f1")
	require.NotNil(t, f1.Blocker)
	require.Equal(t, horizon.BlockerMissingCredential, f1.Blocker.Type)
	require.Contains(t, f1.Blocker.Evidence, "Incorrect API key provided")
	require.Equal(t, horizon.OutcomeBlocked, f1.Attempts[0].Outcome)
	require.Equal(t, horizon.StatusCompleted, s.Status, "once unblocked, the feature is tried again")
}

// An outage is retried without a cap; the run's time budget still ends a
// run stuck in one, as the budget, with the error it waited out.
func TestPlanOutageEndsAtTheBudget(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	down := errors.New("opencode session ses_1: APIError: Cannot connect to API")
	for range 200 {
		w.sessionErrs["f1"] = append(w.sessionErrs["f1"], down)
	}
	e := w.env()
	in := plannedInput()
	in.BudgetTime = 5 * time.Minute
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.StatusFailed, s.Status)
	require.Equal(t, horizon.ReasonBudget, s.ReasonKind, s.Reason)
	require.Contains(t, s.Reason, "time limit 5m0s reached")
	require.Contains(t, s.Reason, "Cannot connect to API")
	require.Greater(t, 200-len(w.sessionErrs["f1"]), 5, "the session was retried past the old cap of 5 tries")
	require.Empty(t, w.commits)
}

// A session that fails on its own content (its context overflowed) ends
// the attempt as a protocol error; the next attempt starts afresh.
func TestSessionFailureEndsTheAttempt(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.sessionErrs["f1"] = []error{temporal.NewNonRetryableApplicationError("opencode session ses_1: ContextOverflowError: prompt is too long", activities.ErrTypeSessionFailed, nil)}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, horizon.OutcomeProtocolError, f1.Attempts[0].Outcome)
	require.Contains(t, f1.Attempts[0].ProtocolError, "prompt is too long")
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[1].Outcome)
}

// metadata is what the Temporal Web UI shows of a workflow: its current
// details, the run's Markdown.
func metadata(t *testing.T, e *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	v, err := e.QueryWorkflow("__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

// A worker session that waits out an outage tells its run: the mocked
// activity fails twice on infrastructure and, as activities.AgentSession
// does, signals the run what it waits on before each failure returns.
// While the engine retries it, the run's Markdown has the waiting line
// (what, since when, the tries); once the activity returned, the line is
// gone, and the run completes as usual. (Each mocked call takes an hour
// of the test clock.)
func TestOutageShownInMarkdown(t *testing.T) {
	e := newEnv(t)
	since := time.Date(2026, 12, 1, 3, 12, 40, 0, time.UTC)
	worker := 0
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
			if in.Role == horizon.RoleAuditor {
				return accept, nil
			}
			worker++
			if worker < 3 {
				o := horizon.Outage{On: "model provider unreachable", Activity: "AgentSession", Since: since, Tries: worker, LastError: "connect ECONNREFUSED 127.0.0.1:4000"}
				e.SignalWorkflow(SignalOutage, activities.OutageReport{Outage: &o})
				return activities.SessionOutput{}, errors.New("opencode session ses_w: APIError: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:4000")
			}
			return satisfied, nil
		}).After(time.Hour)
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456", Branch: "horizon/run-1"}, nil).Once()
	var during, after horizon.RunState
	var duringMD, afterMD string
	// The worker's first try failed at 1h; its second runs until 2h.
	e.RegisterDelayedCallback(func() { during, duringMD = query(t, e.TestWorkflowEnvironment), metadata(t, e.TestWorkflowEnvironment) }, 90*time.Minute)
	// Its third returned at 3h; the auditor's session runs until 4h.
	e.RegisterDelayedCallback(func() { after, afterMD = query(t, e.TestWorkflowEnvironment), metadata(t, e.TestWorkflowEnvironment) }, 210*time.Minute)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, 3, worker)
	require.Len(t, s.Attempts, 1, "an outage is not an attempt")

	require.Equal(t, horizon.PhaseWorking, during.Phase)
	require.NotNil(t, during.Outage, "the run keeps what its activity reported")
	require.Equal(t, 1, during.Outage.Tries)
	require.Contains(t, duringMD, "**waiting** model provider unreachable since 03:12:40 (1 try): connect ECONNREFUSED 127.0.0.1:4000")

	require.Equal(t, horizon.PhaseAudit, after.Phase)
	require.Nil(t, after.Outage, "the activity returned: the wait is over")
	require.NotContains(t, afterMD, "**waiting**")
	require.Nil(t, s.Outage)
}

// A clear from the activity (an OutageReport without an outage) removes
// the line while the activity still runs: OpenCode got the model again.
func TestOutageClearedByItsActivity(t *testing.T) {
	e := newEnv(t)
	o := horizon.Outage{On: "OpenCode exited", Since: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Tries: 2, LastError: "opencode server exited"}
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
			if in.Role == horizon.RoleAuditor {
				return accept, nil
			}
			return satisfied, nil
		}).After(time.Hour)
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456", Branch: "horizon/run-1"}, nil).Once()
	var told, cleared string
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalOutage, activities.OutageReport{Outage: &o}) }, 10*time.Minute)
	e.RegisterDelayedCallback(func() { told = metadata(t, e.TestWorkflowEnvironment) }, 15*time.Minute)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalOutage, activities.OutageReport{}) }, 20*time.Minute)
	e.RegisterDelayedCallback(func() { cleared = metadata(t, e.TestWorkflowEnvironment) }, 25*time.Minute)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Contains(t, told, "**waiting** OpenCode exited since 03:00:00 (2 tries): opencode server exited")
	require.NotContains(t, cleared, "**waiting**")
}
