package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/pgtest"
	"github.com/horizon/horizon/workflows"
)

// benchMilestones × benchFeatures is the plan of the planned-run benchmark.
const (
	benchMilestones = 4
	benchFeatures   = 5
	benchPlanSize   = benchMilestones * benchFeatures
)

// BenchmarkPlannedRun reports what the engine costs a planned run, apart
// from the work itself: a 20-feature plan (4 milestones × 5 features) runs
// on the embedded engine with a worker in this process, as in the daemon.
// Git lanes, commits, plan artifacts and the gate (a .horizon/verify.sh
// that exits 0) are the real activities; the agent is an instant fake (the
// lead returns the plan, the worker writes one file, the auditor accepts).
//
// Reported per feature: the engine's overhead, (wall time − time inside
// agent sessions and gates) / features, which also holds the git and
// artifact activities (shown apart); the events of the run's histories
// (across continue-as-new) and of its feature children; and the process's
// peak RSS (engine + worker). Only correctness is asserted.
func BenchmarkPlannedRun(b *testing.B) {
	for _, tc := range []struct {
		name       string
		perHistory int
	}{
		{"one-history", 0},   // the default: Temporal decides (20 features fit one history)
		{"5-per-history", 5}, // run.features_per_history: 5 → four histories
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchPlanned(b, tc.perHistory, Options{DBPath: filepath.Join(b.TempDir(), "temporal.db")})
		})
	}
}

// BenchmarkPlannedRunPostgres is BenchmarkPlannedRun's default case (one
// history) on an engine kept in PostgreSQL (a throw-away local cluster,
// fsync off: a floor, not a production figure); the same code path, for
// the overhead per feature of the two stores side by side.
func BenchmarkPlannedRunPostgres(b *testing.B) {
	pg := pgtest.Start(b)
	benchPlanned(b, 0, Options{DBPath: filepath.Join(b.TempDir(), "temporal.db"), Postgres: &Postgres{DSN: pg.DSN("temporal")}})
}

