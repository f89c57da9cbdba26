package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

func input() SingleRunInput {
	return SingleRunInput{RunBase: RunBase{RunID: "run-1", Goal: "Make add.sh add", Repo: "/repo", BaseRef: "main", BaseCommit: "abc123", Model: "fake/m"}, MaxAttempts: 3}
}

// registerRuns registers the run workflows: both kinds and RunWorkflow,
// which dispatches to either.
func registerRuns(r interface{ RegisterWorkflow(any) }) {
	r.RegisterWorkflow(RunWorkflow)
	r.RegisterWorkflow(SingleRunWorkflow)
	r.RegisterWorkflow(PlannedRunWorkflow)
}

type env struct {
	*testsuite.TestWorkflowEnvironment
	briefs   []string
	handoffs []horizon.Status
	// dispositionBriefs are the lead's briefs to decide findings.
	dispositionBriefs []string
}

func newEnv(t *testing.T) *env {
	var s testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment()}
	registerRuns(e)
	e.RegisterActivity(&activities.Activities{})
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{Gate: ".horizon/verify.sh"}, nil).Maybe()
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lanes/run-1/f1", Branch: "horizon-lanes/run-1/f1"}, nil).Maybe()
	e.mockHandoff()
	return e
}

// sessions scripts the worker and auditor: one SessionOutput per call, in order.
func (e *env) sessions(worker []activities.SessionOutput, auditor []activities.SessionOutput) {
	w, au := 0, 0
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
			if in.Role == horizon.RoleAuditor {
				au++
				return auditor[au-1], nil
			}
			if in.Purpose == activities.PurposeDispositions {
				// The lead gives no valid answer: its findings are worked on.
				e.dispositionBriefs = append(e.dispositionBriefs, in.Prompt)
				return activities.SessionOutput{SessionID: "ses_lead", ProtocolError: "no ```horizon-dispositions block in the final message"}, nil
			}
			e.briefs = append(e.briefs, in.Prompt)
			w++
			return worker[w-1], nil
		})
}

func (e *env) gates(verdicts ...string) {
	i := 0
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
			if in.Attempt == 0 {
				return horizon.GateRun{Verdict: "fail", ExitCode: 1, Command: ".horizon/verify.sh", Failing: []string{"TestAdd"}, Tree: "base"}, nil
			}
			v := verdicts[i]
			i++
			code := 0
			if v != "pass" {
				code = 1
			}
			return horizon.GateRun{Verdict: v, ExitCode: code, Command: ".horizon/verify.sh", Tail: "FAIL add 2 3: want 5, got -1", Failing: failing[v], Tree: "tree-" + v}, nil
		})
}

var failing = map[string][]string{"fail": {"TestAdd"}}

var (
	satisfied = activities.SessionOutput{SessionID: "ses_w", Report: &horizon.Report{Status: "satisfied", Summary: "fixed"}, Usage: horizon.Usage{Input: 100, Output: 10, Cost: 0.01}}
	accept    = activities.SessionOutput{SessionID: "ses_a", Audit: &horizon.Audit{Verdict: "accept"}, Usage: horizon.Usage{Input: 50, Output: 5, Cost: 0.005}}
	reject    = activities.SessionOutput{SessionID: "ses_a", Audit: &horizon.Audit{Verdict: "reject", Findings: []horizon.Finding{{File: "tests/test_add.sh", Line: 3, Severity: "concern", Note: "test negative numbers"}}}}
)

func result(t *testing.T, e *env) (*horizon.RunState, error) {
	t.Helper()
	require.True(t, e.IsWorkflowCompleted())
	err := e.GetWorkflowError()
	if err == nil {
		var s horizon.RunState
		require.NoError(t, e.GetWorkflowResult(&s))
		return &s, nil
	}
	var s horizon.RunState
	var app *temporal.ApplicationError
	var canc *temporal.CanceledError
	switch {
	case errors.As(err, &app):
		require.NoError(t, app.Details(&s))
	case errors.As(err, &canc):
		require.NoError(t, canc.Details(&s))
	default:
		t.Fatalf("unexpected error %v", err)
	}
	return &s, err
}

