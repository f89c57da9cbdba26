package specialist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/ladder"
)

// Every manifest error names the file and the line of the key at fault.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // the manifest's file name (its name must match)
		text string
		want string // file:line: message substring
	}{
		{"no frontmatter", "a", "just a prompt\n", "a.md:1: a manifest starts with a YAML frontmatter"},
		{"unclosed frontmatter", "a", "---\nname: a\n", "a.md:1: the frontmatter is not closed"},
		{"bad yaml", "a", "---\nname: a\ndescription: [x\n---\nbody\n", "a.md:"},
		{"unknown key", "a", "---\nname: a\ncolour: red\n---\nbody\n", `a.md:3: unknown key "colour"`},
		{"duplicate key", "a", "---\nname: a\nname: a\n---\nbody\n", `a.md:3: key "name" appears twice`},
		{"missing name", "a", "---\ndescription: d\n---\nbody\n", "a.md:1: missing name"},
		{"upper-case name", "Api", "---\nname: Api\n---\nbody\n", `Api.md:2: bad specialist name "Api"`},
		{"name with space", "a", "---\nname: a b\n---\nbody\n", `a.md:2: bad specialist name "a b"`},
		{"trailing dash", "a-", "---\nname: a-\n---\nbody\n", `a-.md:2: bad specialist name "a-"`},
		{"name not file name", "a", "---\nname: b\n---\nbody\n", `a.md:2: name "b" does not match the file name a.md`},
		{"name a list", "a", "---\nname: [a]\n---\nbody\n", "a.md:2: name must be a string"},
		{"self extends", "a", "---\nname: a\nextends: a\n---\nbody\n", "a.md:3: extends cycle: a extends itself"},
		{"bad model", "a", "---\nname: a\nmodel: gpt-5\n---\nbody\n", `a.md:3: model "gpt-5" is not a provider/model ID`},
		{"bad effort", "a", "---\nname: a\nreasoningEffort: max\n---\nbody\n", `a.md:3: reasoningEffort "max" is not one of`},
		{"bad role", "a", "---\nname: a\nrole: worker\n---\nbody\n", `a.md:3: role "worker" is not a zilX role`},
		{"unknown tool", "a", "---\nname: a\ntools:\n  - read-only\n  - telepathy\n---\nbody\n", `a.md:3: unknown tool "telepathy"`},
		{"task tool", "a", "---\nname: a\ntools: [read-only, task]\n---\nbody\n", `a.md:3: tool "task" is not allowed: a specialist cannot delegate`},
		{"zero Task tool", "a", "---\nname: a\ntools: [TaskOutput]\n---\nbody\n", `tool "TaskOutput" is not allowed`},
		{"authoring tool", "a", "---\nname: a\ntools:\n  - GenerateSpecialist\n---\nbody\n", `a.md:3: tool "GenerateSpecialist" is not allowed`},
		{"tools a map", "a", "---\nname: a\ntools: {x: 1}\n---\nbody\n", "a.md:3: tools must be a list"},
		{"no prompt at all", "a", "---\nname: a\n---\n", "a.md: no prompt"},
		{"frontmatter a list", "a", "---\n- name\n---\nbody\n", "a.md:2: the frontmatter must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.file+".md", []byte(tt.text), ScopeProject, tt.file)
			require.Error(t, err)
			var me *ManifestError
			require.ErrorAs(t, err, &me)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseYAMLErrorLine(t *testing.T) {
	_, err := Parse("a.md", []byte("---\nname: a\ndescription: [x\n---\nbody\n"), ScopeUser, "a")
	var me *ManifestError
	require.ErrorAs(t, err, &me)
	require.Greater(t, me.Line, 1, "a YAML error is located in the file: %v", err)
}

func TestParseEmptyBodyUsesDescription(t *testing.T) {
	m, err := Parse("a.md", []byte("---\nname: a\ndescription: Finds things.\ntools: read-only, plan\n---\n\n"), ScopeUser, "a")
	require.NoError(t, err)
	require.Equal(t, "Finds things.", m.Prompt)
	require.Len(t, m.Warnings, 1)
	require.Contains(t, m.Warnings[0], "description is used as the prompt")
	require.Equal(t, []string{"read-only", "plan"}, m.Tools, "a comma-separated string is a list too")
}

func TestRenderRoundTrips(t *testing.T) {
	m := &Manifest{Name: "api-review", Description: "Reviews: API changes", Tools: []string{"read-only", "plan"},
		Role: "analyze", ReasoningEffort: "high", Prompt: "Review it.\n\nWith ```code```.", Scope: ScopeProject}
	got, err := Parse("api-review.md", m.Render(), ScopeProject, "api-review")
	require.NoError(t, err)
	require.Equal(t, m.Name, got.Name)
	require.Equal(t, m.Description, got.Description)
	require.Equal(t, m.Tools, got.Tools)
	require.Equal(t, m.Role, got.Role)
	require.Equal(t, m.ReasoningEffort, got.ReasoningEffort)
	require.Equal(t, m.Prompt, got.Prompt)
}

func TestPermissionsAndReadOnly(t *testing.T) {
	require.Equal(t, []string{"glob", "grep", "list", "read"}, Permissions([]string{"read-only"}))
	require.Equal(t, []string{"edit", "glob", "grep", "list", "read"}, Permissions([]string{"edit"}))
	require.Equal(t, []string{"bash", "glob", "grep", "list", "read", "todoread", "todowrite"}, Permissions([]string{"execute", "plan"}))
	require.Equal(t, []string{"edit", "read"}, Permissions([]string{"read", "write"}), "write is governed by edit")
	require.True(t, ReadOnly([]string{"read-only", "plan", "webfetch"}))
	require.False(t, ReadOnly([]string{"read-only", "bash"}))
	require.False(t, ReadOnly([]string{"patch"}))
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name+".md")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestBuiltins(t *testing.T) {
	set, err := Load(Dirs{})
	require.NoError(t, err)
	require.Equal(t, []string{"code-review", "explorer", "worker"}, set.Names())
	ex, err := set.Get("explorer")
	require.NoError(t, err)
	require.True(t, ex.ReadOnly())
	require.Equal(t, "explore", ex.Role)
	cr, _ := set.Get("code-review")
	require.True(t, cr.ReadOnly())
	require.Equal(t, "analyze", cr.Role)
	w, _ := set.Get("worker")
	require.False(t, w.ReadOnly())
	require.Equal(t, ScopeBuiltin, w.Scope)
	_, err = set.Get("nobody")
	require.ErrorIs(t, err, ErrNotFound)
}

// Project overrides user overrides built-in; the overridden paths are kept.
func TestOverrideOrder(t *testing.T) {
	root := t.TempDir()
	d := Dirs{User: filepath.Join(root, "user"), Project: filepath.Join(root, "project")}
	write(t, d.User, "explorer", "---\nname: explorer\ndescription: user explorer\ntools: [read-only]\n---\nuser\n")
	write(t, d.User, "mine", "---\nname: mine\ndescription: user mine\n---\nuser mine\n")
	write(t, d.Project, "mine", "---\nname: mine\ndescription: project mine\n---\nproject mine\n")
	set, err := Load(d)
	require.NoError(t, err)
	ex, _ := set.Get("explorer")
	require.Equal(t, ScopeUser, ex.Scope)
	require.Equal(t, "user", ex.Prompt)
	require.Equal(t, []string{"builtin:explorer.md"}, ex.Overrides)
	mine, _ := set.Get("mine")
	require.Equal(t, ScopeProject, mine.Scope)
	require.Equal(t, "project mine", mine.Prompt)
	require.Equal(t, []string{filepath.Join(d.User, "mine.md")}, mine.Overrides)
}

func TestExtends(t *testing.T) {
	root := t.TempDir()
	d := Dirs{Project: root}
	write(t, root, "deep-explorer", "---\nname: deep-explorer\nextends: explorer\nreasoningEffort: high\n---\n")
	set, err := Load(d)
	require.NoError(t, err)
	sp, _ := set.Get("deep-explorer")
	require.Equal(t, []string{"deep-explorer", "explorer"}, sp.Chain)
	require.Equal(t, "explore", sp.Role, "role inherited")
	require.Equal(t, []string{"read-only"}, sp.Tools, "tools inherited")
	require.Contains(t, sp.Prompt, "explorer specialist", "prompt inherited")
	require.Equal(t, "high", sp.ReasoningEffort)
	require.Empty(t, sp.Warnings)
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"cycle", map[string]string{
			"a": "---\nname: a\nextends: b\n---\nA\n",
			"b": "---\nname: b\ndescription: d\nextends: a\n---\nB\n",
		}, []string{"b.md:4: extends cycle: a → b → a", "a.md:3: extends cycle: b → a → b"}},
		{"unknown base", map[string]string{"a": "---\nname: a\nextends: ghost\n---\nA\n"},
			[]string{`a.md:3: extends "ghost": no such specialist`}},
		{"two bad files at once", map[string]string{
			"a": "---\nname: a\nfoo: 1\n---\nA\n",
			"b": "---\nname: b\ntools: [task]\n---\nB\n",
		}, []string{`a.md:3: unknown key "foo"`, `b.md:3: tool "task" is not allowed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, text := range tt.files {
				write(t, dir, n, text)
			}
			_, err := Load(Dirs{Project: dir})
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestCreateRefusesSymlinkAndExisting(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Name: "api", Description: "d", Prompt: "p", Scope: ScopeProject}
	path, err := Create(dir, m, false)
	require.NoError(t, err)
	_, err = Create(dir, m, false)
	require.ErrorIs(t, err, ErrExists)
	m.Prompt = "p2"
	_, err = Create(dir, m, true)
	require.NoError(t, err)
	b, _ := os.ReadFile(path)
	require.Contains(t, string(b), "p2")

	target := filepath.Join(t.TempDir(), "elsewhere.md")
	require.NoError(t, os.WriteFile(target, []byte("theirs"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "linked.md")))
	_, err = Create(dir, &Manifest{Name: "linked", Description: "d", Scope: ScopeProject}, true)
	require.ErrorIs(t, err, ErrSymlink)
	b, _ = os.ReadFile(target)
	require.Equal(t, "theirs", string(b), "the symlink's target is untouched")

	_, err = Create(dir, &Manifest{Name: "bad", Tools: []string{"task"}, Prompt: "p", Scope: ScopeProject}, false)
	require.ErrorContains(t, err, `tool "task" is not allowed`)
	require.NoFileExists(t, filepath.Join(dir, "bad.md"))
}

func TestBind(t *testing.T) {
	lb := ladder.Bundled()
	set, err := Load(Dirs{})
	require.NoError(t, err)
	ex, _ := set.Get("explorer")
	var connected []string
	for _, m := range lb.Models {
		if _, ok := m.Roles["explore"]; ok {
			connected = append(connected, m.Routes[0])
			break
		}
	}
	require.NotEmpty(t, connected, "the bundled leaderboard ranks a model for explore")
	want, err := lb.Resolve("explore", connected)
	require.NoError(t, err)
	b := Bind(ex, lb, connected, "")
	require.Equal(t, Binding{Model: want.Route, Source: "role", Rank: want.Rank}, b)

	b = Bind(ex, lb, nil, "")
	require.False(t, b.Available(), "no cross-role fallback")
	require.Contains(t, b.Unavailable, `role "explore"`)

	require.Equal(t, Binding{Model: "p/m", Source: "forced"}, Bind(ex, lb, nil, "p/m"))
	own := *ex
	own.Model = "x/y"
	require.Equal(t, Binding{Model: "x/y", Source: "manifest"}, Bind(&own, lb, nil, "p/m"))
	own.Model, own.Role = "", ""
	require.Equal(t, Binding{Source: "inherit"}, Bind(&own, lb, nil, ""))
}