func benchPlanned(b *testing.B, perHistory int, o Options) {
	// The peak is this sub-benchmark's: give back what the previous one
	// left, then restart the high-water mark from the current RSS.
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)

	repo, base := benchRepo(b)
	e, c := startWith(b, o)
	defer e.Stop()
	defer c.Close()

	const queue = "bench-planned"
	timer := &activityTimer{spent: map[string]time.Duration{}, calls: map[string]int{}}
	w := worker.New(c, queue, worker.Options{
		MaxConcurrentActivityExecutionSize: 8, // as the daemon
		Interceptors:                       []interceptor.WorkerInterceptor{timer},
	})
	agent := &fakeAgent{plans: map[string]horizon.PlanBlock{}}
	registerPlanned(w, b.TempDir(), agent)
	require.NoError(b, w.Start())
	defer w.Stop()

	in := func(runID string, plan horizon.PlanBlock) workflows.RunInput {
		agent.set(runID, plan)
		return workflows.RunInput{
			RunID: runID, Goal: "Build the benchmark's features", Repo: repo, BaseRef: "main", BaseCommit: base,
			Model: "fake/m", MaxAttempts: 3, Planned: true, Autonomy: horizon.AutonomyFull, FeaturesPerHistory: perHistory,
		}
	}
	// One small run first: task queues, caches and connections warm up, as
	// in a daemon that has run before.
	runPlanned(b, c, queue, in("warmup", benchPlan(1, 1)), repo, base, 1)
	timer.reset()

	var total time.Duration
	var runEvents, childEvents, histories, bytes, tasks int
	var wfTasks time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runID := fmt.Sprintf("bench-%d", i+1)
		t0 := time.Now()
		first := runPlanned(b, c, queue, in(runID, benchPlan(benchMilestones, benchFeatures)), repo, base, benchPlanSize)
		total += time.Since(t0)
		h := countHistory(b, c, runID, first)
		runEvents, childEvents, histories, bytes = runEvents+h.runEvents, childEvents+h.childEvents, histories+h.runHistories, bytes+h.bytes
		wfTasks, tasks = wfTasks+h.workflowTasks, tasks+h.tasks
	}
	b.StopTimer()

	features := float64(b.N * benchPlanSize)
	spent, calls := timer.snapshot()
	agentT, gateT := spent["AgentSession"], spent["RunGate"]
	var other time.Duration
	for name, d := range spent {
		if name != "AgentSession" && name != "RunGate" {
			other += d
		}
	}
	nCalls := 0
	for _, n := range calls {
		nCalls += n
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	overhead := ms(total-agentT-gateT) / features
	engineOnly := ms(total-agentT-gateT-other) / features
	events := float64(runEvents+childEvents) / features
	peak := float64(statusKB("VmHWM")) / 1024

	b.ReportMetric(overhead, "ms-overhead/feature")
	b.ReportMetric(events, "events/feature")
	b.ReportMetric(peak, "peak-RSS-MiB")
	b.Logf("BENCH planned run, %d features (%s, %d PlannedRunWorkflow histories per run): %.0f ms wall, %.0f ms in agent sessions (fake), %.0f ms in gates, %.0f ms in git/artifact activities",
		benchPlanSize, b.Name(), histories/b.N, ms(total)/float64(b.N), ms(agentT)/float64(b.N), ms(gateT)/float64(b.N), ms(other)/float64(b.N))
	b.Logf("BENCH engine overhead per feature: %.1f ms (wall − agent − gate); of which git/artifact activities %.1f ms, engine alone %.1f ms (%.1f activities and %.1f workflow tasks per feature; workflow tasks started→completed %.1f ms of it)",
		overhead, ms(other)/features, engineOnly, float64(nCalls)/features, float64(tasks)/features, ms(wfTasks)/features)
	b.Logf("BENCH history events per feature: %.1f (run %.1f + feature children %.1f), %.1f KiB of history per feature",
		events, float64(runEvents)/features, float64(childEvents)/features, float64(bytes)/1024/features)
	b.Logf("BENCH peak RSS of the process (engine + worker, VmHWM): %.0f MiB", peak)
}

// registerPlanned registers on w what a horizon worker runs for a run of
// either kind, with agent's fake sessions and preflight in place of the
// struct's (which would start OpenCode and read the leaderboard).
func registerPlanned(w worker.Worker, home string, agent *fakeAgent) {
	w.RegisterWorkflowWithOptions(workflows.RunWorkflow, workflow.RegisterOptions{Name: workflows.RunWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.PlannedRunWorkflow, workflow.RegisterOptions{Name: workflows.PlannedRunWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SingleRunWorkflow, workflow.RegisterOptions{Name: workflows.SingleRunWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.FeatureWorkflow, workflow.RegisterOptions{Name: workflows.FeatureWorkflowName})
	w.RegisterActivityWithOptions(&activities.Activities{Home: home, Logger: zerolog.Nop()}, activity.RegisterOptions{})
	w.RegisterActivityWithOptions(agent.Preflight, activity.RegisterOptions{Name: "Preflight", DisableAlreadyRegisteredCheck: true})
	w.RegisterActivityWithOptions(agent.AgentSession, activity.RegisterOptions{Name: "AgentSession", DisableAlreadyRegisteredCheck: true})
}

// runPlanned runs a planned run to its end and checks that every feature
// was accepted and landed as one commit on the integration branch. It
// returns the run's first run ID (Get follows continue-as-new).
func runPlanned(tb testing.TB, c client.Client, queue string, in workflows.RunInput, repo, base string, features int) (firstRunID string) {
	tb.Helper()
	firstRunID, err := planned(c, queue, in, repo, base, features)
	require.NoError(tb, err)
	return firstRunID
}

// planned is runPlanned returning its failure, for use off the test's
// goroutine.
func planned(c client.Client, queue string, in workflows.RunInput, repo, base string, features int) (firstRunID string, err error) {
	ctx := context.Background()
	typ, arg := in.Start()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.RunID, TaskQueue: queue}, typ, arg)
	if err != nil {
		return "", err
	}
	firstRunID = run.GetRunID()
	var st horizon.RunState
	if err := run.Get(ctx, &st); err != nil {
		return "", fmt.Errorf("planned run %s: %w", in.RunID, err)
	}
	if st.Status != horizon.StatusCompleted {
		return "", fmt.Errorf("planned run %s: %s (%s)", in.RunID, st.Status, st.Reason)
	}
	if st.Plan == nil || st.Plan.Counts().Accepted != features {
		return "", fmt.Errorf("planned run %s: not every one of its %d features accepted", in.RunID, features)
	}
	cmd := exec.Command("git", "rev-list", "--count", base+"..refs/heads/"+horizon.IntegrationBranch(in.RunID))
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git rev-list: %w: %s", err, out)
	}
	if n := strings.TrimSpace(string(out)); n != strconv.Itoa(features) {
		return "", fmt.Errorf("planned run %s: %s commits on the integration branch, want %d", in.RunID, n, features)
	}
	return firstRunID, nil
}

