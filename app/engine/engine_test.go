package engine

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func freePortT(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func start(tb testing.TB, dir string, untuned bool) (*Embedded, client.Client) {
	return startWith(tb, Options{DBPath: filepath.Join(dir, "temporal.db"), Untuned: untuned})
}

func startWith(tb testing.TB, o Options) (*Embedded, client.Client) {
	tb.Helper()
	o.Port, o.UIPort, o.Namespace, o.Retention, o.Logger = freePortT(tb), freePortT(tb), "default", 30*24*time.Hour, zerolog.Nop()
	e, err := StartEmbedded(o)
	require.NoError(tb, err)
	return e, dialToken(tb, e)
}

// dialToken connects to e with its token, as every horizon client does.
func dialToken(tb testing.TB, e *Embedded) client.Client {
	tb.Helper()
	tok, err := ReadToken(e.TokenPath())
	require.NoError(tb, err)
	c, err := client.Dial(client.Options{HostPort: e.FrontendAddress(), Logger: quiet{}, Credentials: client.NewAPIKeyStaticCredentials(tok),
		ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}})
	require.NoError(tb, err)
	return c
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

func noop(context.Context, int) (int, error) { return 1, nil }

// chain runs n activities one after another.
func chain(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	sum := 0
	for i := 0; i < n; i++ {
		var v int
		if err := workflow.ExecuteActivity(ctx, noop, i).Get(ctx, &v); err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

func runChain(tb testing.TB, c client.Client, queue string, n int) {
	tb.Helper()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue}, chain, n)
	require.NoError(tb, err)
	var sum int
	require.NoError(tb, run.Get(context.Background(), &sum))
	require.Equal(tb, n, sum)
}

func newWorker(tb testing.TB, c client.Client, queue string) worker.Worker {
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(chain)
	w.RegisterActivity(noop)
	require.NoError(tb, w.Start())
	return w
}

// The engine keeps its namespace, its retention and a closed workflow across
// a stop and a restart on the same file, and refuses a taken port clearly.
func TestEmbeddedRestartKeepsState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	dir := t.TempDir()
	e, c := start(t, dir, false)
	w := newWorker(t, c, "q")
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "kept", TaskQueue: "q"}, chain, 3)
	require.NoError(t, err)
	require.NoError(t, run.Get(context.Background(), nil))
	require.NoError(t, EnsureRetention(context.Background(), c, "default", 40*24*time.Hour))

	_, err = StartEmbedded(Options{DBPath: filepath.Join(t.TempDir(), "x.db"), Port: e.opts.Port, Logger: zerolog.Nop()})
	var pu *PortInUseError
	require.ErrorAs(t, err, &pu)
	require.Contains(t, err.Error(), "HORIZON_TEMPORAL_PORT")

	w.Stop()
	c.Close()
	e.Stop()

	e2, err := StartEmbedded(Options{DBPath: filepath.Join(dir, "temporal.db"), Port: freePortT(t), Logger: zerolog.Nop(), Retention: 30 * 24 * time.Hour})
	require.NoError(t, err)
	defer e2.Stop()
	c2 := dialToken(t, e2)
	defer c2.Close()
	desc, err := c2.DescribeWorkflowExecution(context.Background(), "kept", "")
	require.NoError(t, err)
	require.Equal(t, "Completed", desc.GetWorkflowExecutionInfo().GetStatus().String())
	require.NoError(t, EnsureRetention(context.Background(), c2, "default", 30*24*time.Hour))
	ns, err := c2.WorkflowService().DescribeNamespace(context.Background(), nsReq("default"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(), 30*24*time.Hour)
	_, err = os.Stat(filepath.Join(dir, "temporal.db-wal"))
	require.NoError(t, err, "the database runs in WAL mode")
}

// BenchmarkSequentialActivity reports the engine's cost per activity when a
// workflow runs activities back to back (what a run does): the tuned
// configuration horizon uses (synchronous=FULL), the same with
// synchronous=NORMAL, with synchronous=OFF (not offered: no durability;
// the floor of the machine, to which FULL is compared), and the server's
// stock configuration.
func BenchmarkSequentialActivity(b *testing.B) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"tuned", Options{}},
		{"tuned-normal", Options{Synchronous: "NORMAL"}},
		{"floor-off", Options{Synchronous: "OFF"}},
		{"stock", Options{Untuned: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := tc.o
			o.DBPath = filepath.Join(b.TempDir(), "temporal.db")
			e, c := startWith(b, o)
			defer e.Stop()
			defer c.Close()
			w := newWorker(b, c, "bench")
			defer w.Stop()
			runChain(b, c, "bench", 5) // warm up
			const per = 50
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				runChain(b, c, "bench", per)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N*per), "ms/activity")
		})
	}
}

func nsReq(ns string) *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: ns}
}
