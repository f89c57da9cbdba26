package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/pgtest"
)

// cluster is horizon on a Temporal cluster, natively: a throw-away
// PostgreSQL, `horizon server --engine-only` on it, and `horizon worker`
// processes, each with its own home, all with one shared directory and
// exactly one paid poller. The world's env is the CLI's: it joins the
// engine as a worker elsewhere would.
type cluster struct {
	w          *world
	pg         *pgtest.Cluster
	engineHome string
	shared     string
	port       int
	uiPort     int
	engine     *exec.Cmd
	workers    []*exec.Cmd
	homes      []string
}

func newCluster(t *testing.T, script *fakemodel.Script, workers int) *cluster {
	t.Helper()
	pg := pgtest.Start(t)
	w := plannedWorld(t, script)
	base := t.TempDir()
	c := &cluster{w: w, pg: pg, engineHome: filepath.Join(base, "engine-home"), shared: filepath.Join(base, "shared"),
		port: freePort(t), uiPort: freePort(t)}
	join := []string{
		"HORIZON_TEMPORAL_ADDRESS=127.0.0.1:" + strconv.Itoa(c.port),
		"HORIZON_TEMPORAL_API_KEY_FILE=" + filepath.Join(c.engineHome, "engine.token"),
		"HORIZON_WORKER_SHARED_DIR=" + c.shared,
	}
	w.env = append(w.env, join...)
	// Models by the tiers leaderboard: a feature's worker session on
	// fake-local (free: any worker runs it), the lead and the auditor on
	// fake-cloud (metered: the paid queue, one at a time). Info logs: the
	// engine's debug log alone would load the machine.
	lb, err := filepath.Abs(filepath.Join("testdata", "leaderboard-tiers.json"))
	require.NoError(t, err)
	w.env = append(w.env, "HORIZON_MODELS_FILE="+lb, "HORIZON_LOG_LEVEL=info")
	w.configureModels("fake-local", "fake-cloud")
	c.startEngine(t)
	for i := 0; i < workers; i++ {
		home := filepath.Join(base, fmt.Sprintf("worker-%d", i))
		c.homes = append(c.homes, home)
		c.workers = append(c.workers, c.startWorker(t, i))
	}
	t.Cleanup(func() {
		for i, p := range c.workers {
			stopProc(t, p, "worker "+strconv.Itoa(i))
		}
		stopProc(t, c.engine, "engine")
		if t.Failed() {
			c.dumpLogs(t)
		}
	})
	return c
}

func (c *cluster) engineEnv() []string {
	return append(append([]string{}, c.w.env...),
		"HORIZON_HOME="+c.engineHome,
		"HORIZON_TEMPORAL_ADDRESS=",
		"HORIZON_TEMPORAL_PORT="+strconv.Itoa(c.port),
		"HORIZON_UI_PORT="+strconv.Itoa(c.uiPort),
		"HORIZON_ENGINE_DATABASE=postgres",
		"HORIZON_ENGINE_POSTGRES_DSN="+c.pg.DSN("temporal"),
	)
}

// startEngine starts `horizon server --engine-only` and waits until it
// has published server.json for this start.
func (c *cluster) startEngine(t *testing.T) {
	t.Helper()
	_ = os.Remove(filepath.Join(c.engineHome, "server.json"))
	cmd := exec.Command(horizonBin, "server", "--engine-only")
	cmd.Env = c.engineEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, os.MkdirAll(c.engineHome, 0o700))
	out, err := os.OpenFile(filepath.Join(c.engineHome, "stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait() }()
	c.engine = cmd
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(c.engineHome, "server.json"))
		return err == nil
	}, 90*time.Second, 100*time.Millisecond, "the engine never became ready")
}

// startWorker starts worker i (i == 0 polls the paid queue) and waits
// until it polls.
func (c *cluster) startWorker(t *testing.T, i int) *exec.Cmd {
	t.Helper()
	home := c.homes[i]
	cmd := exec.Command(horizonBin, "worker")
	cmd.Env = append(append([]string{}, c.w.env...), "HORIZON_HOME="+home, "HORIZON_WORKER_PAID_POLLER="+strconv.FormatBool(i == 0))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait() }()
	log := filepath.Join(home, "logs", "horizon.log")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "worker ready")
	}, 90*time.Second, 100*time.Millisecond, "worker %d never reported ready", i)
	return cmd
}

// stopProc stops a process the test started, by its pid: SIGTERM, then
// SIGKILL of its group after 30 s.
func stopProc(t *testing.T, p *exec.Cmd, what string) {
	if p == nil || p.Process == nil || !alive(p.Process.Pid) {
		return
	}
	_ = p.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && alive(p.Process.Pid) {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(p.Process.Pid) {
		t.Logf("%s did not stop within 30s of SIGTERM; killing it", what)
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
	}
}

func (c *cluster) dumpLogs(t *testing.T) {
	for _, home := range append([]string{c.engineHome}, c.homes...) {
		b, err := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
		if err != nil {
			continue
		}
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.Contains(l, `"component":"temporal-server"`) {
				keep = append(keep, l)
			}
		}
		if len(keep) > 60 {
			keep = keep[len(keep)-60:]
		}
		t.Logf("--- %s/logs/horizon.log (horizon's lines, tail)\n%s", home, strings.Join(keep, "\n"))
	}
}

// meteredSessions groups the model's requests to the metered model into
// sessions (one rule's conversation in one lane) and returns each one's first and last
// request time.
func meteredSessions(reqs []fakemodel.Request) map[string][2]time.Time {
	out := map[string][2]time.Time{}
	for _, r := range reqs {
		if r.Title || r.Rule == "" || !strings.HasSuffix(r.Model, "fake-cloud") {
			continue
		}
		k := r.Workdir + " " + r.Rule
		span, ok := out[k]
		if !ok {
			span = [2]time.Time{r.At, r.At}
		}
		if r.At.Before(span[0]) {
			span[0] = r.At
		}
		if r.At.After(span[1]) {
			span[1] = r.At
		}
		out[k] = span
	}
	return out
}

