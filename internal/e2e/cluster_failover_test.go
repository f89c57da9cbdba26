package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
)

// sessionWorker returns the index of the worker whose log shows the
// session of role for feature starting.
func (c *cluster) sessionWorker(t *testing.T, feature, role string) int {
	t.Helper()
	found := -1
	require.Eventually(t, func() bool {
		for i, home := range c.homes {
			b, _ := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, `"message":"session starting"`) && strings.Contains(l, `"Feature":"`+feature+`"`) && strings.Contains(l, `"Role":"`+role+`"`) {
					found = i
					return true
				}
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "no worker logged the %s session of %s", role, feature)
	return found
}

// sessionStart is a "session starting" line of a worker's log.
type sessionStart struct {
	worker  int
	at      time.Time
	attempt int
}

// sessionStarts lists the logged starts of role's session for feature on
// every worker, with the time each worker's logger stamped on it.
func (c *cluster) sessionStarts(t *testing.T, feature, role string) []sessionStart {
	t.Helper()
	var out []sessionStart
	for i, home := range c.homes {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
		for _, l := range strings.Split(string(b), "\n") {
			var e struct {
				Time    time.Time `json:"time"`
				Message string    `json:"message"`
				Feature string    `json:"Feature"`
				Role    string    `json:"Role"`
				Attempt int       `json:"Attempt"`
			}
			if json.Unmarshal([]byte(l), &e) != nil || e.Message != "session starting" || e.Feature != feature || e.Role != role {
				continue
			}
			out = append(out, sessionStart{worker: i, at: e.Time, attempt: e.Attempt})
		}
	}
	return out
}

// kill SIGKILLs worker i's process group and the OpenCode processes it
// started (recorded in its home), as a machine dying would.
func (c *cluster) kill(t *testing.T, i int) {
	t.Helper()
	pids := agentPIDs(t, c.homes[i])
	p := c.workers[i].Process.Pid
	require.NoError(t, syscall.Kill(-p, syscall.SIGKILL))
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	require.Eventually(t, func() bool { return !alive(p) }, 10*time.Second, 50*time.Millisecond)
}

// A worker SIGKILLed while it runs an agent session: its OpenCode store
// dies with it, so the retried activity (Temporal hands it to another
// worker after the heartbeat timeout) starts a fresh session there with
// the same brief plus what the lane holds, and the attempt records the
// move. The run completes once: one attempt for the feature, each
// feature committed once.
func TestClusterWorkerDiesMidSession(t *testing.T) {
	needsE2EAlone(t)
	script := clusterScript(t)
	// The first f1 worker conversation waits on its first model call
	// until the test releases it (never: its worker dies).
	held := script.Rules[1]
	require.Equal(t, "worker-f1", held.Name)
	held.Name, held.Times = "worker-f1-held", 1
	held.Replies = append([]fakemodel.Reply(nil), held.Replies...)
	held.Replies[0].Hold = "dies"
	script.Rules = append([]fakemodel.Rule{held}, script.Rules...)
	c := newCluster(t, script, 3)
	t.Cleanup(func() { c.w.model.Release("dies") })
	repo, _ := toolsRepo(t)

	out, code := c.w.run(context.Background(), "start", "--detach", "--repo", repo, toolsGoal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := c.w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-f1-held" })
	require.NoError(t, err)
	victim := c.sessionWorker(t, "f1", "worker")
	victimPID := c.workers[victim].Process.Pid
	c.kill(t, victim)
	killed := time.Now()
	t.Logf("killed worker %d (pid %d) mid-session", victim, victimPID)
	if victim == 0 {
		// The dead machine was the cluster's one paid poller (README,
		// "Failover"): the metered steps after the session (the auditor)
		// wait until it comes back, as its service manager brings it
		// back. It comes back once another worker has taken the session
		// over, so the takeover measured below is another machine's.
		require.Eventually(t, func() bool {
			return slices.ContainsFunc(c.sessionStarts(t, "f1", "worker"), func(st sessionStart) bool { return st.worker != victim })
		}, 3*time.Minute, 200*time.Millisecond, "another worker took the session over")
		c.workers[0] = c.startWorker(t, 0)
		t.Logf("worker 0, the paid poller, started again")
	}

	s := c.w.waitStatus(id, 5*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.Equal(t, map[string]int{"f1": 1, "f2": 1}, trailers(repo, id), "each feature committed once")
	f1 := planFeatures(s.Plan)["f1"]
	require.Len(t, f1.Attempts, 1, "the attempt is not counted twice")
	a := f1.Attempts[0]
	require.Equal(t, horizon.OutcomeAccepted, a.Outcome)
	require.Len(t, a.Moved, 1, "the attempt records the move: %+v", a)
	re := regexp.MustCompile(`^session moved: (\S+) → (\S+) \(worker horizon@[^:]+:` + strconv.Itoa(victimPID) + ` lost\)$`)
	m := re.FindStringSubmatch(a.Moved[0])
	require.NotNil(t, m, "moved note %q", a.Moved[0])
	require.NotEqual(t, m[1], m[2])
	require.Equal(t, m[2], a.WorkerSession, "the attempt's worker session is the new one")

	// The fresh session's brief carried the old brief and the lane's state.
	brief, err := os.ReadFile(filepath.Join(c.shared, "runs", id, "transcripts", "f1-attempt-1-worker.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), "Feature f1:")
	require.Contains(t, string(brief), fmt.Sprintf(":%d, which was lost", victimPID))

	// The takeover is bounded by the configured heartbeat timeout: the
	// engine gives up on the dead worker's session once its heartbeats
	// stop for that long, and retries it a second later (sessionOptions).
	// The margin is for the retry's backoff, a worker polling it up, its
	// lane and the log's one-second stamps on a busy machine; without the
	// heartbeat the takeover would wait for the session's start-to-close
	// timeout (agent.session_timeout, 45 minutes by default).
	hb, err := time.ParseDuration(envValue(c.w.env, "HORIZON_AGENT_HEARTBEAT_TIMEOUT"))
	require.NoError(t, err, "the cluster's configured agent.heartbeat_timeout")
	var takeover *sessionStart
	for _, st := range c.sessionStarts(t, "f1", "worker") {
		if st.worker != victim && (takeover == nil || st.at.Before(takeover.at)) {
			takeover = &st
		}
	}
	require.NotNil(t, takeover, "another worker started f1's worker session")
	after := takeover.at.Sub(killed)
	t.Logf("worker %d took the session over %s after the kill (heartbeat timeout %s)", takeover.worker, after, hb)
	require.LessOrEqual(t, after, hb+2*time.Minute, "taken over within the heartbeat timeout and a little more, long before the session timeout")
}

// The engine-only process SIGKILLed while runs are in flight, then
// started again on the same PostgreSQL: the workers reconnect and every
// run completes, each feature committed once.
func TestClusterEngineDiesAndRestarts(t *testing.T) {
	needsE2EAlone(t)
	script := clusterScript(t)
	held := script.Rules[1]
	held.Name, held.Times = "worker-f1-held", 1
	held.Replies = append([]fakemodel.Reply(nil), held.Replies...)
	held.Replies[0].Hold = "engine"
	script.Rules = append([]fakemodel.Rule{held}, script.Rules...)
	c := newCluster(t, script, 2)
	t.Cleanup(func() { c.w.model.Release("engine") })
	var repos, ids []string
	for i := 0; i < 2; i++ {
		repo, _ := toolsRepo(t)
		out, code := c.w.run(context.Background(), "start", "--detach", "--repo", repo, toolsGoal)
		require.Equal(t, 0, code, out)
		id := runIDRe.FindString(out)
		require.NotEmpty(t, id, out)
		repos, ids = append(repos, repo), append(ids, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := c.w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-f1-held" })
	require.NoError(t, err)

	pid := c.engine.Process.Pid
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 50*time.Millisecond)
	c.w.model.Release("engine") // the session finishes while the engine is down
	c.startEngine(t)
	t.Logf("engine killed (pid %d) and restarted (pid %d)", pid, c.engine.Process.Pid)

	for i, id := range ids {
		s := c.w.waitStatus(id, 5*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusCompleted, s.Status, "run %s: %s", id, s.Reason)
		require.Equal(t, map[string]int{"f1": 1, "f2": 1}, trailers(repos[i], id), "run %s: each feature committed once", id)
	}
}
