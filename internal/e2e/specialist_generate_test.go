package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

const (
	shellReviewPurpose = "SPEC-SHELL-7K: review the shell scripts for quoting and portability"
	delegatorPurpose   = "SPEC-DELEGATE-3Q: a reviewer that hands hard files to other agents"
	// shellReviewPrompt is the drafted prompt's body; its ``` fence is why
	// the block is fenced with four backticks.
	shellReviewPrompt = "Review the shell scripts you are given (add.sh and its tests) for unquoted\nvariables and bashisms. Run nothing; quote the line:\n\n```sh\necho \"$1\"\n```"
)

// draftReply is the lead's final message: prose, then the manifest in a
// horizon-specialist block.
func draftReply(front string) string {
	return "I read add.sh; here is the specialist.\n\n````horizon-specialist\n---\n" + front + "---\n\n" + shellReviewPrompt + "\n````\n"
}

// generatedDraft is `horizon specialist generate --json`'s object, every
// key a script reads.
type generatedDraft struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Scope      string   `json:"scope"`
	Path       string   `json:"path"`
	Manifest   string   `json:"manifest"`
	Tools      []string `json:"tools"`
	ReadOnly   bool     `json:"read_only"`
	Model      string   `json:"model"`
	Session    string   `json:"session"`
	Transcript string   `json:"transcript"`
	Written    bool     `json:"written"`
}

// `horizon specialist generate`: the scripted lead reads the repository
// and drafts a manifest; with --yes it is written to the project scope
// and `horizon specialist show` shows it. A draft that gives the
// specialist the task tool is refused (exit 2, naming the tool) and
// nothing is written; so is a run without --yes and no terminal, before
// the lead is asked.
func TestSpecialistGenerate(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "draft", When: []string{"# Specialist", "SPEC-SHELL-7K"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{Text: draftReply("name: shell-review\ndescription: Reviews shell scripts for quoting and portability.\nrole: analyze\ntools:\n  - read-only\n  - plan\n")},
		}},
		{Name: "draft-delegator", When: []string{"# Specialist", "SPEC-DELEGATE-3Q"}, Replies: []fakemodel.Reply{
			{Text: draftReply("name: delegator\ndescription: Hands hard files to other agents.\ntools:\n  - read-only\n  - task\n")},
		}},
	}})
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, head := fixture(t)
	dir := filepath.Join(repo, ".horizon", "specialists")

	t.Run("writes the lead's draft", func(t *testing.T) {
		out, code := w.stdout("specialist", "generate", "--repo", repo, "--yes", "--json", shellReviewPurpose)
		require.Equal(t, 0, code, out)
		var d generatedDraft
		require.NoError(t, json.Unmarshal([]byte(out), &d), out)
		require.Equal(t, "shell-review", d.Name)
		require.Equal(t, "project", d.Scope)
		require.Equal(t, filepath.Join(dir, "shell-review.md"), d.Path)
		require.True(t, d.Written)
		require.True(t, d.ReadOnly)
		require.Equal(t, []string{"read-only", "plan"}, d.Tools)
		require.Equal(t, demo.Model, d.Model, "the lead's model (models.default)")
		require.NotEmpty(t, d.Session)
		b, err := os.ReadFile(d.Path)
		require.NoError(t, err)
		require.Equal(t, d.Manifest, string(b), "what was shown is what was written")
		require.Contains(t, string(b), "role: analyze\n")
		require.Contains(t, string(b), "```sh\necho \"$1\"\n```")

		// The lead read the repository and wrote nothing: the manifest is
		// the only change, and HEAD is where it was.
		require.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
		require.Equal(t, "?? .horizon/specialists/", git(t, repo, "status", "--porcelain"))
		require.Equal(t, 2, drafts(w, "draft"), "the lead read add.sh, then answered")

		out, code = w.stdout("specialist", "show", "shell-review", "--repo", repo)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "shell-review  (project, "+d.Path+")")
		require.Contains(t, out, "Reviews shell scripts for quoting and portability.")
		require.Contains(t, out, "role       analyze")
		require.Contains(t, out, "read-only;")
		require.Contains(t, out, "Review the shell scripts you are given")

		// The same name again is taken: refused before the lead is asked.
		out, code = w.run(t.Context(), "specialist", "generate", "--repo", repo, "--yes", "--name", "shell-review", shellReviewPurpose)
		require.Equal(t, 2, code, out)
		require.Contains(t, out, "shell-review is a project specialist")
		require.Contains(t, out, "--force")
		require.Equal(t, 2, drafts(w, "draft"), "refused before the lead is asked")
		recordHistory(t, w, d.ID, "specialist-draft.json")
	})

	t.Run("refuses a forbidden tool", func(t *testing.T) {
		out, code := w.run(t.Context(), "specialist", "generate", "--repo", repo, "--yes", delegatorPurpose)
		require.Equal(t, 2, code, out)
		require.Contains(t, out, filepath.Join(dir, "delegator.md")+":")
		require.Contains(t, out, `the tool "task", which no specialist may have`)
		require.Contains(t, out, "nothing written")
		require.Equal(t, 1, drafts(w, "draft-delegator"))
		require.NoFileExists(t, filepath.Join(dir, "delegator.md"))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "only shell-review.md")
	})

	t.Run("without --yes and a terminal", func(t *testing.T) {
		out, code := w.run(t.Context(), "specialist", "generate", "--repo", repo, shellReviewPurpose)
		require.Equal(t, 2, code, out)
		require.Contains(t, out, "pass --yes")
		require.Equal(t, 2, drafts(w, "draft"), "the lead is not asked")
	})
}

// drafts counts the model's requests that rule answered.
func drafts(w *world, rule string) int {
	n := 0
	for _, r := range w.model.Requests() {
		if r.Rule == rule {
			n++
		}
	}
	return n
}
