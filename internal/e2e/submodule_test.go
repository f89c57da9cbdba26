package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
)

// Lanes lack submodules (issue): the demo repository with a submodule its
// gate needs, added as `git submodule add <local path> lib`. The baseline
// and every attempt run in lanes with lib checked out from the
// repository's own copy (its original URL is gone), and the run completes.
func TestRunWithSubmoduleGate(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, demoScript(t))
	repo, _ := fixture(t)
	id := []string{"-c", "user.name=t", "-c", "user.email=t@t.invalid"}

	lib := filepath.Join(t.TempDir(), "lib-src")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	git(t, lib, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(lib, "VERSION"), []byte("lib 1\n"), 0o644))
	git(t, lib, "add", ".")
	git(t, lib, append(id, "commit", "-q", "-m", "lib")...)
	git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	verify := filepath.Join(repo, ".horizon", "verify.sh")
	body, err := os.ReadFile(verify)
	require.NoError(t, err)
	gateScript := strings.Replace(string(body), "set -e\n", "set -e\ntest -f \"$(dirname \"$0\")/../lib/VERSION\" || { echo 'submodule lib not checked out'; exit 3; }\n", 1)
	require.NotEqual(t, string(body), gateScript, "the demo gate has a set -e line to extend")
	require.NoError(t, os.WriteFile(verify, []byte(gateScript), 0o755))
	git(t, repo, "add", ".")
	git(t, repo, append(id, "commit", "-q", "-m", "gate needs lib")...)
	// The gate passes in the repository as far as lib goes (the demo's own
	// test still fails: that is the run's work).
	out, _ := w.run(context.Background(), "gate", "--repo", repo)
	require.NotContains(t, out, "submodule lib not checked out")
	require.NoError(t, os.RemoveAll(lib), "lanes must not need the submodule's URL")

	out, code := w.run(context.Background(), "start", "--single", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	runID := runIDRe.FindString(out)
	require.NotEmpty(t, runID, out)
	s := w.status(runID)
	require.Equal(t, horizon.StatusCompleted, s.Status, "%+v", s)
	for _, a := range s.Attempts {
		if a.Gate != nil {
			require.NotContains(t, a.Gate.Tail, "submodule lib not checked out", "attempt %d", a.N)
		}
	}
	require.NotNil(t, s.Baseline)
	require.NotContains(t, s.Baseline.Tail, "submodule lib not checked out")
	require.Equal(t, git(t, repo, "rev-parse", "main:lib"), git(t, repo, "rev-parse", "horizon/"+runID+":lib"), "the landed change keeps the submodule's commit")
}
