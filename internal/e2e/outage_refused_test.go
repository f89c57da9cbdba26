package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// refusedKey is what the provider answers f1's worker: a refusal that
// waiting cannot change.
const refusedKey = "Incorrect API key provided: sk-hz-0000. You can find your API key at https://example.invalid/keys."

// A planned run whose provider refuses f1's worker with a 401: f1 is
// blocked missing_credential within a minute, with the provider's words as
// evidence (the session is not retried for days), while the independent
// features go on and are accepted.
func TestOutageProviderRefusalBlocks(t *testing.T) {
	needsE2E(t)
	refuse := fakemodel.Rule{Name: "worker-f1-401", When: []string{"# Task (attempt", "Feature f1:"},
		Replies: []fakemodel.Reply{{Status: 401, Error: refusedKey}}}
	w := plannedWorld(t, toolsScript(t, refuse))
	repo, _ := toolsRepo(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	// f1 is blocked within a minute of its worker's first request.
	_, err := w.model.WaitForRequest(t.Context(), func(r fakemodel.Request) bool { return r.Rule == "worker-f1-401" })
	require.NoError(t, err)
	asked := time.Now()
	s := w.waitStatus(id, time.Minute, func(s horizon.RunState) bool {
		return s.Status.Terminal() || planFeatures(s.Plan)["f1"].Status == horizon.FeatureBlocked
	})
	t.Logf("f1 blocked %s after the provider's 401", time.Since(asked).Round(time.Second))
	f1 := planFeatures(s.Plan)["f1"]
	require.Equal(t, horizon.FeatureBlocked, f1.Status, "%s: %s", s.Status, s.Reason)
	require.NotNil(t, f1.Blocker)
	require.Equal(t, horizon.BlockerMissingCredential, f1.Blocker.Type)
	require.Contains(t, f1.Blocker.Evidence, "Incorrect API key provided", "the provider's words are the evidence")
	require.Len(t, f1.Attempts, 1, "a refusal is not retried")
	require.Equal(t, horizon.OutcomeBlocked, f1.Attempts[0].Outcome)

	// The independent features go on.
	s = w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool {
		fs := planFeatures(s.Plan)
		return s.Status.Terminal() || s.Status == horizon.StatusBlocked &&
			fs["f2"].Status == horizon.FeatureAccepted && fs["f3"].Status == horizon.FeatureAccepted && fs["f4"].Status == horizon.FeatureAccepted
	})
	require.Equal(t, horizon.StatusBlocked, s.Status, s.Reason)
	fs := planFeatures(s.Plan)
	for _, id := range []string{"f2", "f3", "f4"} {
		require.Equal(t, horizon.FeatureAccepted, fs[id].Status, id)
	}
	require.Equal(t, horizon.FeatureBlocked, fs["f1"].Status)
	n := 0
	for _, r := range w.model.Requests() {
		if r.Rule == "worker-f1-401" {
			n++
		}
	}
	require.LessOrEqual(t, n, 3, "the refused request was not retried (OpenCode may ask once more on its own)")

	text, code := w.run(t.Context(), "status", id)
	require.Equal(t, 0, code, text)
	require.Contains(t, text, "missing_credential")
}