type historyCount struct {
	runEvents, childEvents, runHistories, bytes int
	// workflowTasks is the time between each workflow task's start and
	// completion (server clock): the worker running workflow code.
	workflowTasks time.Duration
	tasks         int
}

// countHistory counts the events of a run's histories, following
// continue-as-new from its first run, and of every feature child it started
// (each followed the same way).
func countHistory(tb testing.TB, c client.Client, runID, firstRunID string) historyCount {
	tb.Helper()
	var h historyCount
	var children [][2]string
	follow := func(id, rid string) (events int) {
		for rid != "" {
			next := ""
			started := map[int64]time.Time{}
			it := c.GetWorkflowHistory(context.Background(), id, rid, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				require.NoError(tb, err)
				events++
				h.bytes += proto.Size(ev)
				if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED {
					started[ev.GetEventId()] = ev.GetEventTime().AsTime()
				}
				if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
					h.workflowTasks += ev.GetEventTime().AsTime().Sub(started[a.GetStartedEventId()])
					h.tasks++
				}
				if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
					next = a.GetNewExecutionRunId()
				}
				if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
					children = append(children, [2]string{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
				}
			}
			if id == runID {
				h.runHistories++
			}
			rid = next
		}
		return events
	}
	h.runEvents = follow(runID, firstRunID)
	require.Len(tb, children, benchPlanSize, "one feature workflow per feature")
	for _, ch := range children {
		require.True(tb, strings.HasPrefix(ch[0], runID+"."), ch[0])
		h.childEvents += follow(ch[0], ch[1])
	}
	return h
}

// activityTimer sums the time spent inside each activity type.
type activityTimer struct {
	interceptor.WorkerInterceptorBase
	mu    sync.Mutex
	spent map[string]time.Duration
	calls map[string]int
}

func (t *activityTimer) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &timedActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, t: t}
}

func (t *activityTimer) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.spent)
	clear(t.calls)
}

func (t *activityTimer) snapshot() (map[string]time.Duration, map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	spent, calls := map[string]time.Duration{}, map[string]int{}
	for k, v := range t.spent {
		spent[k] = v
	}
	for k, v := range t.calls {
		calls[k] = v
	}
	return spent, calls
}

type timedActivity struct {
	interceptor.ActivityInboundInterceptorBase
	t *activityTimer
}

func (a *timedActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	t0 := time.Now()
	res, err := a.Next.ExecuteActivity(ctx, in)
	d := time.Since(t0)
	name := activity.GetInfo(ctx).ActivityType.Name
	a.t.mu.Lock()
	a.t.spent[name] += d
	a.t.calls[name]++
	a.t.mu.Unlock()
	return res, err
}

