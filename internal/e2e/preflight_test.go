package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// Everything preflight can know is refused by `horizon start` before a run
// or lane exists (also with --detach), with exit 2 and a message naming the
// input and what to do; `horizon doctor` fails the same check. OpenCode is
// the real one, asked as `horizon models` asks it.
func TestPreflightRefusedBeforeStart(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{})

	good, _ := fixture(t)
	noExec := filepath.Join(t.TempDir(), "noexec")
	require.NoError(t, demo.CreateRepo(noExec, ""))
	require.NoError(t, os.Chmod(filepath.Join(noExec, ".horizon", "verify.sh"), 0o644))
	git(t, noExec, "update-index", "--chmod=-x", ".horizon/verify.sh")
	git(t, noExec, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gate loses its execute bit")
	dirGate := filepath.Join(t.TempDir(), "dirgate")
	require.NoError(t, demo.CreateRepo(dirGate, ""))
	git(t, dirGate, "rm", "-q", ".horizon/verify.sh")
	require.NoError(t, os.MkdirAll(filepath.Join(dirGate, ".horizon", "verify.sh"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dirGate, ".horizon", "verify.sh", "run"), []byte("#!/bin/sh\n"), 0o755))
	git(t, dirGate, "add", "-A")
	git(t, dirGate, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gate becomes a directory")
	// A user with no provider configured: OpenCode offers only its own
	// models, none of which the leaderboard ranks.
	bare := filepath.Join(t.TempDir(), "bare-user")
	require.NoError(t, os.MkdirAll(bare, 0o755))

	tests := []struct {
		name  string
		env   []string
		repo  string
		args  []string
		check string // doctor's failing check
		want  []string
	}{
		{"no model for a role", nil, good, nil, "models", []string{"no model for worker (build) and auditor (analyze)", "Use one of them for every role: --model ", "opencode auth login"}},
		{"no usable provider", []string{"HOME=" + bare, "XDG_CONFIG_HOME=" + filepath.Join(bare, ".config")}, good, nil, "models", []string{"no model for worker (build) and auditor (analyze)", "opencode auth login"}},
		{"--model OpenCode lacks", []string{"HORIZON_MODELS_DEFAULT=fake/no-such-model"}, good, nil, "models", []string{"fake/no-such-model", demo.Model, "horizon models"}},
		{"models.file missing", []string{"HORIZON_MODELS_FILE=/nonexistent/models.json"}, good, nil, "models", []string{"models.file /nonexistent/models.json"}},
		{"gate without exec bit", []string{"HORIZON_MODELS_DEFAULT=" + demo.Model}, noExec, nil, "gate", []string{filepath.Join(noExec, ".horizon", "verify.sh"), "lacks the execute bit", "chmod +x"}},
		{"gate is a directory", []string{"HORIZON_MODELS_DEFAULT=" + demo.Model}, dirGate, nil, "gate", []string{filepath.Join(dirGate, ".horizon", "verify.sh"), "is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := w.env
			w.env = append(append([]string{}, w.env...), tt.env...)
			defer func() { w.env = saved }()
			for _, detach := range [][]string{nil, {"--detach"}} {
				args := append(append(append([]string{"start", "--repo", tt.repo}, tt.args...), detach...), goal)
				out, code := w.run(context.Background(), args...)
				require.Equal(t, 2, code, "%v: %s", args, out)
				for _, s := range tt.want {
					require.Contains(t, out, s, "%v", args)
				}
				require.Nil(t, runIDRe.FindStringIndex(out), "no run was made: %s", out)
			}
			out, code := w.stdout("doctor", "--repo", tt.repo, "--json")
			require.Equal(t, 2, code, out)
			var checks []struct {
				Name string `json:"name"`
				OK   bool   `json:"ok"`
				Fix  string `json:"fix"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &checks), out)
			failed := map[string]bool{}
			for _, c := range checks {
				if !c.OK {
					failed[c.Name] = true
					require.NotEmpty(t, c.Fix, "%s says what to do", c.Name)
				}
			}
			require.True(t, failed[tt.check], "doctor passes %s: %s", tt.check, out)
		})
	}
	// Nothing was left: no daemon (one started for a model check was
	// stopped again), no run, no lane, no branch.
	_, err := os.Stat(filepath.Join(w.home, "server.pid"))
	require.True(t, os.IsNotExist(err), "a daemon was left running for bad input")
	lanes, _ := os.ReadDir(filepath.Join(w.home, "lanes"))
	require.Empty(t, lanes, "no lane")
	for _, r := range []string{good, noExec, dirGate} {
		require.Empty(t, git(t, r, "branch", "--list", "horizon*"), r)
	}
}

// A completed planned run leaves no lane directory and no lane branch;
// its integration branch, the result, stays, and gc finds nothing left.
func TestCompletedRunLeavesNoLanes(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{}) // the demo serves its own model
	dir := filepath.Join(t.TempDir(), "demo")

	out, code := w.run(context.Background(), "demo", "--dir", dir)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)
	require.Equal(t, horizon.StatusCompleted, w.status(id).Status)

	require.NoDirExists(t, filepath.Join(w.home, "lanes", id))
	require.Empty(t, git(t, dir, "branch", "--list", horizon.LaneBranch(id, "*")))
	require.Len(t, strings.Fields(git(t, dir, "rev-list", "main..horizon/"+id)), 2, "the two feature commits stay on horizon/<run>")
	require.NotContains(t, git(t, dir, "worktree", "list"), filepath.Join("lanes", id))

	out, code = w.stdout("gc", "--dry-run", "--json")
	require.Equal(t, 0, code, out)
	require.JSONEq(t, "[]", out)
}
