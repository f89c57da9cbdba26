package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

const goal = "Make the gate pass: add.sh must print the sum of its two arguments."

func demoScript(t *testing.T) *fakemodel.Script {
	s, err := demo.Script()
	require.NoError(t, err)
	return s
}

func fixture(t *testing.T) (dir, head string) {
	dir = filepath.Join(t.TempDir(), "repo")
	require.NoError(t, demo.CreateRepo(dir, ""))
	return dir, git(t, dir, "rev-parse", "HEAD")
}

var runIDRe = regexp.MustCompile(`run-\d{8}-\d{6}-[0-9a-f]{6}`)

// The whole loop, all real but the model: the gate is red, the worker fixes
// add.sh, the auditor rejects once with a finding, the next brief carries
// it, the worker adds the test, the auditor accepts, and exactly one commit
// with exactly those two files lands on horizon/<run>. The user's branch
// and work tree are untouched.
func TestStartFixesRepoThroughRejection(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, demoScript(t))
	repo, head := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)
	require.Contains(t, out, "attempt 1 audit reject")
	require.Contains(t, out, "attempt 2 accepted")
	require.Contains(t, out, "completed")

	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, "horizon/"+id, s.Branch)
	require.Len(t, s.Attempts, 2)
	require.Equal(t, horizon.OutcomeRejected, s.Attempts[0].Outcome)
	require.Equal(t, "pass", s.Attempts[0].Gate.Verdict)
	require.Equal(t, horizon.OutcomeAccepted, s.Attempts[1].Outcome)
	require.Greater(t, s.Usage.Cost, 0.0)
	require.Greater(t, s.Usage.Input, int64(0))
	require.NotEqual(t, s.Attempts[0].WorkerSession, s.Attempts[1].WorkerSession)

	// Receipts: the baseline names the failing test (parsed from the gate's
	// TAP output), each gate run has a receipt in receipts.jsonl, and the
	// accepted attempt's snapshot holds exactly the two changed files.
	require.NotNil(t, s.Baseline)
	require.Equal(t, "fail", s.Baseline.Verdict)
	require.Equal(t, []string{"add 2 3"}, s.Baseline.Failing)
	require.True(t, s.Baseline.FailingKnown)
	require.Empty(t, s.Baseline.ChangedFiles)
	require.ElementsMatch(t, []string{"add.sh", "tests/test_add.sh"}, s.Attempts[1].Gate.ChangedFiles)
	receipts, err := gate.ReadReceipts(filepath.Join(w.home, "runs", id, "receipts.jsonl"))
	require.NoError(t, err)
	require.Len(t, receipts, 3, "baseline + one per gated attempt")
	ids := map[string]bool{}
	for _, r := range receipts {
		ids[r.ID] = true
	}
	require.True(t, ids[s.Baseline.ReceiptID] && ids[s.Attempts[0].Gate.ReceiptID] && ids[s.Attempts[1].Gate.ReceiptID])

	// The second worker conversation matched only because its brief
	// carried the auditor's finding ("negative numbers").
	rules := map[string]int{}
	for _, r := range w.model.Requests() {
		if r.Step == 0 && r.Rule != "" {
			rules[r.Rule]++
		}
	}
	require.Equal(t, 1, rules["worker-2"], "attempt 2's brief must carry the finding: %v", rules)
	require.Equal(t, 1, rules["worker-1"])

	// Exactly one commit on the integration branch, with exactly the fix.
	require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the user's branch moved")
	require.Empty(t, git(t, repo, "status", "--porcelain"), "the user's work tree changed")
	commits := strings.Fields(git(t, repo, "rev-list", "main..horizon/"+id))
	require.Len(t, commits, 1)
	require.Equal(t, s.Commit, commits[0])
	files := strings.Fields(git(t, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", commits[0]))
	require.ElementsMatch(t, []string{"add.sh", "tests/test_add.sh"}, files)
	require.Contains(t, git(t, repo, "show", "horizon/"+id+":add.sh"), "$(( $1 + $2 ))")
	require.Contains(t, git(t, repo, "log", "-1", "--format=%B", commits[0]), "Horizon-Feature: "+id+"/f1")
	require.Contains(t, git(t, repo, "show", "main:add.sh"), "$(( $1 - $2 ))")

	// The handoff claims what the receipts back: the feature completed with
	// its commit and the receipt of the accepted attempt.
	require.Equal(t, filepath.Join(w.home, "runs", id, "handoff.md"), s.Handoff)
	handoff, err := os.ReadFile(s.Handoff)
	require.NoError(t, err)
	require.Contains(t, string(handoff), s.Commit[:7])
	require.Contains(t, string(handoff), s.Attempts[1].Gate.ReceiptID)
	require.NotContains(t, string(handoff), "Not verified")

	// Artifacts and listing.
	for _, f := range []string{"transcripts/f1-attempt-1-worker.md", "transcripts/f1-attempt-1-auditor.md", "gate/f1-attempt-2.log", "gate/f1-baseline.log"} {
		_, err := os.Stat(filepath.Join(w.home, "runs", id, f))
		require.NoError(t, err, f)
	}
	lst, code := w.stdout("list", "--json")
	require.Equal(t, 0, code)
	var runs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(lst), &runs))
	require.Len(t, runs, 1)
	require.Equal(t, id, runs[0]["run_id"])
	require.Equal(t, "completed", runs[0]["status"])

	// Search attributes: runs filter by status and repository.
	for _, q := range []struct {
		args []string
		want int
	}{
		{[]string{"--status", "completed"}, 1},
		{[]string{"--status", "running"}, 0},
		{[]string{"--here", "--repo", repo}, 1},
		{[]string{"--here", "--repo", t.TempDir()}, -1}, // not a git repository: exit 2
	} {
		lst, code := w.stdout(append([]string{"list", "--json"}, q.args...)...)
		if q.want < 0 {
			require.Equal(t, 2, code, q.args)
			continue
		}
		require.Equal(t, 0, code, q.args)
		var got []map[string]any
		require.NoError(t, json.Unmarshal([]byte(lst), &got))
		require.Len(t, got, q.want, q.args)
	}
}

