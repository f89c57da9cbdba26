package specialist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/ladder"
)

func writeManifest(t *testing.T, dir, name, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o644))
}

// A project manifest's tools stay within the project scope's categories:
// a web or LSP tool is refused at its line, naming what is allowed and
// where such a specialist may live instead; the user scope may have them.
func TestProjectScopeTools(t *testing.T) {
	tests := []struct {
		name, tools string
		err         string
	}{
		{name: "categories", tools: "[read-only, edit, execute, plan]"},
		{name: "tool ids", tools: "[read, grep, bash, todowrite]"},
		{name: "webfetch", tools: "[read-only, webfetch]", err: `tool "webfetch" is not available to a project specialist`},
		{name: "lsp", tools: "[lsp]", err: `tool "lsp" is not available to a project specialist`},
		{name: "forbidden first", tools: "[task]", err: "a specialist cannot delegate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "---\nname: x\ndescription: d\ntools: " + tt.tools + "\n---\nDo.\n"
			_, err := Parse("/r/.horizon/specialists/x.md", []byte(text), ScopeProject, "x")
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)
			require.ErrorContains(t, err, "x.md:4")
			_, uerr := Parse("/u/x.md", []byte(text), ScopeUser, "x")
			if tt.name != "forbidden first" {
				require.NoError(t, uerr, "the user scope may have it")
			}
		})
	}
}

// A project specialist extending a user one that reads the web gets the
// web through extends: refused once resolved, naming the chain.
func TestProjectScopeThroughExtends(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	writeManifest(t, user, "web", "---\nname: web\ndescription: reads the web\ntools: [read-only, webfetch]\n---\nLook.\n")
	writeManifest(t, project, "mine", "---\nname: mine\nextends: web\ndescription: mine\n---\nLook here.\n")
	set, err := Load(Dirs{User: user, Project: project})
	require.NoError(t, err)
	sp, err := set.Get("mine")
	require.NoError(t, err)
	err = CheckProjectScope(sp)
	require.ErrorContains(t, err, `tool "webfetch" is not available to a project specialist`)
	require.ErrorContains(t, err, "mine → web")
	_, err = MaterialiseProject(set, "/repo", ladder.Bundled(), []string{"openai/gpt-5-mini"}, "")
	require.Error(t, err, "never dropped in silence")
}

// A trusted repository's specialists become agents named for it; the
// read-only ones are the worker's delegates by the session's own rules;
// one that overrides a built-in denies the built-in's agent; the brief
// names them. Another repository's names differ.
func TestMaterialiseProject(t *testing.T) {
	project := t.TempDir()
	writeManifest(t, project, "reviewer", "---\nname: reviewer\ndescription: reviews the change\ntools: [read-only]\nrole: explore\n---\nReview.\n")
	writeManifest(t, project, "explorer", "---\nname: explorer\ndescription: this repository's explorer\ntools: [read-only]\nrole: explore\n---\nExplore.\n")
	writeManifest(t, project, "fixer", "---\nname: fixer\ndescription: fixes\ntools: [edit, execute]\nrole: explore\n---\nFix.\n")
	set, err := Load(Dirs{Project: project})
	require.NoError(t, err)
	ps, err := MaterialiseProject(set, "/work/repo", ladder.Bundled(), []string{"openai/gpt-5-mini"}, "")
	require.NoError(t, err)

	key := RepoKey("/work/repo")
	require.Len(t, key, 16)
	require.NotEqual(t, key, RepoKey("/work/other"))
	require.Equal(t, key, RepoKey("/work/repo/"), "the same repository, however written")
	name := func(n string) string { return "horizon-pj-" + key + "-" + n }
	require.Len(t, ps.Files, 3)
	for _, n := range []string{"reviewer", "explorer", "fixer"} {
		require.Contains(t, ps.Files, name(n))
	}
	require.NotContains(t, ps.Files, "horizon-sp-worker", "built-ins are the daemon's, not the repository's")
	var delegates []string
	for _, d := range ps.Delegates {
		delegates = append(delegates, d.Agent)
	}
	require.ElementsMatch(t, []string{name("reviewer"), name("explorer")}, delegates, "read-only ones only")
	require.Equal(t, []string{"horizon-sp-explorer"}, ps.Shadowed)
	rules := ps.Rules()
	require.Equal(t, PermissionRule{Permission: "task", Pattern: "horizon-sp-explorer", Action: "deny"}, rules[0], "the overridden built-in first")
	require.Len(t, rules, 3)
	for _, r := range rules[1:] {
		require.Equal(t, "allow", r.Action)
	}
	brief := ps.Brief()
	require.Contains(t, brief, "- "+name("reviewer")+": reviews the change")
	require.Contains(t, brief, "replaced by the repository's own and not available: horizon-sp-explorer")
	require.NotContains(t, brief, "fixer")
	f := string(ps.Files[name("reviewer")])
	require.Contains(t, f, "mode: subagent")
	require.Contains(t, f, "  task: deny")
	require.Contains(t, f, "  edit: deny")
	require.Contains(t, f, "  bash: deny")

	empty, err := MaterialiseProject(mustLoad(t, Dirs{}), "/work/repo", ladder.Bundled(), nil, "")
	require.NoError(t, err)
	require.Empty(t, empty.Files)
	require.Empty(t, empty.Rules())
	require.Empty(t, empty.Brief())
}

func mustLoad(t *testing.T, d Dirs) *Set {
	t.Helper()
	s, err := Load(d)
	require.NoError(t, err)
	return s
}
