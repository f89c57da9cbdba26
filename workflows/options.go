package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// a is the activities' method set, called through a nil pointer: the
// worker registers the real struct.
var a *activities.Activities

// Limits bound the run's activities.
type Limits struct {
	SessionTimeout   time.Duration
	HeartbeatTimeout time.Duration
	GateTimeout      time.Duration
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

// Activity options, stated once. Agent sessions heartbeat their session ID:
// after a crash the retry continues that session. Bad input is never
// retried. Gate runs retry only on infrastructure errors (a red gate is a
// result, not an error).
func sessionOptions(l Limits, summary, queue string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: l.SessionTimeout,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // let the activity abort the OpenCode session
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel},
		},
	}
}

func gateOptions(l Limits, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: l.GateTimeout + time.Minute,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // the gate's process group is killed before the run ends
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumAttempts:        3,
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
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel, activities.ErrTypeNoChanges},
		},
	}
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
	if out == nil {
		return f.Get(actx, nil)
	}
	return f.Get(actx, out)
}
