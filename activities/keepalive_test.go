package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// Outside an activity (a plain call, as in this package's tests) keepAlive
// does nothing.
func TestKeepAliveOutsideActivity(t *testing.T) {
	keepAlive(context.Background())()
}
