package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/internal/pgtest"
)

// BenchmarkSequentialActivityPostgres is BenchmarkSequentialActivity on
// an engine kept in PostgreSQL (a throw-away local cluster, fsync off:
// a floor, not a production figure).
func BenchmarkSequentialActivityPostgres(b *testing.B) {
	pg := pgtest.Start(b)
	e, c := startWith(b, Options{DBPath: filepath.Join(b.TempDir(), "temporal.db"), Postgres: &Postgres{DSN: pg.DSN("temporal")}})
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
}

// workStep stands for a step of a run that occupies a worker slot (a gate,
// a session): 300 ms of waiting, long against the engine's own cost per
// activity, as real steps are.
func workStep(context.Context, int) (int, error) {
	time.Sleep(300 * time.Millisecond)
	return 1, nil
}

// workRun is a run of 5 such steps one after another.
func workRun(ctx workflow.Context) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	sum := 0
	for i := 0; i < 5; i++ {
		var v int
		if err := workflow.ExecuteActivity(ctx, workStep, i).Get(ctx, &v); err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// BenchmarkWorkersThroughput reports runs per minute of 12 concurrent runs
// (5 steps of 300 ms each) on an engine on PostgreSQL, with one worker and
// with three, each worker running at most 2 steps at a time (what bounds a
// real worker is its slots: CPU for gates, memory for sessions). The
// workers are separate SDK clients and workers in this process, as
// `horizon worker` processes would be on other machines.
func BenchmarkWorkersThroughput(b *testing.B) {
	pg := pgtest.Start(b)
	e, c := startWith(b, Options{DBPath: filepath.Join(b.TempDir(), "temporal.db"), Postgres: &Postgres{DSN: pg.DSN("temporal")}})
	defer e.Stop()
	defer c.Close()
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("%d-workers", n), func(b *testing.B) {
			queue := fmt.Sprintf("through-%d", n)
			for i := 0; i < n; i++ {
				wc := dialToken(b, e)
				defer wc.Close()
				w := worker.New(wc, queue, worker.Options{MaxConcurrentActivityExecutionSize: 2})
				w.RegisterWorkflow(workRun)
				w.RegisterActivity(workStep)
				require.NoError(b, w.Start())
				defer w.Stop()
			}
			const runs = 12
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				errs := make(chan error, runs)
				for r := 0; r < runs; r++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue}, workRun)
						if err == nil {
							var sum int
							err = run.Get(context.Background(), &sum)
							if err == nil && sum != 5 {
								err = fmt.Errorf("run did %d steps, want 5", sum)
							}
						}
						errs <- err
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(b, err)
				}
			}
			perMin := float64(b.N*runs) / time.Since(start).Minutes()
			b.ReportMetric(perMin, "runs/min")
			b.Logf("BENCH %d worker(s), 2 slots each: %.0f runs/min (12 concurrent runs of 5 × 300 ms steps)", n, perMin)
		})
	}
}