func TestAcceptedFirstAttempt(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456", Branch: "horizon/run-1"}, nil).Once()
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, "def456", s.Commit)
	require.Equal(t, "horizon/run-1", s.Branch)
	require.Len(t, s.Attempts, 1)
	require.Equal(t, horizon.OutcomeAccepted, s.Attempts[0].Outcome)
	require.InDelta(t, 0.015, s.Usage.Cost, 1e-9)
	require.Equal(t, []horizon.Status{horizon.StatusCompleted}, e.handoffs, "the handoff is written once, with the final status")
	require.Equal(t, "/runs/run-1/handoff.md", s.Handoff)
	require.Equal(t, int64(165), s.Usage.Tokens())
}

func TestRejectionCarriesFindingToNextBrief(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied, satisfied}, []activities.SessionOutput{reject, accept})
	e.gates("pass", "pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Len(t, s.Attempts, 2)
	require.Equal(t, horizon.OutcomeRejected, s.Attempts[0].Outcome)
	require.Equal(t, horizon.OutcomeAccepted, s.Attempts[1].Outcome)
	require.Len(t, e.briefs, 2)
	require.NotContains(t, e.briefs[0], "test negative numbers")
	require.Contains(t, e.briefs[1], "[concern] tests/test_add.sh:3: test negative numbers")
	require.Len(t, e.dispositionBriefs, 1, "the lead was asked about the concern the rule left open")
	require.Equal(t, horizon.DispositionAcceptNow, s.Attempts[0].Dispositions[0].Kind, "without a valid answer a rejection's finding is worked on")
	require.Contains(t, e.briefs[1], "## Decision Brief")
}

func TestGateFailureAndProtocolErrorExhaustAttempts(t *testing.T) {
	e := newEnv(t)
	noBlock := activities.SessionOutput{SessionID: "ses_x", ProtocolError: "protocol_error: no ```horizon-report block in the final message"}
	e.sessions([]activities.SessionOutput{satisfied, noBlock, satisfied}, nil)
	e.gates("fail", "fail")
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.StatusFailed, s.Status)
	require.Equal(t, horizon.ReasonMaxAttempts, s.ReasonKind)
	require.Equal(t, []horizon.Outcome{horizon.OutcomeGateFailed, horizon.OutcomeProtocolError, horizon.OutcomeGateFailed}, outcomes(s))
	require.Nil(t, s.Attempts[1].Gate, "a protocol error is not gated")
	require.Contains(t, e.briefs[1], "FAIL add 2 3: want 5, got -1")
	require.Contains(t, e.briefs[2], "not accepted: protocol_error")
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app))
	require.Equal(t, FailureRunFailed, app.Type())
}

// A typed blocker with evidence pauses the run (status blocked, a handoff
// written) until a person unblocks it with a note, which the next attempt
// gets; a note-less or premature unblock is refused.
func TestTypedBlockerWaitsForUnblock(t *testing.T) {
	e := newEnv(t)
	blocked := activities.SessionOutput{SessionID: "ses_b", Report: &horizon.Report{Status: "blocked", Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "STRIPE_KEY is unset in the environment"}}}
	e.sessions([]activities.SessionOutput{blocked, satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	var waiting horizon.RunState
	var refused []error
	cb := func(name string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnReject: func(err error) { refused = append(refused, err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}
	}
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&waiting))
		e.UpdateWorkflow(UpdateUnblock, "no-note", cb("no-note"), Unblock{Feature: "f1"})
		e.UpdateWorkflow(UpdateUnblock, "ok", cb("ok"), Unblock{Feature: "f1", Note: "STRIPE_KEY added to the daemon's environment"})
	}, time.Hour)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusBlocked, waiting.Status)
	require.Equal(t, horizon.BlockerMissingCredential, waiting.Blocker.Type)
	require.Contains(t, waiting.Reason, "horizon unblock run-1 f1")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].Error(), "note is required")
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, horizon.OutcomeBlocked, s.Attempts[0].Outcome)
	require.Contains(t, e.briefs[1], "STRIPE_KEY added to the daemon's environment")
	require.Equal(t, []horizon.Status{horizon.StatusBlocked, horizon.StatusCompleted}, e.handoffs)
}

