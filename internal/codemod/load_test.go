package codemod

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func ruleIDs(rules []Rule) []string {
	var ids []string
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	return ids
}

func builtinIDs() []string { return ruleIDs(Builtins()) }

func TestLoadGoodRules(t *testing.T) {
	rules, problems := Load(filepath.Join("testdata", "load", "good"))
	require.Empty(t, problems)

	// Project rules first (files in name order, documents in file order),
	// then the built-ins the project did not replace.
	var wantIDs []string
	wantIDs = append(wantIDs, "go-errorf", "py-print-debug", "py-assert-equal", "rename-old-helper")
	for _, id := range builtinIDs() {
		if id != "go-errorf" {
			wantIDs = append(wantIDs, id)
		}
	}
	require.Equal(t, wantIDs, ruleIDs(rules))

	byID := map[string]Rule{}
	for _, r := range rules {
		byID[r.ID] = r
	}
	tests := []struct {
		id, lang, path, message string
		builtin                 bool
	}{
		{"go-errorf", "go", ".horizon/codemods/errorf.yml", "", false},
		{"py-print-debug", "python", ".horizon/codemods/python.yaml", "", false},
		{"py-assert-equal", "python", ".horizon/codemods/python.yaml", "", false},
		{"rename-old-helper", "go", ".horizon/codemods/rename.yml", "oldHelper is gone; use newHelper", false},
		{"py-is-none", "python", "", "compare with None using `is`", true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, ok := byID[tt.id]
			require.True(t, ok)
			require.Equal(t, tt.lang, r.Language)
			require.Equal(t, tt.path, r.Path)
			require.Equal(t, tt.message, r.Message)
			require.Equal(t, tt.builtin, r.Builtin)
			require.NotEmpty(t, r.YAML)
		})
	}

	// A one-document file is passed on byte for byte; each document of a
	// multi-document file stands alone.
	raw, err := os.ReadFile(filepath.Join("testdata", "load", "good", ".horizon", "codemods", "rename.yml"))
	require.NoError(t, err)
	require.Equal(t, raw, byID["rename-old-helper"].YAML)
	pd := string(byID["py-print-debug"].YAML)
	require.Contains(t, pd, "print_debug")
	require.NotContains(t, pd, "assertEquals")
	require.NotContains(t, pd, "---")
	require.Contains(t, string(byID["py-assert-equal"].YAML), "self.assertEqual($A, $B)")
}

func TestLoadBrokenRules(t *testing.T) {
	rules, problems := Load(filepath.Join("testdata", "load", "broken"))

	// The good rules still load, broken ones are skipped.
	require.Equal(t, append([]string{"still-loads", "mixed-good"}, builtinIDs()...), ruleIDs(rules))

	tests := []struct {
		file   string
		reason string
	}{
		{"duplicate-id.yml", `codemod "still-loads": duplicate id: already defined in .horizon/codemods/a-good.yml`},
		{"duplicate-key.yml", `duplicate key "pattern"`},
		{"empty-fix.yml", `codemod "empty-fix": "fix" is empty`},
		{"invalid-yaml.yml", "invalid YAML: line"},
		{"list.yml", "a rule must be a YAML mapping (id, language, rule, fix), not a list"},
		{"missing-fix.yml", `codemod "report-only": missing "fix": a T0 codemod must rewrite code`},
		{"missing-id.yml", `missing "id"`},
		{"missing-rule.yml", `codemod "no-rule": missing "rule"`},
		{"mixed.yml", `codemod "mixed-bad": missing "fix"`},
		{"unknown-language.yml", `codemod "cobol-rule": unknown language "cobol": ast-grep 0.51.1 supports bash, c, cpp`},
	}
	require.Len(t, problems, len(tests), "problems: %v", problems)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := ".horizon/codemods/" + tt.file
			var found *LoadError
			for _, p := range problems {
				var le *LoadError
				require.True(t, errors.As(p, &le), "%T is not a *LoadError", p)
				if le.Path == path {
					require.Nil(t, found, "two problems for %s", path)
					found = le
				}
			}
			require.NotNil(t, found, "no problem reported for %s in %v", path, problems)
			msg := found.Error()
			require.True(t, strings.HasPrefix(msg, path+":"), "%q does not start with the file", msg)
			require.Contains(t, msg, tt.reason)
			require.True(t, strings.HasSuffix(msg, "(skipped)"), msg)
		})
	}
}

