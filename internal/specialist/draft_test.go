package specialist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every draft in testdata/drafts, checked as `horizon specialist generate`
// checks the lead's: what passes, and what is refused with which problem,
// naming the file it would have been written to and the line.
func TestCheckDraft(t *testing.T) {
	dir := filepath.Join("repo", ".horizon", "specialists")
	for _, tc := range []struct {
		file, name string
		problem    DraftProblem // "" : accepted
		want       []string     // in the error, or (accepted) in the rendered manifest
	}{
		{"good.md", "", "", []string{"name: shell-review\n", "role: analyze\n", "  - read-only\n  - plan\n", "missing `set -e`"}},
		{"good.md", "sh-lint", "", []string{"name: sh-lint\n", "description: Reviews shell scripts"}},
		{"no-name.md", "build-guide", "", []string{"name: build-guide\n"}},
		{"forbidden.md", "", DraftForbiddenTool, []string{filepath.Join(dir, "shell-review.md") + ":4:", `tool "task"`, "no specialist may have", "nothing written"}},
		{"forbidden.md", "other", DraftForbiddenTool, []string{filepath.Join(dir, "other.md"), `"task"`}},
		{"forbidden-zero.md", "", DraftForbiddenTool, []string{`"GenerateSpecialist"`}},
		{"webfetch.md", "", DraftOutOfScope, []string{"doc-reader.md:4:", `tool "webfetch"`, "read-only, edit, execute, plan", "horizon specialist edit"}},
		{"extends.md", "", DraftExtends, []string{"extends code-review", "stands alone"}},
		{"unknown-key.md", "", DraftInvalid, []string{"shell-review.md:3:", `unknown key "mode"`, "horizon specialist create"}},
		{"no-name.md", "", DraftInvalid, []string{"draft.md:1: missing name"}},
		{"bad-name.md", "", DraftInvalid, []string{`bad specialist name "Shell_Review"`}},
		{"control.md", "", DraftUnsafe, []string{"control characters"}},
		{"escape.md", "", DraftUnsafe, []string{"decodes to control characters"}},
	} {
		t.Run(tc.file+"/"+tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "drafts", tc.file))
			require.NoError(t, err)
			m, err := CheckDraft(dir, string(data), tc.name)
			if tc.problem == "" {
				require.NoError(t, err)
				require.Equal(t, ScopeProject, m.Scope)
				require.Equal(t, ManifestPath(dir, m.Name), m.Path)
				out := string(m.Render())
				for _, w := range tc.want {
					require.Contains(t, out, w)
				}
				// What is shown is what loads back.
				back, err := Parse(m.Path, m.Render(), ScopeProject, m.Name)
				require.NoError(t, err)
				require.Equal(t, m.Tools, back.Tools)
				return
			}
			var de *DraftError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tc.problem, de.Problem, err.Error())
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// A generated specialist's tools are the categories and the ids they
// grant: never a forbidden tool, never web or LSP tools.
func TestProjectTools(t *testing.T) {
	got := ProjectTools()
	for _, c := range categoryNames {
		require.Contains(t, got, c)
	}
	for _, f := range append([]string{"webfetch", "websearch", "codesearch", "lsp", "multiedit"}, forbidden...) {
		require.NotContains(t, got, f)
	}
}

// The brief names the purpose, the name or the names taken, the allowed
// tools and the block to answer in.
func TestDraftBrief(t *testing.T) {
	b := DraftBrief("  review shell scripts  ", "", []string{"worker", "explorer"})
	for _, w := range []string{"# Specialist", "\nreview shell scripts\n", "these are taken: worker, explorer", "read-only (read, grep, glob, list)", "Never task, skill", "````horizon-specialist\n---\nname: api-review"} {
		require.Contains(t, b, w)
	}
	require.Contains(t, DraftBrief("x", "sh-lint", nil), "- name: sh-lint\n")
	require.False(t, strings.Contains(DraftBrief("x", "sh-lint", []string{"worker"}), "taken"))
}
