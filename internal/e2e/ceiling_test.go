package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// A run whose worker spends past the throttle point of its ceiling pauses
// before its next metered call (the auditor's: no local model ranks for
// it) and resumes when `horizon set-ceiling` raises the ceiling above its
// spend.
func TestSpendCeilingPauseAndRaise(t *testing.T) {
	needsE2E(t)
	w, id, s := pausedAtCeiling(t)
	require.Equal(t, horizon.StatusRunning, s.Status, "paused is not failed")
	require.Len(t, s.Attempts, 1)
	require.Contains(t, s.Reason, "the auditor's model "+demo.Model+" is metered")
	require.Contains(t, s.Reason, "ceiling (run $0.0050")
	require.Contains(t, s.Reason, "horizon set-ceiling "+id)
	// The ceiling holds to within the one call in flight: the worker's
	// session started under it, and nothing metered started after it.
	inFlight := s.Attempts[0].Usage.Cost
	require.Empty(t, s.Attempts[0].AuditorSession, "no auditor session past the ceiling")
	for _, r := range w.model.Requests() {
		require.False(t, strings.HasPrefix(r.Rule, "auditor-"), "the auditor's model was called past the ceiling: %s", r.Rule)
	}
	require.Greater(t, s.Usage.Cost, s.Ceiling, "the worker's session crossed the ceiling, as set up")
	require.LessOrEqual(t, s.Usage.Cost, s.Ceiling+inFlight+1e-9,
		"spend $%.6f is within the ceiling $%.6f and the one call in flight ($%.6f)", s.Usage.Cost, s.Ceiling, inFlight)

	o, code := w.run(context.Background(), "set-ceiling", id, "0.001")
	require.Equal(t, 2, code, o)
	require.Contains(t, o, "not above what the run has spent")

	o, code = w.run(context.Background(), "set-ceiling", id, "1")
	require.Equal(t, 0, code, o)
	s = w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, 1.0, s.Ceiling)
}

// pausedAtCeiling is a one-feature run whose $0.005 ceiling paused it
// after its worker's first session, before its auditor's.
func pausedAtCeiling(t *testing.T) (w *world, id string, s horizon.RunState) {
	t.Helper()
	w = newWorld(t, demoScript(t))
	w.env = append(w.env, "HORIZON_SPEND_CEILING=0.005") // the first attempt alone costs more
	repo, _ := fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id = strings.TrimSpace(out)
	s = w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Phase == horizon.PhasePaused })
	return w, id, s
}

// localWorld serves a metered model (fake-cloud) and a local one
// (fake-local, which costs nothing, as a local model does) and ranks the
// local one for every role after the metered one (testdata/leaderboard-
// local.json): the metered model serves each role until a ceiling nears.
func localWorld(t *testing.T, script *fakemodel.Script) *world {
	w := tieredWorld(t, script)
	lb, err := filepath.Abs(filepath.Join("testdata", "leaderboard-local.json"))
	require.NoError(t, err)
	w.env = append(w.env, "HORIZON_MODELS_FILE="+lb)
	path := filepath.Join(envValue(w.env, "XDG_CONFIG_HOME"), "opencode", "opencode.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	models := cfg["provider"].(map[string]any)[fakemodel.ProviderID].(map[string]any)["models"].(map[string]any)
	models["fake-local"].(map[string]any)["cost"] = map[string]float64{"input": 0, "output": 0}
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return w
}

// With a run ceiling brought near the spend so far and a local model
// ranked for every role, the auditor's next session runs on the local
// model instead of its metered one, the run goes on without a pause, and
// the ceiling is never passed. The first attempt's auditor (metered)
// rejects; while the second attempt's worker is held, the ceiling is set
// just above what the run has spent, past the throttle point.
func TestSpendCeilingAuditorGoesLocal(t *testing.T) {
	needsE2E(t)
	script := demoScript(t)
	for i, r := range script.Rules {
		if r.Name == "worker-2" {
			script.Rules[i].Replies = slices.Clone(r.Replies)
			script.Rules[i].Replies[0].Hold = "ceiling"
		}
	}
	w := localWorld(t, script)
	repo, _ := fixture(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-2" })
	require.NoError(t, err)

	s := w.status(id)
	require.Equal(t, horizon.StatusRunning, s.Status, s.Reason)
	require.Len(t, s.Attempts, 2)
	first := s.Attempts[0]
	require.Equal(t, horizon.OutcomeRejected, first.Outcome)
	require.Equal(t, "fake/fake-local", first.Model, "the ladder's first rung is local")
	require.Equal(t, "fake/fake-cloud", first.AuditorModel, "far from any ceiling the auditor is metered")
	spent := s.Usage.Cost
	require.Greater(t, spent, 0.0, "the metered auditor cost something")
	ceiling := spent * 1.1 // past the default throttle point (0.8 of it)
	o, code := w.run(t.Context(), "set-ceiling", id, fmt.Sprintf("%.6f", ceiling))
	require.Equal(t, 0, code, o)
	w.model.Release("ceiling")

	s = w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() || s.Phase == horizon.PhasePaused })
	require.Equal(t, horizon.StatusCompleted, s.Status, "%s · %s: %s", s.Status, s.Phase, s.Reason)
	require.Len(t, s.Attempts, 2)
	second := s.Attempts[1]
	require.Equal(t, horizon.OutcomeAccepted, second.Outcome)
	require.Equal(t, "fake/fake-local", second.AuditorModel, "near the ceiling the auditor's session is local")
	models := map[string][]string{}
	for _, r := range w.model.Requests() {
		if strings.HasPrefix(r.Rule, "auditor-") && !slices.Contains(models[r.Rule], r.Model) {
			models[r.Rule] = append(models[r.Rule], r.Model)
		}
	}
	require.Equal(t, map[string][]string{"auditor-1": {"fake-cloud"}, "auditor-2": {"fake-local"}}, models)
	t.Logf("spent $%.6f before the ceiling $%.6f, $%.6f at the end", spent, s.Ceiling, s.Usage.Cost)
	require.InDelta(t, ceiling, s.Ceiling, 1e-6)
	require.LessOrEqual(t, s.Usage.Cost, s.Ceiling, "the ceiling is never passed")
}