func TestBadInputIsNotRetried(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment()}
	registerRuns(e)
	e.RegisterActivity(&activities.Activities{})
	e.mockHandoff()
	calls := 0
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.PreflightInput) (activities.PreflightOutput, error) {
		calls++
		return activities.PreflightOutput{}, temporal.NewNonRetryableApplicationError("unknown model fake/nope; available: fake/fake-coder", activities.ErrTypeUnknownModel, nil)
	})
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	st, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, 1, calls)
	require.Equal(t, horizon.ReasonBadInput, st.ReasonKind)
	require.Contains(t, st.Reason, "unknown model fake/nope")
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app))
	require.Equal(t, FailureBadInput, app.Type())
}

func TestCancelDuringWorker(t *testing.T) {
	e := newEnv(t)
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.SessionInput) (activities.SessionOutput, error) {
		time.Sleep(50 * time.Millisecond)
		return satisfied, nil
	}).Maybe()
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(horizon.GateRun{Verdict: "fail", ExitCode: 1}, nil).Maybe()
	e.RegisterDelayedCallback(func() { e.CancelWorkflow() }, time.Millisecond)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.StatusCancelled, s.Status)
	require.Equal(t, []horizon.Status{horizon.StatusCancelled}, e.handoffs, "a cancelled run still gets its handoff")
}

func TestStatusQueryAndDetails(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil)
	var mid *horizon.RunState
	gates := 0
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name != "RunGate" {
			return
		}
		if gates++; gates != 2 { // the first is the baseline
			return
		}
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var s horizon.RunState
		require.NoError(t, v.Get(&s))
		mid = &s
	})
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	_, err := result(t, e)
	require.NoError(t, err)
	require.NotNil(t, mid)
	require.Equal(t, horizon.StatusRunning, mid.Status)
	require.Equal(t, horizon.PhaseGate, mid.Phase)
	require.Equal(t, "ses_w", mid.Attempts[0].WorkerSession)
	require.True(t, strings.HasPrefix(mid.Markdown(), "**running** · gate"))
}

func outcomes(s *horizon.RunState) []horizon.Outcome {
	var out []horizon.Outcome
	for _, at := range s.Attempts {
		out = append(out, at.Outcome)
	}
	return out
}

// Triggers come from receipts and snapshots only: two red gates with the
// same failing set and the same tree fire gate_red_twice, same_failing_set
// and identical_diff on the second attempt, and the third brief shows them.
func TestTriggersFromArtifacts(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied, satisfied, satisfied}, nil)
	e.gates("fail", "fail", "fail")
	in := input()
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.Error(t, err)
	require.NotNil(t, s.Baseline)
	require.Equal(t, []string{"TestAdd"}, s.Baseline.Failing)
	require.Empty(t, s.Attempts[0].Triggers, "the first attempt has nothing to compare with but the baseline, where TestAdd already failed")
	kinds := map[string]bool{}
	for _, tr := range s.Attempts[1].Triggers {
		kinds[tr.Kind] = true
	}
	require.True(t, kinds["gate_red_twice"], "%v", s.Attempts[1].Triggers)
	require.True(t, kinds["same_failing_set"], "%v", s.Attempts[1].Triggers)
	require.True(t, kinds["identical_diff"], "%v", s.Attempts[1].Triggers)
	require.False(t, kinds["regression"], "TestAdd failed in the baseline already")
	require.Contains(t, e.briefs[2], "Signals computed from the artifacts")
}

