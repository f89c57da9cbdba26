package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// runStatus is a workflow's horizon.RunState and how it is shown: the
// Markdown details in the Temporal UI, the HorizonStatus search attribute,
// the handoff. Every workflow type owns one; every wait goes through
// waitIn, so a waiting run always says where and why it waits.
type runStatus struct {
	state horizon.RunState
	// index says the namespace has HorizonStatus: keep it current.
	index bool
	// indexed is the status last written to HorizonStatus.
	indexed horizon.Status
	// supervisor, when set, is told every status change (told is the
	// last status it was told).
	supervisor string
	told       horizon.Status
	// spendTold is the spend pause last notified (notifySpend).
	spendTold string
	// waitedOut is the outage the last activity that returned waited out
	// (nil: none was recorded), so a budget's stop names an outage only
	// when there was one.
	waitedOut *horizon.Outage
	// steps says the history took changeLocalSteps (takeLocalSteps): its
	// short git and file steps run as local activities (step).
	steps bool
}

// phase moves the run to phase p and shows it.
func (s *runStatus) phase(ctx workflow.Context, p horizon.Phase) {
	s.state.Phase = p
	s.publish(ctx)
}

// publish refreshes the run's Markdown in the Temporal UI, and its
// HorizonStatus search attribute when the status changed.
func (s *runStatus) publish(ctx workflow.Context) {
	s.state.UpdatedAt = workflow.Now(ctx)
	workflow.SetCurrentDetails(ctx, s.state.Markdown())
	if s.index && s.state.Status != s.indexed {
		if err := workflow.UpsertTypedSearchAttributes(ctx, SearchStatus.ValueSet(string(s.state.Status))); err != nil {
			workflow.GetLogger(ctx).Warn("upsert HorizonStatus", "Error", err)
		}
		s.indexed = s.state.Status
	}
	if s.supervisor != "" && s.state.Status != s.told {
		s.tell(ctx)
	}
}

// tell signals the run's supervisor its new status. Not awaited: a
// supervisor that is gone (stopped) must not hold or fail the run; it
// catches up from the run's state when it comes back.
//
// A run's last status is awaited: the engine drops a signal whose sender
// has closed before it was delivered.
func (s *runStatus) tell(ctx workflow.Context) {
	s.told = s.state.Status
	f := workflow.SignalExternalWorkflow(ctx, s.supervisor, "", SignalRunStatus, RunStatusSignal{
		RunID: s.state.RunID, Status: s.state.Status, Reason: s.state.Reason,
	})
	if s.state.Status.Terminal() && s.state.Status != horizon.StatusBlocked {
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("tell the supervisor", "Supervisor", s.supervisor, "Error", err)
		}
	}
}

// waitIn is every wait of a run: it shows the run in phase with reason,
// waits until the condition holds, then puts the phase back and shows the
// run going on. A blocked run also gets its handoff before it waits, so
// whoever must act sees what and why, and reads running again after.
// within bounds the wait (0: until the budget's deadline, if there is one;
// the caller's next check turns a passed deadline into the stop).
func (s *runStatus) waitIn(ctx workflow.Context, phase horizon.Phase, reason string, until func() bool, within time.Duration) error {
	st := &s.state
	saved := st.Phase
	st.Phase, st.Reason = phase, reason
	if st.Status == horizon.StatusBlocked {
		s.writeHandoff(ctx)
	}
	s.publish(ctx)
	if err := s.await(ctx, until, within); err != nil {
		return err
	}
	st.Phase, st.Reason = saved, ""
	if st.Status == horizon.StatusBlocked {
		st.Blocker, st.Status, st.ReasonKind = nil, horizon.StatusRunning, ""
	}
	s.publish(ctx)
	return nil
}

// await waits for cond, at most within, or (within 0) until the budget's
// deadline passes.
func (s *runStatus) await(ctx workflow.Context, cond func() bool, within time.Duration) error {
	if within > 0 {
		_, err := workflow.AwaitWithTimeout(ctx, within, cond)
		return err
	}
	b := s.state.Budget
	if b == nil || b.Deadline.IsZero() {
		return workflow.Await(ctx, cond)
	}
	left := b.Deadline.Sub(workflow.Now(ctx))
	if left <= 0 {
		return nil
	}
	_, err := workflow.AwaitWithTimeout(ctx, left, cond)
	return err
}

// holdIfPaused waits while a person has paused the run (or, with a
// budget, until its deadline).
func (s *runStatus) holdIfPaused(ctx workflow.Context) error {
	st := &s.state
	if !st.Paused {
		return nil
	}
	reason := fmt.Sprintf("paused by `horizon pause`; `horizon resume %s` lets it go on", st.RunID)
	return s.waitIn(ctx, horizon.PhasePaused, reason, func() bool { return !st.Paused }, 0)
}