// requireNoOverlap fails when two sessions' model traffic interleaved.
func requireNoOverlap(t *testing.T, spans map[string][2]time.Time) {
	t.Helper()
	type s struct {
		k    string
		a, b time.Time
	}
	var all []s
	for k, v := range spans {
		all = append(all, s{k, v[0], v[1]})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].a.Before(all[j].a) })
	for i := 1; i < len(all); i++ {
		require.False(t, all[i].a.Before(all[i-1].b), "metered sessions overlapped: %s (%s..%s) and %s (%s..%s)",
			all[i-1].k, all[i-1].a.Format("15:04:05.000"), all[i-1].b.Format("15:04:05.000"), all[i].k, all[i].a.Format("15:04:05.000"), all[i].b.Format("15:04:05.000"))
	}
}

// clusterScript is the model of the cluster's runs: the lead plans the
// first milestone of the tools plan (upper, lower), each feature's worker
// writes its tool and test, and the auditor accepts: five sessions a run.
func clusterScript(t *testing.T) *fakemodel.Script {
	t.Helper()
	type feature struct {
		ID         string   `json:"id"`
		Title      string   `json:"title"`
		Acceptance []string `json:"acceptance"`
		Paths      []string `json:"paths"`
		Kind       string   `json:"kind"`
	}
	var fs []feature
	rules := []fakemodel.Rule{}
	for _, tl := range toolsPlan[0] {
		fs = append(fs, feature{ID: tl.id, Title: tl.title, Kind: "bounded",
			Acceptance: []string{"lib/" + tl.name + ".sh works as its comment says"},
			Paths:      []string{"lib/" + tl.name + ".sh", "tests/test_" + tl.name + ".sh"}})
		task := "Feature " + tl.id + ":"
		rules = append(rules,
			fakemodel.Rule{Name: "worker-" + tl.id, When: []string{"# Task (attempt 1)", task}, Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/"+tl.name+".sh", tl.code), write("tests/test_"+tl.name+".sh", tl.test)}},
				{Text: report("added lib/" + tl.name + ".sh and its test")},
			}},
			fakemodel.Rule{Name: "auditor-" + tl.id, When: []string{"# Audit (attempt 1)", task}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		)
	}
	plan, err := json.Marshal(map[string]any{
		"milestones":  []any{map[string]any{"title": "Case tools", "features": fs}},
		"ambiguity":   "LOW",
		"assumptions": []string{"POSIX sh and coreutils only"},
	})
	require.NoError(t, err)
	rules = append([]fakemodel.Rule{{Name: "lead", When: []string{"# Plan"}, Replies: []fakemodel.Reply{
		{Text: "One milestone.\n\n```horizon-plan\n" + string(plan) + "\n```"},
	}}}, rules...)
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"no rule\"}}\n```"}
	sc := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, sc.Validate())
	return sc
}

// Six planned runs on six repositories, started at once on an engine on
// PostgreSQL with three workers: every run completes, each feature is
// committed exactly once on its run's integration branch, the work is
// spread over the workers, and the metered sessions (lead and auditors)
// never overlapped, though only one of the three workers polls the paid
// queue.
func TestClusterSixRunsThreeWorkers(t *testing.T) {
	needsE2EAlone(t)
	c := newCluster(t, clusterScript(t), 3)
	const runs = 6
	repos := make([]string, runs)
	for i := range repos {
		repos[i], _ = toolsRepo(t)
	}
	ids := make([]string, runs)
	var wg sync.WaitGroup
	errs := make([]string, runs)
	for i := range repos {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, code := c.w.run(context.Background(), "start", "--detach", "--repo", repos[i], toolsGoal)
			if code != 0 {
				errs[i] = fmt.Sprintf("start %d: exit %d: %s", i, code, out)
				return
			}
			ids[i] = runIDRe.FindString(out)
		}(i)
	}
	wg.Wait()
	for i := range ids {
		require.Empty(t, errs[i])
		require.NotEmpty(t, ids[i], "run %d has an id", i)
	}
	// One deadline for all six: their 18 metered sessions go through the
	// one paid slot in whatever order the engine gives it, so the first
	// run may well end last.
	deadline := time.Now().Add(15 * time.Minute)
	for i, id := range ids {
		s := c.w.waitStatus(id, time.Until(deadline), func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusCompleted, s.Status, "run %s: %s", id, s.Reason)
		require.Equal(t, map[string]int{"f1": 1, "f2": 1}, trailers(repos[i], id), "run %s: each feature committed once", id)
		_, features := featureCommits(t, repos[i], id)
		require.ElementsMatch(t, []string{"f1", "f2"}, features, id)
		require.DirExists(t, filepath.Join(c.shared, "runs", id), "the run's artifacts are in the shared directory")
	}
	spans := meteredSessions(c.w.model.Requests())
	require.GreaterOrEqual(t, len(spans), 3*runs, "every run's lead and auditors were metered")
	requireNoOverlap(t, spans)
	// The work was spread: more than one worker prepared lanes (only the
	// paid poller ran the metered sessions).
	var busy []int
	for i, home := range c.homes {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
		if strings.Contains(string(b), `"message":"lane ready"`) { // logged by PrepareLane itself
			busy = append(busy, i)
		}
	}
	require.GreaterOrEqual(t, len(busy), 2, "workers that prepared lanes: %v", busy)
}
