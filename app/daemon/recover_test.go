package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/app/engine"
)

func TestOrphanedBy(t *testing.T) {
	const self = "horizon@box:100"
	dead := func(int) bool { return false }
	alive := func(int) bool { return true }
	tests := []struct {
		name   string
		holder string
		alive  func(int) bool
		want   bool
	}{
		{"a dead daemon of this machine", "horizon@box:42", dead, true},
		{"its paid-queue worker", "horizon@box:42/paid", dead, true},
		{"a live horizon process of this machine", "horizon@box:42", alive, false},
		{"this process", self, dead, false},
		{"this process's paid worker", self + "/paid", dead, false},
		{"a pid that this one's is a prefix of", "horizon@box:1000", dead, true},
		{"another machine", "horizon@other:42", dead, false},
		{"not horizon's", "12345@box@", dead, false},
		{"no pid", "horizon@box:", dead, false},
		{"no identity", "", dead, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, orphanedBy(tt.holder, self, tt.alive))
		})
	}
}

func TestProcessAlive(t *testing.T) {
	require.True(t, processAlive(os.Getpid()))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, processAlive(cmd.ProcessState.Pid()), "an exited, reaped process")
}

// startTestEngine starts an embedded engine for the test and returns a
// client of it; both stop with the test.
func startTestEngine(t *testing.T) client.Client {
	t.Helper()
	dir := t.TempDir()
	emb, err := engine.StartEmbedded(engine.Options{DBPath: filepath.Join(dir, "temporal.db"), Port: testPort(t),
		Namespace: "default", Retention: 24 * time.Hour, Logger: zerolog.Nop()})
	require.NoError(t, err)
	t.Cleanup(emb.Stop)
	tok, err := engine.ReadToken(emb.TokenPath())
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: emb.FrontendAddress(), Credentials: client.NewAPIKeyStaticCredentials(tok),
		ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}, Logger: quietLog{}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// held is a test workflow: it runs n activities on the queue "acts" at
// once, each trusted for ten minutes of silence, so that only a hand-back
// retries one within the test's time.
func held(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: "acts", StartToCloseTimeout: time.Hour, HeartbeatTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond},
	})
	var fs []workflow.Future
	for i := range n {
		fs = append(fs, workflow.ExecuteActivity(ctx, "Session", i))
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// A restarted daemon hands back, against the real engine, the started
// activities a dead horizon process held, whatever the workflow's type,
// with their heartbeat details and at once (their heartbeat timeout is ten
// minutes); the activities of this process, of a live process and of
// another machine stay where they are.
func TestHandBackOrphanedActivities(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	c := startTestEngine(t)
	w := worker.New(c, "wf", worker.Options{})
	// Types the daemon once did not look at: a planned run's feature and
	// the nightly decomposition.
	w.RegisterWorkflowWithOptions(held, workflow.RegisterOptions{Name: "FeatureWorkflow"})
	w.RegisterWorkflowWithOptions(held, workflow.RegisterOptions{Name: "DecomposeWorkflow"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for id, typ := range map[string]string{"run.f1": "FeatureWorkflow", "sup-decompose": "DecomposeWorkflow"} {
		n := 3
		if typ == "DecomposeWorkflow" {
			n = 2
		}
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "wf"}, typ, n)
		require.NoError(t, err)
	}

	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	deadPID := gone.ProcessState.Pid()
	self := fmt.Sprintf("horizon@box:%d", os.Getpid())
	holders := []string{
		fmt.Sprintf("horizon@box:%d", deadPID),      // the dead daemon
		fmt.Sprintf("horizon@box:%d/paid", deadPID), // its paid-queue worker
		fmt.Sprintf("horizon@box:%d", os.Getppid()), // a live horizon worker
		self, // this daemon
		fmt.Sprintf("horizon@elsewhere:%d", deadPID), // another machine's
	}
	// Start the five activities under those identities, as their workers
	// would have; the dead daemon's session heartbeats its session ID.
	type key struct{ wf, act string }
	holderOf := map[key]string{}
	orphans := map[key]bool{}
	dc := converter.GetDefaultDataConverter()
	for i, h := range holders {
		task, err := c.WorkflowService().PollActivityTaskQueue(ctx, &workflowservice.PollActivityTaskQueueRequest{
			Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: "acts"}, Identity: h,
		})
		require.NoError(t, err)
		require.NotEmpty(t, task.GetTaskToken(), "activity %d was never dispatched", i)
		k := key{task.GetWorkflowExecution().GetWorkflowId(), task.GetActivityId()}
		holderOf[k] = h
		if i < 2 {
			orphans[k] = true
			details, err := dc.ToPayloads("ses_" + k.wf + "_" + k.act)
			require.NoError(t, err)
			_, err = c.WorkflowService().RecordActivityTaskHeartbeat(ctx, &workflowservice.RecordActivityTaskHeartbeatRequest{
				Namespace: "default", TaskToken: task.GetTaskToken(), Details: details, Identity: h,
			})
			require.NoError(t, err)
		}
	}

	handed, err := HandBackOrphanedActivities(ctx, c, "default", self, zerolog.Nop())
	require.NoError(t, err)
	require.Equal(t, 2, handed)

	// The two come back at once, on their second attempt, carrying the
	// details they heartbeated.
	for range orphans {
		pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
		task, err := c.WorkflowService().PollActivityTaskQueue(pctx, &workflowservice.PollActivityTaskQueueRequest{
			Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: "acts"}, Identity: self,
		})
		pcancel()
		require.NoError(t, err)
		require.NotEmpty(t, task.GetTaskToken(), "a handed-back activity was not retried within 30s")
		k := key{task.GetWorkflowExecution().GetWorkflowId(), task.GetActivityId()}
		require.True(t, orphans[k], "retried %v, held by %s", k, holderOf[k])
		delete(orphans, k)
		require.EqualValues(t, 2, task.GetAttempt())
		var details string
		require.NoError(t, dc.FromPayloads(task.GetHeartbeatDetails(), &details))
		require.Equal(t, "ses_"+k.wf+"_"+k.act, details)
	}

	// The other three are still started by their holders.
	still := map[string]bool{}
	for _, wf := range []string{"run.f1", "sup-decompose"} {
		desc, err := c.DescribeWorkflowExecution(ctx, wf, "")
		require.NoError(t, err)
		for _, pa := range desc.GetPendingActivities() {
			h := holderOf[key{wf, pa.GetActivityId()}]
			if h == holders[2] || h == holders[3] || h == holders[4] {
				require.Equal(t, enumspb.PENDING_ACTIVITY_STATE_STARTED, pa.GetState(), h)
				require.EqualValues(t, 1, pa.GetAttempt(), h)
				require.Equal(t, h, pa.GetLastWorkerIdentity())
				still[h] = true
			}
		}
	}
	require.Len(t, still, 3)

	// A second pass finds nothing more to hand back.
	handed, err = HandBackOrphanedActivities(ctx, c, "default", self, zerolog.Nop())
	require.NoError(t, err)
	require.Zero(t, handed)
}

func testPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type quietLog struct{}

func (quietLog) Debug(string, ...any) {}
func (quietLog) Info(string, ...any)  {}
func (quietLog) Warn(string, ...any)  {}
func (quietLog) Error(string, ...any) {}