// Each role uses the model preflight resolved for it.
func TestRolesGetTheirModels(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment()}
	registerRuns(e)
	e.RegisterActivity(&activities.Activities{})
	e.mockHandoff()
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{
		Gate: ".horizon/verify.sh", Models: map[horizon.Role]string{horizon.RoleWorker: "p/coder", horizon.RoleAuditor: "p/reviewer"},
	}, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lane"}, nil)
	used := map[horizon.Role]string{}
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		used[in.Role] = in.Model
		if in.Role == horizon.RoleAuditor {
			return accept, nil
		}
		return satisfied, nil
	})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	in := input()
	in.Model = ""
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	st, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, map[horizon.Role]string{horizon.RoleWorker: "p/coder", horizon.RoleAuditor: "p/reviewer"}, used)
	require.Equal(t, "p/coder", st.Model)
	require.Equal(t, "p/coder", st.Attempts[0].Model)
}

// At its spend ceiling a run pauses (not fails) before the next attempt;
// an update that does not raise the ceiling above the spend is rejected;
// one that does lets the run go on.
func TestSpendCeilingPausesUntilRaised(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied, satisfied}, []activities.SessionOutput{accept})
	e.gates("fail", "pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	in := input()
	in.Ceiling = 0.005 // below one worker session's cost

	var paused *horizon.RunState
	var rejected error
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var s horizon.RunState
		require.NoError(t, v.Get(&s))
		paused = &s
		e.UpdateWorkflow(UpdateSetCeiling, "low", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected = err },
			OnAccept:   func() { t.Error("a ceiling below the spend was accepted") },
			OnComplete: func(any, error) {},
		}, 0.008)
		e.UpdateWorkflow(UpdateSetCeiling, "raise", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("raise rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, 1.0)
	}, time.Hour)
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.NotNil(t, paused)
	require.Equal(t, horizon.PhasePaused, paused.Phase)
	require.Contains(t, paused.Reason, "spend ceiling $0.0050 reached")
	require.Len(t, paused.Attempts, 1, "paused before the second attempt")
	require.Error(t, rejected)
	require.Contains(t, rejected.Error(), "not above what the run has spent")
	require.Equal(t, 1.0, s.Ceiling)
}

// activityQueue is the task queue an activity was scheduled on.
func activityQueue(ctx context.Context) string {
	return activity.GetInfo(ctx).TaskQueue
}

// A worker that claims to be blocked without a typed blocker and real
// evidence does not stop the run: the gate still decides.
func TestVagueBlockerDoesNotStopTheRun(t *testing.T) {
	e := newEnv(t)
	vague := activities.SessionOutput{SessionID: "ses_v", Report: &horizon.Report{Status: "blocked", Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "blocked"}}}
	e.sessions([]activities.SessionOutput{vague}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Contains(t, s.Attempts[0].Report.Summary, "blocker not accepted")
}

// mockHandoff records the state handed to WriteHandoff (never writes files).
func (e *env) mockHandoff() {
	e.OnActivity(a.WriteHandoff, mock.Anything, mock.Anything).Return(func(_ context.Context, st horizon.RunState) (activities.HandoffOutput, error) {
		e.handoffs = append(e.handoffs, st.Status)
		return activities.HandoffOutput{Path: "/runs/" + st.RunID + "/handoff.md"}, nil
	}).Maybe()
}

// A paused run holds before its next attempt until resumed.
func TestPauseHoldsBeforeNextAttempt(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied, satisfied}, []activities.SessionOutput{reject, accept})
	e.gates("pass", "pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	noop := &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	var held horizon.RunState
	e.RegisterDelayedCallback(func() { e.UpdateWorkflow(UpdatePause, "p", noop) }, 0)
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&held))
		e.UpdateWorkflow(UpdateResume, "r", noop)
	}, time.Hour)
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.True(t, held.Paused)
	require.Equal(t, horizon.PhasePaused, held.Phase)
	require.Empty(t, held.Attempts, "paused before the first attempt")
	require.False(t, s.Paused)
	require.Equal(t, horizon.StatusCompleted, s.Status)
}
