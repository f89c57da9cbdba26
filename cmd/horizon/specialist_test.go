package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/ladder"
)

// fakeConnected are the routes the stand-in opencode reports as connected:
// neither is analyze's or explore's top-ranked model, so a specialist's
// model shows the leaderboard really was intersected with them.
var fakeConnected = []string{"anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5", "google/gemini-2.5-flash"}

// specialistEnv is a repository, a user config dir and a stand-in opencode
// whose `models` prints fakeConnected. It returns the repository.
func specialistEnv(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	require.NoError(t, exec.Command("git", "init", "-q", repo).Run())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HORIZON_HOME", t.TempDir())
	bin := filepath.Join(t.TempDir(), "opencode")
	script := "#!/bin/sh\n[ \"$1\" = models ] || exit 9\n"
	for _, m := range fakeConnected {
		script += "echo " + m + "\n"
	}
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	t.Setenv("HORIZON_AGENT_OPENCODE_BIN", bin)
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	return repo
}

func userSpecDir() string {
	return filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "horizon", "specialists")
}

func projectSpecDir(repo string) string { return filepath.Join(repo, ".horizon", "specialists") }

func writeManifest(t *testing.T, dir, name, text string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name+".md")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// Every kind of bad manifest stops list and show with bad usage, naming
// the file and the line.
func TestSpecialistManifestErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // the first is joined to the manifests' directory
	}{
		{"no frontmatter", map[string]string{"a": "just text\n"}, []string{"a.md:1: a manifest starts with a YAML frontmatter"}},
		{"unclosed frontmatter", map[string]string{"a": "---\nname: a\n"}, []string{"a.md:1: the frontmatter is not closed"}},
		{"invalid yaml", map[string]string{"a": "---\nname: a\ndescription: x: y\n---\nb\n"}, []string{"a.md:3: frontmatter is not valid YAML"}},
		{"unknown key", map[string]string{"a": "---\nname: a\nmode: primary\n---\nb\n"}, []string{`a.md:3: unknown key "mode"`}},
		{"bad name", map[string]string{"Api_Review": "---\nname: Api_Review\n---\nb\n"}, []string{`Api_Review.md:2: bad specialist name "Api_Review"`}},
		{"name differs from file", map[string]string{"a": "---\nname: b\n---\nb\n"}, []string{`a.md:2: name "b" does not match the file name a.md`}},
		{"missing name", map[string]string{"a": "---\ndescription: d\n---\nb\n"}, []string{"a.md:1: missing name"}},
		{"extends cycle", map[string]string{
			"a": "---\nname: a\nextends: b\n---\nA\n",
			"b": "---\nname: b\nextends: c\n---\nB\n",
			"c": "---\nname: c\nextends: a\n---\nC\n",
		}, []string{"c.md:3: extends cycle: a → b → c → a"}},
		{"self extends", map[string]string{"a": "---\nname: a\nextends: a\n---\nA\n"}, []string{"a.md:3: extends cycle: a extends itself"}},
		{"unknown base", map[string]string{"a": "---\nname: a\nextends: ghost\n---\nA\n"}, []string{`a.md:3: extends "ghost": no such specialist`}},
		{"task tool", map[string]string{"a": "---\nname: a\ndescription: d\ntools:\n  - read-only\n  - task\n---\nA\n"},
			[]string{`a.md:4: tool "task" is not allowed: a specialist cannot delegate`}},
		{"authoring tool", map[string]string{"a": "---\nname: a\ntools: [GenerateSpecialist]\n---\nA\n"}, []string{`a.md:3: tool "GenerateSpecialist" is not allowed`}},
		{"unknown tool", map[string]string{"a": "---\nname: a\ntools: [teleport]\n---\nA\n"}, []string{`a.md:3: unknown tool "teleport"`, "read-only, edit, execute, plan"}},
		{"bad role", map[string]string{"a": "---\nname: a\nrole: zilx-build\n---\nA\n"}, []string{`a.md:3: role "zilx-build" is not a zilX role`}},
		{"bad model", map[string]string{"a": "---\nname: a\nmodel: sonnet\n---\nA\n"}, []string{`a.md:3: model "sonnet" is not a provider/model ID`}},
		{"bad reasoning effort", map[string]string{"a": "---\nname: a\nreasoningEffort: extreme\n---\nA\n"}, []string{`a.md:3: reasoningEffort "extreme"`}},
		{"no prompt", map[string]string{"a": "---\nname: a\n---\n"}, []string{"a.md: no prompt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := specialistEnv(t)
			dir := projectSpecDir(repo)
			for n, text := range tt.files {
				writeManifest(t, dir, n, text)
			}
			for _, args := range [][]string{{"specialist", "list", "--repo", repo}, {"specialist", "show", "worker", "--repo", repo}} {
				code, out, errOut := runCLI(t, args...)
				require.Equal(t, ExitUsage, code, "%v: %s%s", args, out, errOut)
				require.Contains(t, errOut, filepath.Join(dir, tt.want[0]))
				for _, w := range tt.want[1:] {
					require.Contains(t, errOut, w)
				}
			}
		})
	}
}

