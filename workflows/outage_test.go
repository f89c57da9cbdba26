package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	e.ExecuteWorkflow(RunWorkflow, plannedInput())
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
	e.ExecuteWorkflow(RunWorkflow, in)
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
	e.ExecuteWorkflow(RunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, horizon.OutcomeProtocolError, f1.Attempts[0].Outcome)
	require.Contains(t, f1.Attempts[0].ProtocolError, "prompt is too long")
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[1].Outcome)
}