// handoff writes runs/<run>/handoff.md at the end of a run and tells a
// person how it ended (notify.RunEnded, with the handoff's path). Every
// way a run ends comes through here. It never changes how a run ends: a
// failure to write or send is logged and the state says so.
func (s *runStatus) handoff(ctx workflow.Context) {
	s.writeHandoff(ctx)
	if s.state.Status.Terminal() {
		s.notifyEnded(ctx)
	}
}

// writeHandoff writes runs/<run>/handoff.md: at the end, and for a run
// that waits blocked, for the person who must act.
func (s *runStatus) writeHandoff(ctx workflow.Context) {
	if version(ctx, changeHandoff, 1) < 1 {
		return
	}
	var out activities.HandoffOutput
	if err := step(ctx, gitOptions("handoff"), a.WriteHandoff, s.state, &out); err != nil {
		workflow.GetLogger(ctx).Warn("handoff not written", "Error", err)
		return
	}
	s.state.Handoff = out.Path
}

// dropLanes removes the run's lanes and lane branches (never its
// integration branch, the result): a completed run's in finish, before
// anyone can see it completed; one that did not complete at its end when
// run.keep_failed_lanes is 0 (runKind), else `horizon gc` later. It
// never changes how the run ends: a failure is logged, and gc finds what
// is left.
func (s *runStatus) dropLanes(ctx workflow.Context) {
	if version(ctx, changeDropLanes, 1) < 1 {
		return
	}
	removeLanes(ctx, s.state.RunID, s.state.Repo)
}

// removeLanes removes the lanes and lane branches of runID, even when ctx
// is cancelled; a failure is logged (gc finds what is left).
func removeLanes(ctx workflow.Context, runID, repo string) {
	if ctx.Err() != nil {
		// Cancelled: the cleanup must still run.
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	in := activities.RemoveLanesInput{RunID: runID, Repo: repo}
	if err := step(ctx, gitOptions("remove lanes"), a.RemoveLanes, in, nil); err != nil {
		workflow.GetLogger(ctx).Warn("lanes not removed", "RunID", runID, "Error", err)
	}
}

// finish ends a run that got its change (or, blocked, hands it over).
func (s *runStatus) finish(ctx workflow.Context) (*horizon.RunState, error) {
	st := &s.state
	if st.Status == horizon.StatusBlocked {
		s.handoff(ctx)
		return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
	}
	s.dropLanes(ctx)
	st.End(horizon.StatusCompleted, "", "", workflow.Now(ctx))
	s.handoff(ctx)
	s.publish(ctx)
	return st, nil
}

// end closes the run as failed with kind and reason and hands it over.
func (s *runStatus) end(ctx workflow.Context, kind horizon.ReasonKind, reason string) (*horizon.RunState, error) {
	st := &s.state
	st.End(horizon.StatusFailed, kind, reason, workflow.Now(ctx))
	s.handoff(ctx)
	s.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
}

// fail ends the run after an activity error: cancellation, bad input or an
// error that outlived its retries.
func (s *runStatus) fail(ctx workflow.Context, err error) (*horizon.RunState, error) {
	st := &s.state
	if c := st.Current(); c != nil && c.Outcome == horizon.OutcomeRunning {
		c.Outcome = ""
	}
	var blocked *temporal.ApplicationError
	if errors.As(err, &blocked) && blocked.Type() == FailureRunBlocked {
		s.handoff(ctx)
		return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || temporal.IsCanceledError(err) || ctx.Err() != nil {
		st.End(horizon.StatusCancelled, horizon.ReasonCancelled, "cancelled", workflow.Now(ctx))
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		s.handoff(dctx)
		s.publish(dctx)
		return nil, temporal.NewCanceledError(*st)
	}
	var app *temporal.ApplicationError
	kind, typ := horizon.ReasonError, FailureRunFailed
	if errors.As(err, &app) && (app.Type() == activities.ErrTypeBadInput || app.Type() == activities.ErrTypeUnknownModel) {
		kind, typ = horizon.ReasonBadInput, FailureBadInput
	}
	st.End(horizon.StatusFailed, kind, rootMessage(err), workflow.Now(ctx))
	s.handoff(ctx)
	s.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, typ, nil, *st)
}

// rootMessage digs the activity's own message out of Temporal's wrapping.
func rootMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return "timed out: " + to.Error()
	}
	return err.Error()
}