// SIGKILL the daemon while the worker's model request is in flight; `horizon
// resume` brings it back and the run finishes in the same OpenCode session,
// with the fix committed exactly once, and nothing of the first daemon left
// running.
func TestCrashAndResumeContinuesSession(t *testing.T) {
	needsE2E(t)
	t.Run("SIGKILL", func(t *testing.T) { crashAndResume(t, true) })
	// `horizon stop` (a shutdown or reboot) mid-session: the same promise.
	t.Run("horizon stop", func(t *testing.T) { crashAndResume(t, false) })
}

func crashAndResume(t *testing.T, kill bool) {
	script := demoScript(t)
	// The first worker conversation hangs at its first model call until the
	// daemon is killed; later conversations use the demo's rules.
	crash := script.Rules[0]
	crash.Name = "worker-crash"
	crash.Times = 1
	crash.Replies = []fakemodel.Reply{{Hold: "crash", Text: "never sent"}}
	script.Rules = append([]fakemodel.Rule{crash}, script.Rules...)
	w := newWorld(t, script)
	repo, head := fixture(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-crash" })
	require.NoError(t, err)
	before := w.waitStatus(id, time.Minute, func(s horizon.RunState) bool {
		return len(s.Attempts) == 1 && s.Attempts[0].WorkerSession != ""
	})
	session := before.Attempts[0].WorkerSession
	agents := agentPIDs(t, w.home)
	require.NotEmpty(t, agents)

	pid := w.daemonPID()
	if kill {
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	} else {
		out, code := w.run(ctx, "stop")
		require.Equal(t, 0, code, out)
	}
	require.Eventually(t, func() bool { return !alive(pid) }, 30*time.Second, 50*time.Millisecond)
	// The parent-death signal takes OpenCode down with the daemon.
	require.Eventually(t, func() bool {
		for _, p := range agents {
			if alive(p) {
				return false
			}
		}
		return true
	}, 15*time.Second, 100*time.Millisecond, "an agent process outlived the daemon")

	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, id)
	require.Contains(t, out, "continuing")

	final := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, "%+v", final)
	require.Equal(t, session, final.Attempts[0].WorkerSession, "the crashed session was not continued")
	require.True(t, final.Attempts[0].Resumed)

	// The continued session's first request after the restart was a new step 0
	// in the same conversation, served by worker-1; no other worker-1
	// conversation was opened for attempt 1.
	n := 0
	for _, r := range w.model.Requests() {
		if r.Rule == "worker-1" && r.Step == 0 {
			n++
		}
	}
	require.Equal(t, 1, n, "a second paid session was started for attempt 1")

	commits := strings.Fields(git(t, repo, "rev-list", "main..horizon/"+id))
	require.Len(t, commits, 1, "the fix must land exactly once")
	require.Equal(t, head, git(t, repo, "rev-parse", "main"))
}

func agentPIDs(t *testing.T, home string) []int {
	b, err := os.ReadFile(filepath.Join(home, "agents.pids"))
	require.NoError(t, err)
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p, err := strconv.Atoi(f[0])
		require.NoError(t, err)
		pids = append(pids, p)
	}
	return pids
}
