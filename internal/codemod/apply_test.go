package codemod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const renameRule = `# Rename a helper the team retired.
id: rename-old-helper
language: go
message: oldHelper is gone; use newHelper
rule:
  pattern: oldHelper($$$ARGS)
fix: newHelper($$$ARGS)
`

const usesOld = "package p\n\nfunc f() {\n\toldHelper(1, 2)\n}\n"

// A user rule from .horizon/codemods, applied to a git repository, changes
// exactly the tracked, visible, regular files that match.
func TestApplyUserRuleToGitRepo(t *testing.T) {
	bin := astGrepBin(t)
	repo := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"target.go": usesOld})
	writeFiles(t, repo, map[string]string{
		".horizon/codemods/rename.yml": renameRule,
		"a.go":                         "package p\n\nfunc a() {\n\toldHelper()\n\tx := 1\n\toldHelper(x, \"y\")\n}\n",
		"sub/deep/b.go":                "package deep\n\nfunc b() { oldHelper(oldHelper(2)) }\n",
		"c.go":                         "package p\n\nfunc c() { newHelper(3); notOldHelper(4) }\n",
		"notes.md":                     "call oldHelper(1) to do things\n",
		"gen/d.go":                     usesOld, // .gitignore'd
		".hidden/e.go":                 usesOld, // hidden
		".gitignore":                   "gen/\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(outside, "target.go"), filepath.Join(repo, "link.go")))
	require.NoError(t, os.Symlink(outside, filepath.Join(repo, "linkdir")))
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "init")

	rules, problems := Load(repo)
	require.Empty(t, problems)
	user := ruleByID(t, rules, "rename-old-helper")
	require.Equal(t, ".horizon/codemods/rename.yml", user.Path)
	require.NoError(t, Validate(testCtx(t), bin, user))

	before := snapshot(t, repo)
	res, err := Apply(testCtx(t), bin, repo, []Rule{user}, time.Minute)
	require.NoError(t, err, res.Output)

	require.Equal(t, []string{"a.go", "sub/deep/b.go"}, res.Files)
	require.Equal(t, []Change{
		{Rule: "rename-old-helper", File: "a.go", Line: 4},
		{Rule: "rename-old-helper", File: "a.go", Line: 6},
		{Rule: "rename-old-helper", File: "sub/deep/b.go", Line: 3}, // outer call, first pass
		{Rule: "rename-old-helper", File: "sub/deep/b.go", Line: 3}, // inner call, second pass
	}, res.Applied)
	require.Contains(t, res.Output, "rename-old-helper: 4 change(s) in 2 file(s)")

	after := snapshot(t, repo)
	require.Equal(t, "package p\n\nfunc a() {\n\tnewHelper()\n\tx := 1\n\tnewHelper(x, \"y\")\n}\n", after["a.go"])
	require.Equal(t, "package deep\n\nfunc b() { newHelper(newHelper(2)) }\n", after["sub/deep/b.go"])
	for name, content := range before {
		if name != "a.go" && name != "sub/deep/b.go" {
			require.Equal(t, content, after[name], "%s changed", name)
		}
	}
	require.Len(t, after, len(before), "Apply left files behind in the lane")

	// git agrees: two modified files, nothing untracked.
	require.Equal(t, " M a.go\n M sub/deep/b.go\n", git(t, repo, "status", "--porcelain"))
	// The file behind the symlinks, outside the lane, is untouched.
	got, err := os.ReadFile(filepath.Join(outside, "target.go"))
	require.NoError(t, err)
	require.Equal(t, usesOld, string(got))
}

func TestApplyNothingMatches(t *testing.T) {
	bin := astGrepBin(t)
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"empty dir", nil},
		{"no match", map[string]string{
			"main.go":  "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n",
			"app.py":   "def f(x):\n    if x is None:\n        return 1\n",
			"index.js": "let x = 1;\nfunction f() { let y = 2; return y; }\n",
		}},
		{"other languages only", map[string]string{
			"lib.rs":    "fn main() { let v: Option<u8> = None; v.unwrap(); }\n",
			"README.md": "var x = 1 and errors.New(fmt.Sprintf(\"x\"))\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			before := snapshot(t, dir)
			res, err := Apply(testCtx(t), bin, dir, Builtins(), time.Minute)
			require.NoError(t, err)
			require.Empty(t, res.Applied)
			require.Empty(t, res.Files)
			require.Equal(t, before, snapshot(t, dir))
		})
	}
}