type specialistListEntry struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Role        string   `json:"role"`
	Tools       []string `json:"tools"`
	Scope       string   `json:"scope"`
	Path        string   `json:"path"`
	Prompt      string   `json:"prompt"`
	Overrides   []string `json:"overrides"`
	Chain       []string `json:"extends_chain"`
	Warnings    []string `json:"warnings"`
	ReadOnly    bool     `json:"read_only"`
	Binding     *struct {
		Model       string `json:"model"`
		Source      string `json:"source"`
		Rank        int    `json:"rank"`
		Unavailable string `json:"unavailable"`
	} `json:"binding"`
}

func listSpecialists(t *testing.T, repo string) map[string]specialistListEntry {
	t.Helper()
	code, out, errOut := runCLI(t, "specialist", "list", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	var list []specialistListEntry
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	byName := map[string]specialistListEntry{}
	var names []string
	for _, e := range list {
		byName[e.Name] = e
		names = append(names, e.Name)
	}
	require.IsIncreasing(t, names, "listed in name order")
	return byName
}

// A project specialist with role analyze is listed with the model the
// leaderboard gives analyze among the connected routes.
func TestSpecialistListResolvesRoleModels(t *testing.T) {
	repo := specialistEnv(t)
	writeManifest(t, projectSpecDir(repo), "api-review", "---\nname: api-review\ndescription: Reviews API changes\nrole: analyze\ntools: [read-only, plan]\n---\nReview the API.\n")
	lb := ladder.Bundled()
	analyze, err := lb.Resolve("analyze", fakeConnected)
	require.NoError(t, err)
	explore, err := lb.Resolve("explore", fakeConnected)
	require.NoError(t, err)

	got := listSpecialists(t, repo)
	require.Len(t, got, 4)
	ar := got["api-review"]
	require.Equal(t, "project", ar.Scope)
	require.Equal(t, filepath.Join(projectSpecDir(repo), "api-review.md"), ar.Path)
	require.True(t, ar.ReadOnly)
	require.NotNil(t, ar.Binding)
	require.Equal(t, analyze.Route, ar.Binding.Model)
	require.Equal(t, "role", ar.Binding.Source)
	require.Equal(t, analyze.Rank, ar.Binding.Rank)
	require.Greater(t, ar.Binding.Rank, 1, "the top-ranked analyze model is not connected")
	require.Equal(t, explore.Route, got["explorer"].Binding.Model)
	require.Equal(t, got["code-review"].Binding.Model, ar.Binding.Model, "code-review is analyze too")
	require.False(t, got["worker"].ReadOnly)

	code, out, errOut := runCLI(t, "specialist", "list", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.Regexp(t, `api-review\s+project\s+analyze\s+`+analyze.Route+`\s+read-only,plan\s+Reviews API changes`, out)

	// No connected model for a role: the specialist is unavailable, and no
	// other role's model stands in.
	writeManifest(t, projectSpecDir(repo), "researcher", "---\nname: researcher\nrole: quick\ntools: [read-only]\n---\nLook it up.\n")
	got = listSpecialists(t, repo)
	rs := got["researcher"]
	if c, err := lb.Resolve("quick", fakeConnected); err == nil {
		require.Equal(t, c.Route, rs.Binding.Model)
	} else {
		require.Empty(t, rs.Binding.Model)
		require.Contains(t, rs.Binding.Unavailable, "no cross-role fallback")
	}
}

// Project overrides user overrides built-in, in list and in show.
func TestSpecialistOverrideOrder(t *testing.T) {
	repo := specialistEnv(t)
	userExp := writeManifest(t, userSpecDir(), "explorer", "---\nname: explorer\ndescription: user explorer\ntools: [read-only]\nrole: explore\n---\nUser prompt.\n")
	writeManifest(t, userSpecDir(), "helper", "---\nname: helper\ndescription: user helper\n---\nUser helper.\n")
	got := listSpecialists(t, repo)
	require.Equal(t, "user", got["explorer"].Scope)
	require.Equal(t, []string{"builtin:explorer.md"}, got["explorer"].Overrides)
	require.Equal(t, "user", got["helper"].Scope)

	projExp := writeManifest(t, projectSpecDir(repo), "explorer", "---\nname: explorer\ndescription: project explorer\nextends: helper\n---\nProject prompt.\n")
	got = listSpecialists(t, repo)
	require.Equal(t, "project", got["explorer"].Scope)
	require.Equal(t, projExp, got["explorer"].Path)
	require.Equal(t, []string{"builtin:explorer.md", userExp}, got["explorer"].Overrides)
	require.Equal(t, "builtin", got["worker"].Scope)

	code, out, errOut := runCLI(t, "specialist", "show", "explorer", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	var sp specialistListEntry
	require.NoError(t, json.Unmarshal([]byte(out), &sp))
	require.Equal(t, "Project prompt.", sp.Prompt)
	require.Equal(t, []string{"explorer", "helper"}, sp.Chain)
}

// create, show, path and delete: their --json shapes, and the empty-body
// warning of show.
func TestSpecialistJSONShapes(t *testing.T) {
	repo := specialistEnv(t)
	code, out, errOut := runCLI(t, "specialist", "path", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	var paths map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &paths))
	require.Equal(t, map[string]string{"user": userSpecDir(), "project": projectSpecDir(repo)}, paths)
	code, out, _ = runCLI(t, "specialist", "path", "--user", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code)
	require.JSONEq(t, `{"user": "`+userSpecDir()+`"}`, out)

	code, out, errOut = runCLI(t, "specialist", "create", "api-review", "--project", "--description", "Reviews API changes",
		"--tools", "read-only,plan", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	want := filepath.Join(projectSpecDir(repo), "api-review.md")
	require.JSONEq(t, `{"name": "api-review", "scope": "project", "path": "`+want+`"}`, out)

	code, out, errOut = runCLI(t, "specialist", "show", "api-review", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, errOut, "warning: "+want+": the prompt body is empty: the description is used as the prompt")
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"name", "description", "tools", "prompt", "scope", "path", "warnings", "read_only", "binding"} {
		require.Contains(t, raw, k)
	}
	require.Equal(t, "Reviews API changes", raw["prompt"])
	require.Equal(t, true, raw["read_only"])
	require.Equal(t, map[string]any{"source": "inherit"}, raw["binding"], "no role, no model: it runs on its parent's")

	code, _, errOut = runCLI(t, "specialist", "create", "api-review", "--description", "again", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "already exists")
	require.Contains(t, errOut, "--force")

	code, out, errOut = runCLI(t, "specialist", "delete", "api-review", "--json", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.JSONEq(t, `{"name": "api-review", "scope": "project", "path": "`+want+`", "deleted": true}`, out)
	require.NoFileExists(t, want)

	code, _, errOut = runCLI(t, "specialist", "delete", "explorer", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "built-in specialist explorer")

	code, _, errOut = runCLI(t, "specialist", "create", "sneaky", "--tools", "read-only,task", "--description", "d", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `tool "task" is not allowed`)
	code, _, errOut = runCLI(t, "specialist", "create", "Bad_Name", "--description", "d", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `bad specialist name "Bad_Name"`)

	code, _, errOut = runCLI(t, "specialist", "create", "orphan", "--extends", "ghost", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `extends "ghost": no such specialist`)
	require.NoFileExists(t, filepath.Join(projectSpecDir(repo), "orphan.md"), "a manifest that breaks the set is not left behind")

	require.Equal(t, ExitOK, first(runCLI(t, "specialist", "create", "base", "--description", "the base", "--repo", repo)))
	require.Equal(t, ExitOK, first(runCLI(t, "specialist", "create", "derived", "--extends", "base", "--repo", repo)))
	code, _, errOut = runCLI(t, "specialist", "create", "base", "--force", "--extends", "derived", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "extends cycle")
	b, err := os.ReadFile(filepath.Join(projectSpecDir(repo), "base.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), "description: the base", "the replaced manifest is put back")

	code, out, errOut = runCLI(t, "specialist", "create", "mine", "--user", "--description", "d", "--prompt", "Do it.", "--role", "explore", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, filepath.Join(userSpecDir(), "mine.md"))
}

// --force and edit never write through a symlinked manifest.
func TestSpecialistSymlinkRefused(t *testing.T) {
	repo := specialistEnv(t)
	target := filepath.Join(t.TempDir(), "shared.md")
	orig := "---\nname: linked\ndescription: d\n---\nShared.\n"
	require.NoError(t, os.WriteFile(target, []byte(orig), 0o644))
	dir := projectSpecDir(repo)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "linked.md")))

	code, _, errOut := runCLI(t, "specialist", "create", "linked", "--force", "--description", "mine", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "symlink")

	marker := filepath.Join(t.TempDir(), "editor-ran")
	t.Setenv("EDITOR", "touch "+marker+" &&  true")
	code, _, errOut = runCLI(t, "specialist", "edit", "linked", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "symlink")
	require.NoFileExists(t, marker, "the editor is not opened on a symlink")

	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, orig, string(b), "the link's target is untouched")
	fi, err := os.Lstat(filepath.Join(dir, "linked.md"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
}

// edit saves a valid draft and keeps an invalid one aside, the manifest
// unchanged.
func TestSpecialistEditValidatesOnSave(t *testing.T) {
	repo := specialistEnv(t)
	path := writeManifest(t, projectSpecDir(repo), "api", "---\nname: api\ndescription: d\n---\nOld.\n")
	editor := filepath.Join(t.TempDir(), "ed")
	// The editor replaces the prompt with the text in $NEW.
	require.NoError(t, os.WriteFile(editor, []byte("#!/bin/sh\nprintf '%s' \"$NEW\" > \"$1\"\n"), 0o755))
	t.Setenv("VISUAL", editor)

	t.Setenv("NEW", "---\nname: api\ndescription: d\ntools: [read-only]\n---\nNew.\n")
	code, out, errOut := runCLI(t, "specialist", "edit", "api", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "saved "+path)
	b, _ := os.ReadFile(path)
	require.Contains(t, string(b), "New.")

	t.Setenv("NEW", "---\nname: api\ntools: [bash, task]\n---\nBroken.\n")
	code, _, errOut = runCLI(t, "specialist", "edit", "api", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, path+`:3: tool "task" is not allowed`)
	require.Contains(t, errOut, "the manifest is unchanged")
	b, _ = os.ReadFile(path)
	require.Contains(t, string(b), "New.", "an invalid draft does not replace the manifest")
	draft := filepath.Join(projectSpecDir(repo), ".api.edit.md")
	d, err := os.ReadFile(draft)
	require.NoError(t, err)
	require.Contains(t, string(d), "Broken.", "the draft is kept")
	got := listSpecialists(t, repo)
	require.Contains(t, got, "api", "the draft (a dot file) is not loaded as a manifest")

	t.Setenv("VISUAL", "")
	code, _, errOut = runCLI(t, "specialist", "edit", "api", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "$VISUAL or $EDITOR")
	code, _, errOut = runCLI(t, "specialist", "edit", "worker", "--repo", repo)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "create a project or user specialist named worker")
}

func TestSpecialistFlags(t *testing.T) {
	testFlags(t, newSpecialistCreateCmd, []flagCase[specialistCreateOptions]{
		{name: "full", args: []string{"api", "--project", "--description", "d", "--tools", "read-only,plan", "--prompt", "p", "--force", "--json"},
			want: specialistCreateOptions{name: "api", scope: scopeFlags{project: true}, description: "d", tools: []string{"read-only", "plan"}, prompt: "p", force: true, json: true}},
		{name: "both scopes", args: []string{"api", "--project", "--user", "--description", "d"}, err: "none of the others can be"},
		{name: "nothing to say", args: []string{"api"}, err: "give --description, --prompt or --extends"},
		{name: "bad name", args: []string{"API", "--description", "d"}, err: `bad specialist name "API"`},
	})
	testFlags(t, newSpecialistListCmd, []flagCase[specialistListOptions]{
		{name: "json", args: []string{"--json"}, want: specialistListOptions{json: true}},
		{name: "no args", args: []string{"x"}, err: "takes no arguments"},
	})
}

// show explains one specialist in words: where it comes from, what it
// overrides and extends, its model and why, what it may do.
func TestSpecialistShowText(t *testing.T) {
	repo := specialistEnv(t)
	writeManifest(t, projectSpecDir(repo), "code-review", "---\nname: code-review\nextends: explorer\nrole: analyze\ndescription: Stricter review\n---\nBe strict.\n")
	analyze, err := ladder.Bundled().Resolve("analyze", fakeConnected)
	require.NoError(t, err)
	code, out, errOut := runCLI(t, "specialist", "show", "code-review", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	for _, want := range []string{
		"code-review  (project, " + filepath.Join(projectSpecDir(repo), "code-review.md") + ")",
		"overrides  builtin:code-review.md",
		"extends    explorer",
		"role       analyze",
		"model      " + analyze.Route + " (role)",
		"tools      read-only (read-only; permissions glob, grep, list, read)",
		"\nBe strict.\n",
	} {
		require.Contains(t, out, want)
	}
	require.Empty(t, errOut, "a manifest with a body has nothing to warn about")

	// Without a connected model for its role, list says why it cannot run:
	// a leaderboard that ranks nothing connected for lead.
	lbFile := filepath.Join(t.TempDir(), "models.json")
	require.NoError(t, os.WriteFile(lbFile, []byte(`{"revision": 1, "models": [
	  {"name": "a", "routes": ["anthropic/claude-opus-4-1"], "roles": {"analyze": {"rank": 1}}, "capabilities": {"cost": "high"}},
	  {"name": "b", "routes": ["nowhere/model"], "roles": {"lead": {"rank": 1}}, "capabilities": {"cost": "high"}}]}`), 0o644))
	t.Setenv("HORIZON_MODELS_FILE", lbFile)
	writeManifest(t, projectSpecDir(repo), "planner", "---\nname: planner\nrole: lead\ntools: [read-only]\n---\nPlan.\n")
	code, out, errOut = runCLI(t, "specialist", "list", "--repo", repo)
	require.Equal(t, ExitOK, code, errOut)
	require.Regexp(t, `planner\s+project\s+lead\s+unavailable`, out)
	require.Contains(t, out, `planner is unavailable: no connected model is ranked for role "lead" (there is no cross-role fallback); roles available: analyze`)
	require.Regexp(t, `code-review\s+project\s+analyze\s+anthropic/claude-opus-4-1`, out)
}

func first(code int, _, _ string) int { return code }
