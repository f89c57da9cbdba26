package codemod

import (
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/builtin/*/want")

// Each built-in rule rewrites the real files in testdata/builtin/<id>/in
// into testdata/builtin/<id>/want: the cases it must change and the ones
// it must leave alone.
func TestBuiltinGolden(t *testing.T) {
	bin := astGrepBin(t)
	for _, r := range Builtins() {
		t.Run(r.ID, func(t *testing.T) {
			base := filepath.Join("testdata", "builtin", r.ID)
			require.DirExists(t, filepath.Join(base, "in"), "every built-in needs a golden test")
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(base, "in"))))
			before := snapshot(t, dir)

			res, err := Apply(testCtx(t), bin, dir, []Rule{r}, time.Minute)
			require.NoError(t, err, res.Output)
			require.NotEmpty(t, res.Applied, "the rule changed nothing in its own sample")
			for _, c := range res.Applied {
				require.Equal(t, r.ID, c.Rule)
				require.Contains(t, res.Files, c.File)
				require.Positive(t, c.Line)
			}

			after := snapshot(t, dir)
			require.Len(t, after, len(before), "Apply created or removed files")
			var changed []string
			for name, got := range after {
				if got != before[name] {
					changed = append(changed, name)
				}
				want := filepath.Join(base, "want", filepath.FromSlash(name))
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(want), 0o755))
					require.NoError(t, os.WriteFile(want, []byte(got), 0o644))
					continue
				}
				w, err := os.ReadFile(want)
				require.NoError(t, err)
				require.Equal(t, string(w), got, "%s after %s", name, r.ID)
				checkSyntax(t, filepath.Join(dir, filepath.FromSlash(name)))
			}
			require.ElementsMatch(t, changed, res.Files)

			// Deterministic and idempotent: a second run changes nothing.
			again, err := Apply(testCtx(t), bin, dir, []Rule{r}, time.Minute)
			require.NoError(t, err)
			require.Empty(t, again.Applied, again.Output)
		})
	}
}

// checkSyntax checks a rewritten file still compiles (Go: parse and type
// check against the standard library) or at least parses (Python, JS),
// where the tool to check it is at hand.
func checkSyntax(t *testing.T, path string) {
	t.Helper()
	switch filepath.Ext(path) {
	case ".go":
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
		_, err = conf.Check("sample", fset, []*ast.File{f}, nil)
		require.NoError(t, err, "%s no longer type-checks", path)
	case ".py":
		if py, err := exec.LookPath("python3"); err == nil {
			out, err := exec.Command(py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", path).CombinedOutput()
			require.NoError(t, err, "%s: %s", path, out)
		}
	case ".js":
		if node, err := exec.LookPath("node"); err == nil {
			out, err := exec.Command(node, "--check", path).CombinedOutput()
			require.NoError(t, err, "%s: %s", path, out)
		}
	}
}

// All built-ins together over every sample: each file ends up as its own
// rule's golden output (the rules do not interfere).
func TestBuiltinsTogether(t *testing.T) {
	bin := astGrepBin(t)
	dir := t.TempDir()
	want := map[string]string{}
	for _, r := range Builtins() {
		base := filepath.Join("testdata", "builtin", r.ID)
		sub := filepath.Join(dir, r.ID)
		require.NoError(t, os.CopyFS(sub, os.DirFS(filepath.Join(base, "in"))))
		for name := range snapshot(t, sub) {
			w, err := os.ReadFile(filepath.Join(base, "want", filepath.FromSlash(name)))
			require.NoError(t, err)
			want[r.ID+"/"+name] = string(w)
		}
	}
	res, err := Apply(testCtx(t), bin, dir, Builtins(), time.Minute)
	require.NoError(t, err, res.Output)
	require.Equal(t, want, snapshot(t, dir))
	for _, r := range Builtins() {
		require.Contains(t, res.Output, r.ID+": ")
	}
}

func TestBuiltinsValidate(t *testing.T) {
	bin := astGrepBin(t)
	for _, r := range Builtins() {
		t.Run(r.ID, func(t *testing.T) {
			require.NoError(t, Validate(testCtx(t), bin, r))
		})
	}
}

// Every built-in has a golden test: files in in/ and the same names in
// want/ (checked without ast-grep, so -short catches a missing one).
func TestGoldenFilesExist(t *testing.T) {
	for _, r := range Builtins() {
		base := filepath.Join("testdata", "builtin", r.ID)
		entries, err := os.ReadDir(filepath.Join(base, "in"))
		require.NoError(t, err, r.ID)
		require.NotEmpty(t, entries, r.ID)
		for _, e := range entries {
			require.FileExists(t, filepath.Join(base, "want", e.Name()), r.ID)
		}
	}
}
