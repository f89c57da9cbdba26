package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// An activity with nothing to report outlives its heartbeat timeout only
// while keepAlive heartbeats for it; without, the engine declares it dead
// (and, after a daemon crash, retries it that soon).
func TestKeepAliveHeartbeatsForQuietActivity(t *testing.T) {
	for _, keep := range []bool{true, false} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		quiet := func(ctx context.Context) error {
			if keep {
				defer keepAlive(ctx)()
			}
			time.Sleep(time.Second)
			return nil
		}
		env.RegisterActivity(quiet)
		env.ExecuteWorkflow(func(ctx workflow.Context) error {
			ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				StartToCloseTimeout: time.Minute,
				HeartbeatTimeout:    300 * time.Millisecond,
				RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
			})
			return workflow.ExecuteActivity(ctx, quiet).Get(ctx, nil)
		})
		require.True(t, env.IsWorkflowCompleted())
		if keep {
			require.NoError(t, env.GetWorkflowError())
		} else {
			require.ErrorContains(t, env.GetWorkflowError(), "Heartbeat", "without keepAlive the quiet activity times out")
		}
	}
}

// Outside an activity (a plain call, as in this package's tests) a
// heartbeat records nothing, where the SDK's own call would panic: every
// use (keepAlive, details, Update, Record, Stop twice) is safe, and no
// beating goroutine is left to outlive the call.
func TestKeepAliveOutsideActivity(t *testing.T) {
	ctx := context.Background()
	require.Panics(t, func() { activity.RecordHeartbeat(ctx, "x") }, "the SDK panics outside an activity; the guard is what keeps callers safe")
	require.NotPanics(t, func() {
		keepAlive(ctx)()
		h := startHeartbeat(ctx, beatOptions{Details: "gate running"})
		h.Update("ses_1 thinking")
		h.Record("ses_1 done")
		h.Stop()
		h.Stop()
	})
	h := startHeartbeat(ctx, beatOptions{Details: "quiet"})
	h.Update("nudged")
	select {
	case <-h.nudge:
	default:
		t.Fatal("Update's nudge was taken: a beating goroutine runs outside an activity")
	}
	h.Stop()
}

// The heartbeat carries details: what a session reports (its ID) reaches
// the engine, a session with no ID yet beats nothing, and Record is seen
// before it returns.
func TestHeartbeatDetails(t *testing.T) {
	tests := []struct {
		name string
		act  func(ctx context.Context) error
		want []string // details seen, in order, deduplicated
	}{
		{"quiet activity beats bare", func(ctx context.Context) error {
			defer keepAlive(ctx)()
			time.Sleep(2 * time.Second)
			return nil
		}, []string{""}},
		{"fixed details", func(ctx context.Context) error {
			h := startHeartbeat(ctx, beatOptions{Details: "gate running"})
			defer h.Stop()
			time.Sleep(2 * time.Second)
			return nil
		}, []string{"gate running"}},
		{"only with details: silent until set, then the latest", func(ctx context.Context) error {
			h := startHeartbeat(ctx, beatOptions{OnlyWithDetails: true})
			time.Sleep(1200 * time.Millisecond) // over one beat interval (1 s), well under the timeout
			h.Update("ses_1 thinking")
			time.Sleep(2 * time.Second)
			h.Stop()
			h.Record("ses_1 done")
			// The SDK batches heartbeats within its throttle window (80% of
			// the timeout); stay until it flushed this one.
			time.Sleep(2500 * time.Millisecond)
			return nil
		}, []string{"ses_1 thinking", "ses_1 done"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var seen []string
			env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
				d := ""
				if details.HasValues() {
					require.NoError(t, details.Get(&d))
				}
				if len(seen) == 0 || seen[len(seen)-1] != d {
					seen = append(seen, d)
				}
			})
			env.RegisterActivityWithOptions(tc.act, activity.RegisterOptions{Name: "act"})
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
					StartToCloseTimeout: time.Minute,
					// Generous, so a loaded machine's late wake-ups do
					// not time the activity out.
					HeartbeatTimeout: 3 * time.Second,
					RetryPolicy:      &temporal.RetryPolicy{MaximumAttempts: 1},
				})
				return workflow.ExecuteActivity(ctx, "act").Get(ctx, nil)
			})
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, tc.want, seen)
		})
	}
}