// A rule ast-grep refuses is skipped with a *RuleError naming its file and
// quoting ast-grep; the other rules still run.
func TestApplySkipsBrokenRule(t *testing.T) {
	bin := astGrepBin(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": usesOld})
	broken := inlineRule(t, ".horizon/codemods/broken.yml", "id: broken\nlanguage: go\nrule:\n  pattern: oldHelper($A)\nfix: newHelper($B)\n")
	good := inlineRule(t, ".horizon/codemods/rename.yml", renameRule)

	res, err := Apply(testCtx(t), bin, dir, []Rule{broken, good}, time.Minute)
	require.Error(t, err)
	var re *RuleError
	require.True(t, errors.As(err, &re), "%T", err)
	require.Equal(t, "broken", re.ID)
	require.Equal(t, ".horizon/codemods/broken.yml", re.Source)
	require.Contains(t, err.Error(), `codemod "broken" (.horizon/codemods/broken.yml): ast-grep rejects the rule`)
	require.Contains(t, err.Error(), "Undefined meta var `B` used in `fix`")
	require.NotContains(t, err.Error(), "INLINE_RULES")

	require.Equal(t, []string{"a.go"}, res.Files)
	require.Equal(t, []Change{{Rule: "rename-old-helper", File: "a.go", Line: 4}}, res.Applied)
	require.Contains(t, res.Output, "broken: codemod")
}

// A rule with severity: error makes ast-grep exit 1 when it matches; that
// is a result, not a failure. severity: off switches a rule off.
func TestApplySeverities(t *testing.T) {
	bin := astGrepBin(t)
	for _, tt := range []struct {
		severity string
		changed  bool
	}{{"error", true}, {"warning", true}, {"off", false}} {
		t.Run(tt.severity, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a.go": usesOld})
			r := inlineRule(t, "s.yml", strings.Replace(renameRule, "rule:", "severity: "+tt.severity+"\nrule:", 1))
			res, err := Apply(testCtx(t), bin, dir, []Rule{r}, time.Minute)
			require.NoError(t, err, res.Output)
			require.Equal(t, tt.changed, len(res.Applied) == 1, res.Output)
			require.NotContains(t, res.Output, "error(s) found")
		})
	}
}

// Apply writes only regular files with one name inside the lane.
func TestApplyRefusesHardLinks(t *testing.T) {
	bin := astGrepBin(t)
	dir := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"orig.go": usesOld})
	require.NoError(t, os.Link(filepath.Join(outside, "orig.go"), filepath.Join(dir, "a.go")))

	res, err := Apply(testCtx(t), bin, dir, []Rule{inlineRule(t, "r.yml", renameRule)}, time.Minute)
	require.NoError(t, err)
	require.Empty(t, res.Files)
	require.Contains(t, res.Output, "a.go left alone: has 2 hard links")
	got, err := os.ReadFile(filepath.Join(outside, "orig.go"))
	require.NoError(t, err)
	require.Equal(t, usesOld, string(got))
}

