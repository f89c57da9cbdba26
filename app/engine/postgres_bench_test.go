package engine

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/pgtest"
	"github.com/horizon/horizon/workflows"
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

// The throughput benchmark's runs: six planned runs of three features,
// started at once on six repositories; every agent session takes
// sessionDelay (long against the engine's own cost per activity, as real
// sessions are), holding its worker slot.
const (
	throughputRuns     = 6
	throughputFeatures = 3
	sessionDelay       = 300 * time.Millisecond
	workerSlots        = 2
)

// BenchmarkWorkersThroughput reports features per minute of six
// concurrent planned runs (3 features each; the real workflows, git, plan
// artifacts and gate; a fake agent whose every session answers after
// 300 ms) on an engine on PostgreSQL, with one worker and with three, each
// worker running at most 2 activities at a time (what bounds a real worker
// is its slots: CPU for gates, memory for sessions). The workers are
// separate SDK clients and workers in this process sharing one home, as
// `horizon worker` processes on other machines share the repositories and
// the lanes.
func BenchmarkWorkersThroughput(b *testing.B) {
	pg := pgtest.Start(b)
	e, c := startWith(b, Options{DBPath: filepath.Join(b.TempDir(), "temporal.db"), Postgres: &Postgres{DSN: pg.DSN("temporal")}})
	defer e.Stop()
	defer c.Close()
	home := b.TempDir()
	agent := &fakeAgent{plans: map[string]horizon.PlanBlock{}, delay: sessionDelay}
	type repoAt struct{ repo, base string }
	repos := make([]repoAt, throughputRuns)
	for i := range repos {
		repos[i].repo, repos[i].base = benchRepo(b)
	}
	in := func(runID string, r repoAt, plan horizon.PlanBlock) workflows.RunInput {
		agent.set(runID, plan)
		return workflows.RunInput{
			RunID: runID, Goal: "Build the benchmark's features", Repo: r.repo, BaseRef: "main", BaseCommit: r.base,
			Model: "fake/m", MaxAttempts: 3, Planned: true, Autonomy: horizon.AutonomyFull,
		}
	}
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("%d-workers", n), func(b *testing.B) {
			queue := fmt.Sprintf("through-%d", n)
			timer := &activityTimer{spent: map[string]time.Duration{}, calls: map[string]int{}}
			for i := 0; i < n; i++ {
				wc := dialToken(b, e)
				defer wc.Close()
				w := worker.New(wc, queue, worker.Options{
					MaxConcurrentActivityExecutionSize: workerSlots,
					Interceptors:                       []interceptor.WorkerInterceptor{timer},
				})
				registerPlanned(w, home, agent)
				require.NoError(b, w.Start())
				defer w.Stop()
			}
			// One small run first, as in BenchmarkPlannedRun.
			runPlanned(b, c, queue, in(fmt.Sprintf("warmup-%dw", n), repos[0], benchPlan(1, 1)), repos[0].repo, repos[0].base, 1)
			timer.reset()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				errs := make(chan error, len(repos))
				for r, at := range repos {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := planned(c, queue, in(fmt.Sprintf("through-%dw-%d-%d", n, i, r), at, benchPlan(1, throughputFeatures)), at.repo, at.base, throughputFeatures)
						errs <- err
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(b, err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			features := b.N * throughputRuns * throughputFeatures
			perMin := float64(features) / elapsed.Minutes()
			spent, calls := timer.snapshot()
			var busy time.Duration
			for _, d := range spent {
				busy += d
			}
			// The slots' ceiling: every activity's time spread over all
			// slots, with nothing else in the way.
			ceiling := float64(features) / (busy.Minutes() / float64(n*workerSlots))
			b.ReportMetric(perMin, "features/min")
			b.Logf("BENCH %d worker(s), %d slots each: %.0f features/min (%d concurrent planned runs of %d features, sessions of %s; %.1f s wall, %d sessions, %.1f s of activity time: the slots' ceiling is %.0f features/min)",
				n, workerSlots, perMin, throughputRuns, throughputFeatures, sessionDelay, elapsed.Seconds(), calls["AgentSession"]/b.N, busy.Seconds()/float64(b.N), ceiling)
		})
	}
}