// fakeAgent answers preflight and agent sessions, at once or after delay:
// the lead plans the run's plan, the worker writes one file in its lane
// (so the feature has a change to commit), the auditor accepts.
type fakeAgent struct {
	mu    sync.Mutex
	plans map[string]horizon.PlanBlock // by run ID
	// delay is how long every session takes (holding its worker slot).
	delay time.Duration
}

func (f *fakeAgent) set(runID string, p horizon.PlanBlock) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans[runID] = p
}

func (f *fakeAgent) Preflight(ctx context.Context, in activities.PreflightInput) (activities.PreflightOutput, error) {
	return activities.PreflightOutput{Gate: ".horizon/verify.sh", Models: map[horizon.Role]string{horizon.RoleWorker: "fake/m", horizon.RoleAuditor: "fake/m"}}, nil
}

func (f *fakeAgent) AgentSession(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return activities.SessionOutput{}, ctx.Err()
		}
	}
	use := horizon.Usage{Input: 100, Output: 10}
	switch in.Role {
	case "lead":
		f.mu.Lock()
		block, ok := f.plans[in.RunID]
		f.mu.Unlock()
		if !ok {
			return activities.SessionOutput{}, fmt.Errorf("fake lead: no plan for run %s", in.RunID)
		}
		p, err := horizon.PlanFromBlock(in.Goal, block)
		if err != nil {
			return activities.SessionOutput{}, err
		}
		return activities.SessionOutput{SessionID: "ses_lead", Plan: &p, Usage: use}, nil
	case "auditor":
		return activities.SessionOutput{SessionID: "ses_auditor", Audit: &horizon.Audit{Verdict: "accept"}, Usage: use}, nil
	}
	dir := filepath.Join(in.Lane, "features")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return activities.SessionOutput{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, in.Feature+".txt"), []byte(in.Feature+"\n"), 0o644); err != nil {
		return activities.SessionOutput{}, err
	}
	return activities.SessionOutput{SessionID: "ses_worker_" + in.Feature, Report: &horizon.Report{Status: "satisfied", Summary: "wrote features/" + in.Feature + ".txt"}, Usage: use}, nil
}

// benchPlan is milestones × features independent bounded features.
func benchPlan(milestones, features int) horizon.PlanBlock {
	p := horizon.PlanBlock{Ambiguity: "LOW"}
	for m := 1; m <= milestones; m++ {
		bm := horizon.PlanBlockMilestone{Title: fmt.Sprintf("milestone %d", m)}
		for f := 1; f <= features; f++ {
			id := fmt.Sprintf("m%df%d", m, f)
			bm.Features = append(bm.Features, horizon.PlanBlockFeature{ID: id, Title: "feature " + id, Acceptance: []string{id + " exists"}, Kind: "bounded"})
		}
		p.Milestones = append(p.Milestones, bm)
	}
	return p
}

// benchRepo is a git repository whose gate, .horizon/verify.sh, passes.
func benchRepo(tb testing.TB) (repo, base string) {
	tb.Helper()
	repo = tb.TempDir()
	runGit(tb, repo, "init", "-q", "-b", "main")
	require.NoError(tb, os.MkdirAll(filepath.Join(repo, ".horizon"), 0o755))
	require.NoError(tb, os.WriteFile(filepath.Join(repo, ".horizon", "verify.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	require.NoError(tb, os.WriteFile(filepath.Join(repo, "README.md"), []byte("# bench\n"), 0o644))
	runGit(tb, repo, "add", ".")
	runGit(tb, repo, "commit", "-q", "-m", "init")
	return repo, runGit(tb, repo, "rev-parse", "HEAD")
}

func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost")
	out, err := cmd.CombinedOutput()
	require.NoError(tb, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// statusKB reads a field of /proc/self/status in KiB (0 if unknown).
func statusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}
