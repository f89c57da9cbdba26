package docmap

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the module path: imports under it are horizon's packages.
const module = "github.com/horizon/horizon"

// layerItem is one entry of the "Layers" list: "3. **tools**: `a`, `b`".
var layerItem = regexp.MustCompile(`^(\d+)\. \*\*`)

// pkgName is a package named in backticks in an entry of the list.
var pkgName = regexp.MustCompile("`([a-z][\\w/.-]*)`")

// layers reads the "## Layers" list of ARCHITECTURE.md: each package's
// layer number. An entry runs until the next entry or blank line.
func layers(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	in, layer, described := false, 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(line) == "## Layers"
			continue
		}
		if !in {
			continue
		}
		if m := layerItem.FindStringSubmatch(line); m != nil {
			layer, _ = strconv.Atoi(m[1])
			described = false
			line = strings.TrimPrefix(line, m[0])
		} else if strings.TrimSpace(line) == "" {
			layer = 0
		}
		if layer == 0 || described {
			continue
		}
		// An entry's packages come before its first full stop; what
		// follows describes them.
		names, _, stop := strings.Cut(line, ". ")
		if !stop {
			names, stop = strings.CutSuffix(line, ".")
		}
		described = stop
		for _, m := range pkgName.FindAllStringSubmatch(names, -1) {
			if prev, dup := out[m[1]]; dup && prev != layer {
				return nil, fmt.Errorf("%s is in layers %d and %d", m[1], prev, layer)
			}
			out[m[1]] = layer
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no \"## Layers\" list", path)
	}
	return out, nil
}

// imports lists the module's packages under dir (relative paths) with
// the module packages each imports, from its non-test Go files.
func imports(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	return out, err
}

// Every package is in a layer, and imports only packages of its own layer
// or of a layer below: no arrow of the import graph runs back up.
func TestLayers(t *testing.T) {
	layer, err := layers(filepath.Join(root, "ARCHITECTURE.md"))
	require.NoError(t, err)
	pkgs, err := imports(root)
	require.NoError(t, err)
	for _, tl := range []string{"horizon", "workflows", "app/core", "cmd/horizon"} {
		require.Contains(t, pkgs, tl, "the walk missed a package")
	}
	require.Empty(t, problems(root, layer, pkgs))
}

// problems lists each package in no layer, each import that runs up a
// layer, and each name in the list that is no directory under dir.
func problems(dir string, layer map[string]int, pkgs map[string][]string) []string {
	var out []string
	for pkg, deps := range pkgs {
		l, ok := layer[pkg]
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no layer: add it to ARCHITECTURE.md's Layers", pkg))
			continue
		}
		for _, d := range deps {
			if dl, ok := layer[d]; ok && dl > l {
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d): the arrow runs up", pkg, l, d, dl))
			}
		}
	}
	for name := range layer {
		// A package of tests alone (internal/e2e) has no non-test file.
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.IsDir() {
			out = append(out, fmt.Sprintf("ARCHITECTURE.md's Layers names %s, which is no package", name))
		}
	}
	slices.Sort(out)
	return out
}

// The layer check sees an arrow that runs up, and a package in no layer.
func TestLayersFindsWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	write := func(path, src string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, path), []byte(src), 0o644))
	}
	write("low/low.go", "package low\n\nimport _ \""+module+"/high\"\n")
	write("high/high.go", "package high\n\nimport _ \""+module+"/low\"\n")
	write("stray/stray.go", "package stray\n")
	write("low/low_test.go", "package low\n\nimport _ \""+module+"/stray\"\n")
	write("ARCHITECTURE.md", "# A\n\n## Layers\n\n1. **low**: `low`. It is low,\n   not `high`.\n2. **high**: `high`,\n   `gone`.\n\n## Next\n\n- `stray`\n")

	layer, err := layers(filepath.Join(dir, "ARCHITECTURE.md"))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"low": 1, "high": 2, "gone": 2}, layer)
	pkgs, err := imports(dir)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"low": {"high"}, "high": {"low"}, "stray": nil}, pkgs, "test files are left out")
	require.Equal(t, []string{
		"ARCHITECTURE.md's Layers names gone, which is no package",
		"low (layer 1) imports high (layer 2): the arrow runs up",
		"stray is in no layer: add it to ARCHITECTURE.md's Layers",
	}, problems(dir, layer, pkgs))
}