func TestLoadWithoutCodemods(t *testing.T) {
	dir := t.TempDir()
	rules, problems := Load(dir)
	require.Empty(t, problems)
	require.Equal(t, builtinIDs(), ruleIDs(rules))

	// A file where the directory should be is reported, not fatal.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".horizon"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".horizon", "codemods"), []byte("x"), 0o644))
	rules, problems = Load(dir)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0].Error(), ".horizon/codemods: cannot read the codemods directory")
	require.Equal(t, builtinIDs(), ruleIDs(rules))
}

func TestLoadOversizedAndEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	cm := filepath.Join(dir, ".horizon", "codemods")
	require.NoError(t, os.MkdirAll(cm, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cm, "big.yml"), bytes.Repeat([]byte("# x\n"), maxRuleFile/4+1), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(cm, "empty.yaml"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(cm, "dir.yml"), 0o755)) // a directory is not a rule file
	rules, problems := Load(dir)
	require.Equal(t, builtinIDs(), ruleIDs(rules))
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	require.Equal(t, []string{
		".horizon/codemods/big.yml: larger than 1048576 bytes (skipped)",
		".horizon/codemods/empty.yaml: no rule in the file (skipped)",
	}, msgs)
}

func TestBuiltins(t *testing.T) {
	rules := Builtins()
	require.Equal(t, []string{
		"go-errorf", "go-strings-contains", "go-strings-not-contains", "js-var-to-let",
		"py-is-none", "py-is-not-none", "ts-var-to-let", "tsx-var-to-let",
	}, ruleIDs(rules))
	for _, r := range rules {
		require.True(t, r.Builtin, r.ID)
		require.Empty(t, r.Path, r.ID)
		require.Equal(t, "built-in", r.Source())
		require.NotEmpty(t, r.Message, r.ID)
		require.Contains(t, string(r.YAML), "id: "+r.ID+"\n")
		lang, ok := CanonicalLanguage(r.Language)
		require.True(t, ok, r.ID)
		require.Equal(t, lang, r.Language)
	}

	// Callers get copies.
	rules[0].YAML[0] = 'X'
	rules[0].ID = "changed"
	again := Builtins()
	require.Equal(t, "go-errorf", again[0].ID)
	require.NotEqual(t, byte('X'), again[0].YAML[0])
}

// The TypeScript and TSX var-to-let rules are the JavaScript one with
// another id and language: a fix to one must reach all three.
func TestVarToLetRulesAgree(t *testing.T) {
	body := func(id string) string {
		for _, r := range Builtins() {
			if r.ID != id {
				continue
			}
			var keep []string
			for _, l := range strings.Split(string(r.YAML), "\n") {
				if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "id:") || strings.HasPrefix(l, "language:") {
					continue
				}
				keep = append(keep, l)
			}
			return strings.Join(keep, "\n")
		}
		t.Fatalf("no built-in %s", id)
		return ""
	}
	js := body("js-var-to-let")
	require.Equal(t, js, body("ts-var-to-let"))
	require.Equal(t, js, body("tsx-var-to-let"))
}

func TestCanonicalLanguage(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"go", "go", true},
		{"Go", "go", true},
		{"golang", "go", true},
		{"py", "python", true},
		{" Python ", "python", true},
		{"ts", "typescript", true},
		{"TSX", "tsx", true},
		{"jsx", "javascript", true},
		{"c++", "cpp", true},
		{"yml", "yaml", true},
		{"cobol", "", false},
		{"sh", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := CanonicalLanguage(tt.in)
		require.Equal(t, tt.ok, ok, tt.in)
		require.Equal(t, tt.want, got, tt.in)
	}
	require.True(t, slices.IsSorted(Languages()))
	require.Contains(t, Languages(), "rust")
}

func TestPatternsOf(t *testing.T) {
	doc := `
id: x
language: go
message: "pattern: not this"
utils:
  is-call:
    pattern: call($A)
rule:
  all:
    - pattern: foo($A)
    - not:
        inside:
          pattern:
            context: 'func _() { bar($A) }'
            selector: call_expression
            strictness: ast
    - has:
        stopBy: end
        matches: is-call
constraints:
  A:
    pattern: foo($A)
transform:
  B:
    replace: {source: $A, replace: x, by: y}
rewriters:
  - id: r
    rule: {pattern: baz($X)}
    fix: qux($X)
fix:
  template: quux($A)
`
	pats, err := patternsOf([]byte(doc))
	require.NoError(t, err)
	require.ElementsMatch(t, []pattern{
		{Text: "call($A)"},
		{Text: "foo($A)"},
		{Text: "func _() { bar($A) }", Selector: "call_expression", Strictness: "ast"},
		{Text: "baz($X)"},
	}, pats)
}
