package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// Bad input that is caught before anything starts: a clear message naming
// the input, exit 2 (or 3 for the environment), and nothing created.
func TestBadInputBeforeStart(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{})
	repoDir, head := fixture(t)

	noGit := t.TempDir()
	noGate := filepath.Join(t.TempDir(), "nogate")
	require.NoError(t, demo.CreateRepo(noGate, ""))
	git(t, noGate, "rm", "-q", ".horizon/verify.sh")
	git(t, noGate, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "drop gate")

	dirty := filepath.Join(t.TempDir(), "dirty")
	require.NoError(t, demo.CreateRepo(dirty, ""))
	require.NoError(t, os.WriteFile(filepath.Join(dirty, "add.sh"), []byte("echo 5\n"), 0o755))

	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"not a git repo", nil, []string{"start", "--repo", noGit, "--model", demo.Model, goal}, 2, []string{"not a git repository", "git init"}},
		{"no gate", nil, []string{"start", "--repo", noGate, "--model", demo.Model, goal}, 2, []string{"no gate", ".horizon/verify.sh"}},
		{"dirty repo", nil, []string{"start", "--repo", dirty, "--model", demo.Model, goal}, 2, []string{"uncommitted changes", "add.sh", "--allow-dirty"}},
		{"leaderboard missing", []string{"HORIZON_MODELS_FILE=/nonexistent/models.json"}, []string{"start", "--repo", repoDir, goal}, 2, []string{"models.file /nonexistent/models.json"}},
		{"malformed model", nil, []string{"start", "--repo", repoDir, "--model", "gpt4", goal}, 2, []string{"PROVIDER/MODEL"}},
		{"no goal", nil, []string{"start", "--repo", repoDir}, 2, []string{"needs a goal"}},
		{"unknown flag", nil, []string{"start", "--frobnicate", goal}, 2, []string{"frobnicate"}},
		{"opencode missing", []string{"HORIZON_AGENT_OPENCODE_BIN=/nonexistent/opencode"}, []string{"start", "--repo", repoDir, "--model", demo.Model, goal}, 3, []string{"opencode not found", "npm install -g opencode-ai"}},
		{"bad config value", []string{"HORIZON_RUN_MAX_ATTEMPTS=zero"}, []string{"start", "--repo", repoDir, "--model", demo.Model, goal}, 2, []string{"run.max_attempts"}},
		{"status without daemon", nil, []string{"status"}, 3, []string{"horizon resume"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := w.env
			w.env = append(append([]string{}, w.env...), tt.env...)
			defer func() { w.env = saved }()
			out, code := w.run(context.Background(), tt.args...)
			require.Equal(t, tt.code, code, out)
			for _, s := range tt.want {
				require.Contains(t, out, s)
			}
		})
	}
	// Nothing was started or written into the user's repository.
	_, err := os.Stat(filepath.Join(w.home, "server.pid"))
	require.True(t, os.IsNotExist(err), "a daemon was started for bad input")
	require.Equal(t, head, git(t, repoDir, "rev-parse", "HEAD"))
	require.NotContains(t, git(t, repoDir, "branch", "--list"), "horizon/")
}

// Bad input only the running system can see: an unknown model (OpenCode does
// not know it), a model reply without the protocol block, and a second
// daemon on the same home.
func TestBadInputAtRuntime(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{Fallback: &fakemodel.Reply{Text: "I fixed it, trust me."}})
	repoDir, _ := fixture(t)
	// opencode, through a wrapper that notes how it is run: a cold start
	// starts OpenCode once, with the daemon, and asks that server for the
	// models instead of running `opencode models` first.
	calls := filepath.Join(t.TempDir(), "opencode-calls")
	wrapper := filepath.Join(t.TempDir(), "opencode")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$1\" >> '"+calls+"'\nexec '"+opencodeBin+"' \"$@\"\n"), 0o755))
	w.env = append(w.env, "HORIZON_AGENT_OPENCODE_BIN="+wrapper)
	started := func() []string {
		b, _ := os.ReadFile(calls)
		return strings.Fields(string(b))
	}

	out, code := w.run(context.Background(), "start", "--repo", repoDir, "--model", "fake/no-such-model", goal)
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "fake/no-such-model")
	require.Contains(t, out, "fake/fake-coder", "the error lists the models that are available")
	require.Equal(t, []string{"serve"}, started(), "one OpenCode, the daemon's, answered the model check")
	_, err := os.Stat(filepath.Join(w.home, "server.pid"))
	require.True(t, os.IsNotExist(err), "the daemon started for the model check was stopped again")

	out, code = w.run(context.Background(), "start", "--repo", repoDir, "--model", demo.Model, "--max-attempts", "1", goal)
	require.Equal(t, 1, code, out)
	require.Equal(t, []string{"serve", "serve"}, started(), "a cold start runs no `opencode models`")
	require.Contains(t, out, "horizon-report")
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, "failed", string(s.Status))
	require.Len(t, s.Attempts, 1)
	require.Equal(t, "protocol_error", string(s.Attempts[0].Outcome))
	require.Nil(t, s.Attempts[0].Gate, "a reply without a protocol block never reaches the gate")
	require.NotContains(t, git(t, repoDir, "branch", "--list", "horizon/"+id, "--format=%(objectname)"), git(t, repoDir, "rev-parse", "HEAD")+"x")
	require.Equal(t, git(t, repoDir, "rev-parse", "main"), git(t, repoDir, "rev-parse", "horizon/"+id), "nothing was committed")

	out, code = w.run(context.Background(), "server")
	require.Equal(t, 3, code, out)
	require.Contains(t, out, "already running")
	require.True(t, strings.Contains(out, "horizon stop"))

	// A 4.7 MB roadmap (a log committed under its name) reaches no
	// workflow: the supervisor says why it waits, decomposes nothing and
	// stays up, and `horizon roadmap` refuses it as bad input.
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, demo.CreateRepo(big, ""))
	item := "- [ ] Make the export twice as fast without changing its output format\n"
	require.NoError(t, os.WriteFile(filepath.Join(big, ".horizon", "roadmap.md"), []byte(strings.Repeat(item, 4_700_000/len(item))), 0o644))
	git(t, big, "add", ".horizon/roadmap.md")
	git(t, big, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a roadmap too large")
	// --model, as `horizon start` takes it: without it a supervisor
	// resolves its roles by the leaderboard, which ranks no fake model.
	out, code = w.run(context.Background(), "supervisor", "start", "--repo", big, "--autonomy", "full", "--day-ceiling", "1", "--model", demo.Model)
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool {
		out, code = w.run(context.Background(), "supervisor", "status", "--repo", big)
		return code == 0 && strings.Contains(out, "roadmap    waits for a fix on main: roadmap .horizon/roadmap.md at ")
	}, patience(time.Minute), time.Second, "supervisor status never said why the roadmap is not read: %s", out)
	require.Contains(t, out, "a roadmap may be 512.0 KiB at most")
	require.Contains(t, out, "runs       0 started, 0 decompositions")
	out, code = w.run(context.Background(), "roadmap", "--repo", big)
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "512.0 KiB")
	out, code = w.run(context.Background(), "supervisor", "stop", "--repo", big)
	require.Equal(t, 0, code, out)
}
