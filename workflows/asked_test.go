package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
)

var (
	askEnv      = horizon.Ask{Kind: horizon.AskPermission, Text: "read: /lanes/run-1/f1/.env"}
	askDatabase = horizon.Ask{Kind: horizon.AskQuestion, Text: "Which database should the cache use?"}
)

// workerAsked is a worker's session that asked for something and went on.
func workerAsked(status horizon.ReportStatus, asks ...horizon.Ask) activities.SessionOutput {
	out := activities.SessionOutput{SessionID: "ses_q", Report: &horizon.Report{Status: status, Summary: "went on without it"}, Asked: asks}
	if status == horizon.ReportBlocked {
		out.Report.Blocker = &horizon.Blocker{Type: "permission", Evidence: "I was not allowed to do what I needed"}
	}
	return out
}

// runUntilBlocked runs a one-feature run whose workers answer in order,
// and returns the state it waits blocked in (zero if it never did), the
// final state and the notifications sent. A blocked run is unblocked with
// a note; the next worker goes on.
func runUntilBlocked(t *testing.T, worker []activities.SessionOutput, gates ...string) (waiting horizon.RunState, final *horizon.RunState, told *sent) {
	t.Helper()
	e := newEnv(t)
	told = &sent{}
	told.capture(e.TestWorkflowEnvironment)
	e.sessions(worker, []activities.SessionOutput{accept, accept, accept})
	e.gates(gates...)
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var s horizon.RunState
		require.NoError(t, v.Get(&s))
		if s.Status != horizon.StatusBlocked {
			return
		}
		waiting = s
		e.UpdateWorkflow(UpdateUnblock, "ok", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}},
			Unblock{Feature: "f1", Note: "the cache uses sqlite; .env is not needed"})
	}, time.Hour)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	final, err := result(t, e)
	require.NoError(t, err)
	return waiting, final, told
}

// Asked once, the request is recorded on the attempt and the run goes on:
// one question may be answered by the next attempt's own judgement.
func TestAskedOnceIsRecordedNotBlocked(t *testing.T) {
	waiting, s, told := runUntilBlocked(t, []activities.SessionOutput{workerAsked(horizon.ReportContinue, askEnv), satisfied}, "fail", "pass")
	require.Empty(t, waiting.Status, "never blocked")
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []horizon.Ask{askEnv}, s.Attempts[0].Asked)
	require.Equal(t, horizon.OutcomeGateFailed, s.Attempts[0].Outcome)
	require.Empty(t, s.Attempts[1].Asked)
	require.Empty(t, told.find(notify.FeatureBlocked).Kind)
}

// The same request on a second attempt blocks the feature with a typed
// blocker (permission_denied for a permission, needs_decision for a
// question) that carries the request, and a person is told.
func TestAskedAgainBlocks(t *testing.T) {
	for _, tc := range []struct {
		ask  horizon.Ask
		want horizon.BlockerType
	}{{askEnv, horizon.BlockerPermissionDenied}, {askDatabase, horizon.BlockerNeedsDecision}} {
		t.Run(string(tc.want), func(t *testing.T) {
			waiting, s, told := runUntilBlocked(t, []activities.SessionOutput{
				workerAsked(horizon.ReportContinue, tc.ask), workerAsked(horizon.ReportContinue, tc.ask), satisfied,
			}, "fail", "pass")
			require.Equal(t, horizon.StatusBlocked, waiting.Status)
			require.Equal(t, tc.want, waiting.Blocker.Type)
			require.Contains(t, waiting.Blocker.Evidence, tc.ask.Text)
			require.Contains(t, waiting.Blocker.Evidence, "attempts 1, 2")
			require.Len(t, waiting.Attempts, 2, "blocked at once on attempt 2: not gated, not retried")
			require.Equal(t, horizon.OutcomeBlocked, waiting.Attempts[1].Outcome)
			require.Nil(t, waiting.Attempts[1].Gate)
			ev := told.find(notify.FeatureBlocked)
			require.Equal(t, string(tc.want), ev.Details["blocker"])
			require.Contains(t, ev.Text, tc.ask.Text)
			require.Equal(t, horizon.StatusCompleted, s.Status, "unblocked with a note, the next attempt finishes")
		})
	}
}

// A worker that asked and then reports blocked is blocked on what it
// asked, at once, even when its own blocker is one a worker may not claim.
func TestAskedAndReportedBlockedBlocks(t *testing.T) {
	waiting, _, told := runUntilBlocked(t, []activities.SessionOutput{workerAsked(horizon.ReportBlocked, askEnv, askDatabase), satisfied}, "pass")
	require.Equal(t, horizon.StatusBlocked, waiting.Status)
	require.Equal(t, horizon.BlockerNeedsDecision, waiting.Blocker.Type, "the question is what a person must answer")
	require.Contains(t, waiting.Blocker.Evidence, askDatabase.Text)
	require.Len(t, waiting.Attempts, 1)
	require.Equal(t, []horizon.Ask{askEnv, askDatabase}, waiting.Attempts[0].Asked)
	require.Equal(t, string(horizon.BlockerNeedsDecision), told.find(notify.FeatureBlocked).Details["blocker"])
}
