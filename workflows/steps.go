package workflows

import (
	"errors"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// Local steps (changeLocalSteps). A planned feature's lane and commit and
// its run's plan.json take a few git commands or a file write each; as
// ordinary activities each cost the history three events and a workflow
// task, and the engine a round trip through the task queue, more than the
// step itself. As local activities they run inside the workflow task that
// asks for them (every horizon worker polls the run queue for workflows
// and activities alike) and leave one marker event. What runs there must
// be short and idempotent: a local activity whose worker dies is run
// again from the start by the next workflow task.

// localStepTimeout bounds one try of a local step. It runs inside a
// workflow task, which the worker keeps alive while it runs, so a slow git
// on a big repository (a worktree checkout of a large tree, a commit of a
// large change) must fit: generous, like gitOptions' 5 minutes and more.
const localStepTimeout = 10 * time.Minute

// madeBeforeLocalSteps are the changes a history that took
// changeLocalSteps takes as made, at these versions, without a marker of
// its own: every GetVersion costs the history a marker and a search
// attribute update, and a new history would take each at its newest
// anyway. Frozen: a later version of one of these changes takes a new
// change ID, never a higher version here.
var madeBeforeLocalSteps = map[string]workflow.Version{
	changeGateRecord:    1,
	changeThrottleRoles: 1,
	changeThrottleLead:  1,
	changeStallBackoff:  1,
	changeHandoff:       1,
	changeDropLanes:     1,
	changeNotify:        1,
	changeMilestoneRule: 1,
	changeResearchNotes: 1,
	changeResearchModel: 1,
	changeAskedBlocker:  1,
	changeQuickBrief:    1,
	changeDispositions:  1,
}

// version is workflow.GetVersion(ctx, id, DefaultVersion, maxSupported),
// save in a workflow whose history took changeLocalSteps, where the
// changes made before it are taken as made (madeBeforeLocalSteps).
func version(ctx workflow.Context, id string, maxSupported workflow.Version) workflow.Version {
	if s, ok := ctx.Value(statusKey{}).(*runStatus); ok && s.steps {
		if v, made := madeBeforeLocalSteps[id]; made {
			return v
		}
	}
	return workflow.GetVersion(ctx, id, workflow.DefaultVersion, maxSupported)
}

// takeLocalSteps decides, once at the start of a history, whether it runs
// its short steps locally (changeLocalSteps). A history recorded before
// replays with none of it: its first workflow task replays without the
// marker, and the answer holds for the whole history.
func (s *runStatus) takeLocalSteps(ctx workflow.Context) {
	s.steps = workflow.GetVersion(ctx, changeLocalSteps, workflow.DefaultVersion, 1) >= 1
}

// step runs one short git or file step under opts and waits for its
// result: a local activity in a history that took changeLocalSteps, else
// an ordinary one (execute).
func step(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	if s, ok := ctx.Value(statusKey{}).(*runStatus); !ok || !s.steps {
		return execute(ctx, opts, fn, in, out)
	}
	err := executeLocal(ctx, opts, fn, in, out)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ErrTypeCannotSee {
		// This worker cannot see the repository or the shared directory,
		// and a local step cannot move: the step goes to the task queue,
		// where a worker that sees them takes it (README: Running on a
		// cluster).
		return execute(ctx, opts, fn, in, out)
	}
	return err
}

// executeLocal runs fn as a local activity with opts' retry policy and
// bounds: a try is bounded by localStepTimeout, every try together by
// opts' schedule-to-close (the run's budget, budgeted). A worker that
// cannot see a shared path answers at once (no retry here; step hands
// the step on).
func executeLocal(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	lo := workflow.LocalActivityOptions{
		StartToCloseTimeout:    localStepTimeout,
		ScheduleToCloseTimeout: opts.ScheduleToCloseTimeout,
		Summary:                opts.Summary,
	}
	if opts.RetryPolicy != nil {
		rp := *opts.RetryPolicy
		rp.NonRetryableErrorTypes = append(slices.Clone(rp.NonRetryableErrorTypes), activities.ErrTypeCannotSee)
		lo.RetryPolicy = &rp
	}
	lctx := workflow.WithLocalActivityOptions(ctx, lo)
	var args []any
	if in != nil {
		args = append(args, in)
	}
	f := workflow.ExecuteLocalActivity(lctx, fn, args...)
	defer activityReturned(ctx)
	var err error
	if out == nil {
		err = f.Get(lctx, nil)
	} else {
		err = f.Get(lctx, out)
	}
	return budgetCut(err, lo)
}

// budgetCut says when a local activity ended because its schedule-to-close
// (the run's budget) left no time for another try: with no cap on
// attempts, a retryable error comes back only then. An ordinary activity
// says so with its retry state; a local one returns its last error, which
// becomes the schedule-to-close timeout overBudget reads.
func budgetCut(err error, lo workflow.LocalActivityOptions) error {
	if err == nil || lo.ScheduleToCloseTimeout <= 0 || lo.RetryPolicy == nil || lo.RetryPolicy.MaximumAttempts > 0 {
		return err
	}
	var te *temporal.TimeoutError
	var ce *temporal.CanceledError
	if errors.As(err, &te) || errors.As(err, &ce) {
		return err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && (app.NonRetryable() || slices.Contains(lo.RetryPolicy.NonRetryableErrorTypes, app.Type())) {
		return err
	}
	return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, err)
}
