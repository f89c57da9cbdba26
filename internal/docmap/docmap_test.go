package docmap

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the module's root, from this package's directory.
const root = "../.."

// section is the ARCHITECTURE.md heading whose list is checked.
const section = "## Where things are"

// place matches one answer: a Go file and a function (Name) or method
// (Type.Name), each in backticks, next to each other.
var place = regexp.MustCompile("`([\\w./-]+\\.go)` `([A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*)?)`")

// ref is one file and function ARCHITECTURE.md names.
type ref struct {
	line int
	file string
	fn   string
}

func (r ref) String() string { return fmt.Sprintf("ARCHITECTURE.md:%d: %s %s", r.line, r.file, r.fn) }

// where reads the refs of the "Where things are" list: from its heading
// to the next heading.
func where(readme string) ([]ref, error) {
	f, err := os.Open(readme)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var refs []ref
	in, found := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(line) == section
			found = found || in
			continue
		}
		if !in {
			continue
		}
		for _, m := range place.FindAllStringSubmatch(line, -1) {
			refs = append(refs, ref{line: n, file: m[1], fn: m[2]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s has no %q section", readme, section)
	}
	return refs, nil
}

// check says what is wrong with a ref under dir: the file does not parse
// (or is missing), or declares no such function or method.
func check(dir string, r ref) error {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, filepath.Join(dir, r.file), nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	recv, name, isMethod := strings.Cut(r.fn, ".")
	if !isMethod {
		recv, name = "", recv
	}
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Name.Name == name && receiver(fd) == recv {
			return nil
		}
	}
	if isMethod {
		return fmt.Errorf("%s: %s declares no method %s on %s", r, r.file, name, recv)
	}
	return fmt.Errorf("%s: %s declares no function %s", r, r.file, name)
}

// receiver is the name of a method's receiver type ("" for a function),
// without pointer or type parameters.
func receiver(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// Every file and function the "Where things are" list of ARCHITECTURE.md
// names exists.
func TestWhereThingsAre(t *testing.T) {
	refs, err := where(filepath.Join(root, "ARCHITECTURE.md"))
	require.NoError(t, err)
	// The questions people ask most; each must have an answer.
	require.GreaterOrEqual(t, len(refs), 7, "the list names too few places: %v", refs)
	for _, r := range refs {
		require.NoError(t, check(root, r))
	}
}

// The check fails for what is not there: a missing file, function, method
// or a method on the wrong type.
func TestCheckFindsWhatIsGone(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	src := "package p\n\ntype loop struct{}\n\nfunc (l *loop) audit() {}\n\nfunc (s set[T]) add() {}\n\ntype set[T any] struct{}\n\nfunc Route() {}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "p.go"), []byte(src), 0o644))
	tests := []struct {
		file, fn string
		err      string
	}{
		{"p/p.go", "loop.audit", ""},
		{"p/p.go", "set.add", ""},
		{"p/p.go", "Route", ""},
		{"p/p.go", "loop.gate", "declares no method gate on loop"},
		{"p/p.go", "other.audit", "declares no method audit on other"},
		{"p/p.go", "audit", "declares no function audit"},
		{"p/gone.go", "Route", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+tt.fn, func(t *testing.T) {
			err := check(dir, ref{line: 1, file: tt.file, fn: tt.fn})
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)
		})
	}
}

// The list is read from its section only, in the form ARCHITECTURE.md uses.
func TestWhereReadsTheSection(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "ARCHITECTURE.md")
	text := "# x\n\n- `a.go` `Before`\n\n## Where things are\n\n- where X: `workflows/loop.go` `loop.audit`, then `gate/env.go` `ScrubEnv`\n\n## Next\n\n- `b.go` `After`\n"
	require.NoError(t, os.WriteFile(readme, []byte(text), 0o644))
	refs, err := where(readme)
	require.NoError(t, err)
	require.Equal(t, []ref{{7, "workflows/loop.go", "loop.audit"}, {7, "gate/env.go", "ScrubEnv"}}, refs)

	require.NoError(t, os.WriteFile(readme, []byte("# x\n"), 0o644))
	_, err = where(readme)
	require.ErrorContains(t, err, "no \"## Where things are\" section")
}

// The file-by-file map names every workflow file, every activity (an
// exported method of activities.Activities) and every internal package.
func TestMapNamesEveryFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	require.NoError(t, err)
	readme := string(b)
	var missing []string
	files, err := filepath.Glob(filepath.Join(root, "workflows", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if name := "workflows/" + filepath.Base(f); !strings.HasSuffix(f, "_test.go") && !strings.Contains(readme, name) {
			missing = append(missing, name)
		}
	}
	fset := token.NewFileSet()
	files, err = filepath.Glob(filepath.Join(root, "activities", "*.go"))
	require.NoError(t, err)
	activities := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && receiver(fd) == "Activities" && fd.Name.IsExported() {
				activities++
				if !regexp.MustCompile(`\b` + fd.Name.Name + `\b[^\n]*activities/` + filepath.Base(f)).MatchString(readme) {
					missing = append(missing, "activity "+fd.Name.Name+" with activities/"+filepath.Base(f))
				}
			}
		}
	}
	require.NotZero(t, activities)
	dirs, err := os.ReadDir(filepath.Join(root, "internal"))
	require.NoError(t, err)
	for _, d := range dirs {
		if name := "internal/" + d.Name() + "/"; d.IsDir() && !strings.Contains(readme, name) {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "ARCHITECTURE.md's map does not name these")
}
