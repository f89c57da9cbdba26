package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// Without --model each role gets the best-ranked reachable model of the
// leaderboard: the worker fake-coder (build), the auditor fake-reviewer
// (analyze); an unreachable better-ranked model is skipped; a role with no
// reachable model is reported, with the roles that are available.
func TestRolesFromLeaderboard(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, demoScript(t))
	lb, err := filepath.Abs(filepath.Join("testdata", "leaderboard.json"))
	require.NoError(t, err)
	w.env = append(w.env, "HORIZON_MODELS_FILE="+lb)
	w.configureModels("fake-coder", "fake-reviewer")
	repo, _ := fixture(t)

	out, code := w.stdout("models", "--repo", repo, "--json")
	require.Equal(t, 0, code, out)
	var rep struct {
		Roles map[string]struct {
			Route string `json:"route"`
			Why   string `json:"why"`
		} `json:"roles"`
		Unavailable map[string]string `json:"unavailable"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "fake/fake-coder", rep.Roles["build"].Route)
	require.Equal(t, "fake/fake-reviewer", rep.Roles["analyze"].Route)
	require.Contains(t, rep.Unavailable["research"], "roles available")

	o, code := w.run(context.Background(), "start", "--repo", repo, goal)
	require.Equal(t, 0, code, o)
	id := runIDRe.FindString(o)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, map[horizon.Role]string{horizon.RoleWorker: "fake/fake-coder", horizon.RoleAuditor: "fake/fake-reviewer"}, s.Models)

	byRule := map[string]map[string]bool{}
	for _, r := range w.model.Requests() {
		if r.Rule == "" {
			continue
		}
		if byRule[r.Rule] == nil {
			byRule[r.Rule] = map[string]bool{}
		}
		byRule[r.Rule][r.Model] = true
	}
	require.Equal(t, map[string]bool{"fake-coder": true}, byRule["worker-1"])
	require.Equal(t, map[string]bool{"fake-reviewer": true}, byRule["auditor-1"])

	// A broken leaderboard is bad input, named, before anything starts.
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"revision": 1, "models": [{"name": "x", "routes": [], "roles": {"build": {"rank": 1}}}]}`), 0o644))
	w.env = append(w.env, "HORIZON_MODELS_FILE="+bad)
	o, code = w.run(context.Background(), "start", "--repo", repo, goal)
	require.Equal(t, 2, code, o)
	require.Contains(t, o, bad)
	require.Contains(t, o, "routes")
}