// The lane's own ast-grep config cannot change what a rule means, and
// Apply leaves nothing behind: not in the lane, not in TMPDIR.
func TestApplyIgnoresLaneConfigAndCleansUp(t *testing.T) {
	bin := astGrepBin(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.go": usesOld,
		// Read as Python, a.go would never match a Go rule.
		"sgconfig.yml":     "ruleDirs: [rules]\nlanguageGlobs:\n  python: [\"*.go\"]\n",
		"rules/other.yml":  "id: other\nlanguage: go\nrule:\n  pattern: oldHelper($$$A)\nfix: hijacked($$$A)\n",
		"rules/other2.yml": "id: other2\nlanguage: go\nrule:\n  pattern: f()\nfix: g()\n",
	})
	before := snapshot(t, dir)
	res, err := Apply(testCtx(t), bin, dir, []Rule{inlineRule(t, "r.yml", renameRule)}, time.Minute)
	require.NoError(t, err, res.Output)
	require.Equal(t, []string{"a.go"}, res.Files)
	after := snapshot(t, dir)
	require.Contains(t, after["a.go"], "newHelper(1, 2)")
	delete(before, "a.go")
	delete(after, "a.go")
	require.Equal(t, before, after)

	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "Apply left its temp dir behind")
}

func TestApplyStops(t *testing.T) {
	bin := astGrepBin(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": usesOld})
	rules := []Rule{inlineRule(t, "r.yml", renameRule)}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Apply(ctx, bin, dir, rules, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, res.Applied)

	res, err = Apply(t.Context(), bin, dir, rules, time.Nanosecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "timeout")
	require.Empty(t, res.Applied)
	require.Equal(t, usesOld, snapshot(t, dir)["a.go"])
}

func TestApplyBadArguments(t *testing.T) {
	dir := t.TempDir()
	_, err := Apply(t.Context(), "", dir, nil, 0)
	require.ErrorContains(t, err, "no ast-grep binary")
	_, err = Apply(t.Context(), "/bin/true", filepath.Join(dir, "missing"), nil, 0)
	require.ErrorContains(t, err, "missing")
	f := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = Apply(t.Context(), "/bin/true", f, nil, 0)
	require.ErrorContains(t, err, "not a directory")

	res, err := Apply(t.Context(), "/nonexistent/ast-grep", dir, []Rule{inlineRule(t, "r.yml", renameRule)}, time.Minute)
	var re *RuleError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Contains(t, err.Error(), "running ast-grep: cannot start")
	require.Empty(t, res.Applied)
}

// Unit checks of the edit itself, with made-up ast-grep matches.
func TestApplyFileEdits(t *testing.T) {
	str := func(s string) *string { return &s }
	mk := func(text string, start int, repl string) match {
		var m match
		m.Text = text
		m.Range.ByteOffset = offsets{start, start + len(text)}
		m.Replacement = str(repl)
		return m
	}
	tests := []struct {
		name    string
		src     string
		matches []match
		want    string
		lines   int
		nested  int
		err     string
	}{
		{"two", "a(1) a(2)", []match{mk("a(2)", 5, "b(2)"), mk("a(1)", 0, "b(1)")}, "b(1) b(2)", 2, 0, ""},
		{"nested", "a(a(1))", []match{mk("a(1)", 2, "b(1)"), mk("a(a(1))", 0, "b(a(1))")}, "b(a(1))", 1, 1, ""},
		{"duplicate", "a(1)", []match{mk("a(1)", 0, "b(1)"), mk("a(1)", 0, "b(1)")}, "b(1)", 1, 0, ""},
		{"to itself", "a(1)", []match{mk("a(1)", 0, "a(1)")}, "a(1)", 0, 0, ""},
		{"stale text", "a(1)", []match{mk("a(2)", 0, "b(2)")}, "a(1)", 0, 0, "is not what ast-grep matched"},
		{"out of range", "a(1)", []match{mk("a(1) and more", 0, "b")}, "a(1)", 0, 0, "offsets outside the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			writeFiles(t, dir, map[string]string{"f.txt": tt.src})
			a := &applier{root: dir, files: map[string]bool{}}
			rel, lines, nested, err := a.applyFile("f.txt", tt.matches)
			got := snapshot(t, dir)["f.txt"]
			require.Equal(t, tt.want, got)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "f.txt", rel)
			require.Len(t, lines, tt.lines)
			require.Equal(t, tt.nested, nested)
		})
	}

	a := &applier{root: t.TempDir(), files: map[string]bool{}}
	_, _, _, err := a.applyFile("../x", []match{mk("x", 0, "y")})
	require.ErrorContains(t, err, "outside the lane")
}
