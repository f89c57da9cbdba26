package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// A stuck feature slows down instead of burning money (horizon/backoff.go
// says when a feature is stalled, how long it waits and when it blocks;
// this file only waits and blocks). Before each attempt a feature judges
// its own attempts: stalled, it waits on a durable timer (the wait keeps
// its place across crashes and continue-as-new, since the wake time is
// the last attempt's end plus the delay) that a person's pause, unblock
// or cancel and the budget's deadline cut short; after
// run.stall_block_after attempts while stalled it ends as a typed
// blocker, horizon.BlockerStalled, which its run hands a person while
// independent features go on.

// changeStallBackoff makes a stalled feature back off and block.
// Histories recorded before it replay without the waits.
const changeStallBackoff = "stall-backoff"

// stallState is a feature's stall bookkeeping.
type stallState struct {
	// on says this history backs off (changeStallBackoff); checked once.
	on, checked bool
	// since is the last progress the run or a person brought (an
	// accepted sibling, an unblock): attempts before it do not count.
	since time.Time
	// unblocks counts a person's unblocks of this feature while it backed
	// off, as the run's control says (Control.Unblocks).
	unblocks int
	// waiting is the backoff waited out before the next attempt, nil
	// once that attempt starts.
	waiting *horizon.Backoff
}

// backOff runs before each attempt: a stalled feature waits until its
// next attempt is due (waited: the caller looks at pause, budget and
// ceilings again), or ends blocked as stalled (res).
func (f *featureRun) backOff(ctx workflow.Context) (waited bool, res *FeatureResult, err error) {
	if !f.stall.checked {
		f.stall.checked = true
		f.stall.on = version(ctx, changeStallBackoff, 1) >= 1
	}
	if !f.stall.on {
		return false, nil, nil
	}
	st, id, policy := &f.s.state, f.changeLoop.job.id, f.in.Stall.WithDefaults()
	v := policy.Judge(id, st.Attempts, f.stall.since)
	if v.Stall == nil {
		return false, nil, nil
	}
	if v.Block {
		b, berr := v.Blocker(id, policy)
		if berr != nil {
			return false, nil, fmt.Errorf("stalled blocker of %s: %w", id, berr)
		}
		f.blocked = &b
		f.res.Blocker = &b
		return false, f.result(FeatureOutcomeBlocked, fmt.Sprintf("blocked (%s): %s", b.Type, b.Evidence)), nil
	}
	now := workflow.Now(ctx)
	if !now.Before(v.Until) {
		return false, nil, nil
	}
	wait := v.Until.Sub(now)
	if d := f.changeLoop.deadline; !d.IsZero() {
		if left := d.Sub(now); left < wait {
			wait = max(left, time.Millisecond)
		}
	}
	bo := v.Backoff(id, policy)
	f.stall.waiting, st.Backoff = bo, bo
	f.tellBackoff(ctx, bo)
	seen := f.stall.unblocks
	err = f.s.waitIn(ctx, horizon.PhaseBackoff, bo.Line(), func() bool { return st.Paused || f.stall.unblocks != seen }, wait)
	st.Backoff = nil // f.stall.waiting stays until the next attempt, for the budget's reason
	if err != nil {
		return false, nil, err
	}
	f.tellBackoff(ctx, nil)
	return true, nil, nil
}

// tellBackoff shows the backoff (nil: its end) in the run's status.
func (f *featureRun) tellBackoff(ctx workflow.Context, bo *horizon.Backoff) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil {
		return
	}
	workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalProgress, Progress{Feature: f.changeLoop.job.id, Backoff: bo})
}

// unblocked takes a person's unblock of this feature while it backs off
// (the run's control counts them): the wait ends, the stall is judged
// afresh from now, and the note goes to the next attempt.
func (f *featureRun) unblocked(ctx workflow.Context, c Control) {
	if c.Unblocks <= f.stall.unblocks {
		return
	}
	f.stall.unblocks, f.stall.since = c.Unblocks, workflow.Now(ctx)
	if c.Note != "" {
		f.note = fmt.Sprintf("A person unblocked this feature. Their note: %s", c.Note)
	}
}

// budgetContext says what the feature was doing when the budget ran out, for
// the stop's reason: only what is recorded, so a run that was not
// waiting out an outage never says it was.
func (f *featureRun) budgetContext(err error) string {
	if o := f.s.waitedOut; o != nil {
		return " while waiting out an outage: " + o.Line()
	}
	if bo := f.stall.waiting; bo != nil {
		return fmt.Sprintf(" while %s backed off, stalled (%d of %d attempts while stalled)", bo.Feature, bo.Stalled, bo.BlockAfter)
	}
	if err == nil {
		return ""
	}
	var ae *temporal.ActivityError
	if errors.As(err, &ae) {
		return fmt.Sprintf("; it cut off the running %s (%s)", ae.ActivityType().GetName(), rootCause(err))
	}
	return "; " + rootCause(err)
}

// rootCause is the innermost error's message.
func rootCause(err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err.Error()
}
