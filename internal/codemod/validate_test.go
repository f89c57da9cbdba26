package codemod

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	bin := astGrepBin(t)
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error; none means valid
	}{
		{
			name: "good",
			doc:  renameRule,
		},
		{
			name: "good with context and selector",
			doc:  "id: ok\nlanguage: go\nrule:\n  pattern:\n    context: 'func _() { errors.New($A) }'\n    selector: call_expression\nfix: fmt.Errorf($A)\n",
		},
		{
			name: "undefined metavariable in fix",
			doc:  "id: bad-fix\nlanguage: go\nrule:\n  pattern: foo($A)\nfix: bar($B)\n",
			want: []string{"ast-grep rejects the rule", "Undefined meta var `B` used in `fix`"},
		},
		{
			name: "unknown rule key",
			doc:  "id: typo\nlanguage: go\nrule:\n  patern: foo()\nfix: bar()\n",
			want: []string{"ast-grep rejects the rule", "unknown field `patern`"},
		},
		{
			name: "unknown kind",
			doc:  "id: kind\nlanguage: python\nrule:\n  kind: no_such_kind\nfix: x\n",
			want: []string{"ast-grep rejects the rule", "no_such_kind"},
		},
		{
			name: "pattern that is no statement at all",
			doc:  "id: nothing\nlanguage: go\nrule:\n  pattern: 'func ('\nfix: x\n",
			want: []string{"ast-grep rejects the rule"},
		},
		{
			name: "pattern with a syntax error",
			doc:  "id: half\nlanguage: javascript\nrule:\n  pattern: 'var $A = '\nfix: 'let $A = '\n",
			want: []string{`pattern "var $A = " does not parse as javascript`, "ERROR node", "would match nothing", "Rule must specify a set of AST kinds"},
		},
		{
			name: "syntax error in a nested pattern",
			doc:  "id: nested\nlanguage: python\nrule:\n  pattern: print($A)\n  not:\n    inside:\n      pattern: 'if $A:: pass'\n      stopBy: end\nfix: log($A)\n",
			want: []string{`pattern "if $A:: pass" does not parse as python`},
		},
		{
			name: "Go call pattern read as a conversion",
			doc:  "id: conv\nlanguage: go\nrule:\n  pattern: errors.New($A)\nfix: fmt.Errorf($A)\n",
			want: []string{`Go pattern "errors.New($A)" parses as a type conversion`, "selector: call_expression"},
		},
		{
			name: "bad selector",
			doc:  "id: sel\nlanguage: go\nrule:\n  pattern:\n    context: 'func _() { foo() }'\n    selector: no_such_kind\nfix: x\n",
			want: []string{"ast-grep rejects the rule"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := inlineRule(t, ".horizon/codemods/r.yml", tt.doc)
			err := Validate(testCtx(t), bin, r)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var re *RuleError
			require.True(t, errors.As(err, &re), "%T", err)
			require.Equal(t, r.ID, re.ID)
			require.Contains(t, err.Error(), `codemod "`+r.ID+`" (.horizon/codemods/r.yml): `)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "INLINE_RULES")
		})
	}
}

// A pattern Validate refuses for not parsing is one Apply would silently
// run to no effect: the check is what makes the mistake visible.
func TestUnparsablePatternMatchesNothing(t *testing.T) {
	bin := astGrepBin(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": "package p\n\nvar e = errors.New(x)\n\nfunc f() error { return errors.New(msg) }\n"})
	r := inlineRule(t, "conv.yml", "id: conv\nlanguage: go\nrule:\n  pattern: errors.New($A)\nfix: fmt.Errorf($A)\n")
	res, err := Apply(testCtx(t), bin, dir, []Rule{r}, 0)
	require.NoError(t, err)
	require.Empty(t, res.Applied)
	require.Error(t, Validate(testCtx(t), bin, r))
}

func TestValidateBadArguments(t *testing.T) {
	r := inlineRule(t, "r.yml", renameRule)
	require.ErrorContains(t, Validate(t.Context(), "", r), "no ast-grep binary")
	require.ErrorContains(t, Validate(t.Context(), "/bin/true", Rule{ID: "x"}), "no YAML")
	err := Validate(t.Context(), "/nonexistent/ast-grep", r)
	require.ErrorContains(t, err, `codemod "rename-old-helper" (r.yml): could not run ast-grep to check it`)
}
