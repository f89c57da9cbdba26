package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// a is the activities' method set, called through a nil pointer: the
// worker registers the real struct.
var a *activities.Activities

// Limits bound the run's activities.
type Limits struct {
	SessionTimeout   time.Duration
	HeartbeatTimeout time.Duration
	GateTimeout      time.Duration
	// GateProtected is gate.protected: globs of paths a worker may not
	// change (nil: horizon.DefaultGateProtected).
	GateProtected []string `json:",omitempty"`
	// Advisor is the advisor.* configuration of the run's watchdog.
	Advisor activities.AdvisorSettings `json:",omitzero"`
	// GateCommands are gate.test_command and gate.lint_command: the
	// preflight records them in the run's gate record, and each is a part
	// of the gate with its own GateTimeout.
	GateCommands horizon.GateCommands `json:",omitzero"`
	// Specialists offers the repository's own specialists to its workers
	// (specialists.trust_project); nil: the repository is not trusted.
	// Its Repo is each run's own.
	Specialists *activities.ProjectSpecialists `json:",omitempty"`
}

// gateParts is how many parts, each capped at GateTimeout, a gate run
// may have: the script and each configured command.
func (l Limits) gateParts() int {
	n := 1
	if l.GateCommands.Test != "" {
		n++
	}
	if l.GateCommands.Lint != "" {
		n++
	}
	return n
}

func (l Limits) withDefaults() Limits {
	if l.SessionTimeout <= 0 {
		l.SessionTimeout = 45 * time.Minute
	}
	if l.HeartbeatTimeout <= 0 {
		l.HeartbeatTimeout = 30 * time.Second
	}
	if l.GateTimeout <= 0 {
		l.GateTimeout = 10 * time.Minute
	}
	return l
}

// outageBackoff is the longest wait between two tries of an activity
// that keeps failing on infrastructure.
const outageBackoff = 10 * time.Minute

// Activity options, stated once. Outages wait, they do not fail: an
// activity that fails on infrastructure (the model provider unreachable or
// answering 5xx, OpenCode exiting, a full disk, a locked git index, an
// engine hiccup) is retried without a cap, backing off to outageBackoff,
// until it passes or the run's budget ends it (budgeted). What waiting
// cannot fix is a non-retryable error type: bad input, an unknown model, a
// provider's refusal (the loop makes it a typed blocker), a session that
// failed on its own content (the loop ends the attempt).
//
// Agent sessions heartbeat their session ID: after a crash the retry
// continues that session. Gate runs retry only on infrastructure errors
// (a red gate is a result, not an error). Replay does not compare activity
// options, so runs in flight take the new policy as they go.
func sessionOptions(l Limits, summary, queue string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: l.SessionTimeout,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // let the activity abort the OpenCode session
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    outageBackoff,
			MaximumAttempts:    0, // until it passes or the budget ends it
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel,
				activities.ErrTypeProviderRefused, activities.ErrTypeSessionFailed},
		},
	}
}

func gateOptions(l Limits, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: l.GateTimeout*time.Duration(l.gateParts()) + time.Minute,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // the gate's process group is killed before the run ends
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        outageBackoff,
			MaximumAttempts:        0,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput},
		},
	}
}

// gitHeartbeat is the heartbeat timeout of the activities under
// gitOptions: they heartbeat while they run (activities.keepAlive), so a
// daemon that dies during one (a lane commit, plan.json) has it retried
// after this, not after the whole start-to-close timeout. Replay does not
// compare activity options, so runs in flight are unaffected.
const gitHeartbeat = 30 * time.Second

func gitOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    gitHeartbeat,
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        outageBackoff,
			MaximumAttempts:        0,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel, activities.ErrTypeNoChanges},
		},
	}
}

// budgeted bounds an activity, all its retries included, by the run's
// deadline (zero: none): an outage that outlasts the budget ends with a
// schedule-to-close timeout, which the feature reports as the budget
// (overBudget). The bound is an activity option, not a timer, so the
// workflow issues the same commands as before and recorded histories
// replay.
func budgeted(ctx workflow.Context, deadline time.Time, o workflow.ActivityOptions) workflow.ActivityOptions {
	if deadline.IsZero() {
		return o
	}
	o.ScheduleToCloseTimeout = max(deadline.Sub(workflow.Now(ctx)), time.Second)
	return o
}

// overBudget reports whether err is an activity cut off by budgeted at
// deadline: a schedule-to-close timeout, or a retryable failure returned
// because the next try would fall after the deadline (the server says
// RETRY_STATE_TIMEOUT; with no cap on attempts nothing else returns a
// retryable failure, so one that comes back within the last backoff
// before the deadline is the budget's cut).
func overBudget(ctx workflow.Context, deadline time.Time, err error) bool {
	if deadline.IsZero() || err == nil {
		return false
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE {
		// An activity's, or a local step's (budgetCut: a local activity's
		// error comes without an ActivityError around it).
		return true
	}
	var ae *temporal.ActivityError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.RetryState() == enumspb.RETRY_STATE_TIMEOUT {
		return true
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.NonRetryable() {
		return false
	}
	return !workflow.Now(ctx).Before(deadline.Add(-outageBackoff))
}

// execute runs one activity under opts and waits for its result (out may
// be nil when the result does not matter; in nil when it takes none).
func execute(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	actx := workflow.WithActivityOptions(ctx, opts)
	var args []any
	if in != nil {
		args = append(args, in)
	}
	f := workflow.ExecuteActivity(actx, fn, args...)
	defer activityReturned(ctx)
	if out == nil {
		return f.Get(actx, nil)
	}
	return f.Get(actx, out)
}
