package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// tieredWorld serves two models from the scripted server behind one
// OpenCode provider: fake-local (cost class local) and fake-cloud
// (metered), ranked by a leaderboard file.
func tieredWorld(t *testing.T, script *fakemodel.Script) *world {
	w := newWorld(t, script)
	lb, err := filepath.Abs(filepath.Join("testdata", "leaderboard-tiers.json"))
	require.NoError(t, err)
	w.env = append(w.env, "HORIZON_MODELS_FILE="+lb)
	w.configureModels("fake-local", "fake-cloud")
	return w
}

func copyRepo(t *testing.T, src string) string {
	dst := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	require.NoError(t, os.Chmod(filepath.Join(dst, ".horizon", "verify.sh"), 0o755))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dst
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return dst
}

// A mechanical card is fixed by the repository's own ast-grep codemod (T0)
// with no model call for the change; only the auditor is a model.
func TestLadderMechanicalCardFixedByCodemod(t *testing.T) {
	needsE2E(t)
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Name: "auditor", When: []string{"# Audit (attempt 1)"},
		Replies: []fakemodel.Reply{{Text: "```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"}},
	}}}
	w := tieredWorld(t, script)
	repo := copyRepo(t, filepath.Join("testdata", "jsrepo"))

	out, code := w.run(context.Background(), "start", "--repo", repo, "--kind", "mechanical", "Make add return the sum")
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Len(t, s.Attempts, 1)
	require.Equal(t, "T0", s.Attempts[0].Tier)
	require.Equal(t, "ast-grep", s.Attempts[0].Applier)
	require.Contains(t, s.Attempts[0].Report.Summary, "broken.yml", "a rule that does not parse is reported, and the others still ran")
	require.Equal(t, []string{"add 2 3"}, s.Baseline.Failing)
	for _, r := range w.model.Requests() {
		require.True(t, r.Rule == "auditor" || r.Title, "only the auditor talks to a model, got %+v", r)
	}
	landed := git(t, repo, "show", "horizon/"+id+":add.js")
	require.Contains(t, landed, "return a + b")
	require.NotContains(t, landed, "a - b")
}

// A bounded card gets two local attempts; the local model fails twice
// with the same failing test, so the ladder climbs to the metered model,
// which fixes it.
func TestLadderClimbsFromLocalToMetered(t *testing.T) {
	needsE2E(t)
	demoRules := demoScript(t).Rules
	fix := demoRules[0] // worker-1: reads, fixes add.sh, reports
	fix.Name, fix.When = "cloud-fix", []string{"# Task (attempt 3 of"}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "local-noop", When: []string{"# Task (attempt "}, Unless: []string{"# Task (attempt 3 of"},
			Replies: []fakemodel.Reply{{Text: "Done.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"looked at it\"}\n```"}}},
		fix,
		{Name: "auditor", When: []string{"# Audit (attempt 3)"},
			Replies: []fakemodel.Reply{{Text: "```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"}}},
	}}
	w := tieredWorld(t, script)
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--max-attempts", "4", goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Len(t, s.Attempts, 3)
	require.Equal(t, []string{"T1", "T1", "T3"}, []string{s.Attempts[0].Tier, s.Attempts[1].Tier, s.Attempts[2].Tier})
	require.Equal(t, "fake/fake-local", s.Attempts[0].Model)
	require.Equal(t, "fake/fake-cloud", s.Attempts[2].Model)
	kinds := map[string]bool{}
	for _, tr := range s.Attempts[1].Triggers {
		kinds[tr.Kind] = true
	}
	require.True(t, kinds["same_failing_set"], "%+v", s.Attempts[1].Triggers)
	models := map[string]map[string]bool{}
	for _, r := range w.model.Requests() {
		if models[r.Rule] == nil {
			models[r.Rule] = map[string]bool{}
		}
		models[r.Rule][r.Model] = true
	}
	require.Equal(t, map[string]bool{"fake-local": true}, models["local-noop"])
	require.Equal(t, map[string]bool{"fake-cloud": true}, models["cloud-fix"])
	_ = demo.Model
}

// With a reader configured, the ladder's third step is T2: the reader
// model diagnoses the two failed local attempts (it touches no lane) and
// the local model applies the diagnosis, which it finds in its brief.
func TestLadderReaderGuidesLocalModel(t *testing.T) {
	needsE2E(t)
	demoRules := demoScript(t).Rules
	fix := demoRules[0]
	fix.Name, fix.When = "local-with-guidance", []string{"# Task (attempt 3 of", "## Guidance", "READER-SAYS-FLIP-THE-SIGN"}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "reader", When: []string{"You are the reader in horizon"},
			Replies: []fakemodel.Reply{{Text: "Likely cause: add.sh subtracts. READER-SAYS-FLIP-THE-SIGN in add.sh line 3.", Usage: &fakemodel.Usage{PromptTokens: 900, CompletionTokens: 40}}}},
		fix,
		{Name: "local-noop", When: []string{"# Task (attempt "}, Unless: []string{"## Guidance"},
			Replies: []fakemodel.Reply{{Text: "Done.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"looked at it\"}\n```"}}},
		{Name: "auditor", When: []string{"# Audit (attempt 3)"},
			Replies: []fakemodel.Reply{{Text: "```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"}}},
	}}
	w := tieredWorld(t, script)
	w.env = append(w.env, "HORIZON_READER_BASE_URL="+w.model.URL(), "HORIZON_READER_MODEL=fake-cloud")
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--max-attempts", "4", goal)
	require.Equal(t, 0, code, out)
	s := w.status(runIDRe.FindString(out))
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []string{"T1", "T1", "T2"}, []string{s.Attempts[0].Tier, s.Attempts[1].Tier, s.Attempts[2].Tier})
	require.Contains(t, s.Attempts[2].Guidance, "READER-SAYS-FLIP-THE-SIGN")
	require.Equal(t, "fake/fake-local", s.Attempts[2].Model, "the local model applies the reader's diagnosis")
	var readerReqs int
	for _, r := range w.model.Requests() {
		if r.Rule == "reader" {
			readerReqs++
			require.False(t, r.Stream, "the reader is a plain completion")
		}
	}
	require.Equal(t, 1, readerReqs)
}
