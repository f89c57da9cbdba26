package daemon

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// reads is a test workflow: one activity returning n bytes, retried with
// the engine's default policy (for ever), as horizon's reads are.
func reads(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 200 * time.Millisecond},
	})
	var text string
	if err := workflow.ExecuteActivity(ctx, "ReadBig", n).Get(ctx, &text); err != nil {
		return 0, err
	}
	return len(text), nil
}

// Against the real engine, a worker with PayloadGuard fails an activity
// whose result is over the limit once, not retried, with a message naming
// the activity and the sizes; a result under the limit goes through.
func TestPayloadGuardFailsOversizedResultsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	c := startTestEngine(t)
	var calls atomic.Int32
	w := worker.New(c, "payload", worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.PayloadGuard()}})
	w.RegisterWorkflow(reads)
	w.RegisterActivityWithOptions(func(_ context.Context, n int) (string, error) {
		calls.Add(1)
		return strings.Repeat("r", n), nil
	}, activity.RegisterOptions{Name: "ReadBig"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "payload"}, reads, 64<<10)
	require.NoError(t, err)
	var n int
	require.NoError(t, run.Get(ctx, &n))
	require.Equal(t, 64<<10, n)

	calls.Store(0)
	run, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "payload"}, reads, 3<<20)
	require.NoError(t, err)
	err = run.Get(ctx, nil)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "the workflow fails with the activity's error: %v", err)
	require.Equal(t, activities.ErrTypePayloadTooLarge, app.Type())
	require.Contains(t, app.Error(), "ReadBig: its result is 3.0 MiB, over the 1.0 MiB")
	require.Equal(t, int32(1), calls.Load(), "not retried")
}
