package activities

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var pascal = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// Log keys are PascalCase everywhere (RunID, Feature, Attempt, Tier), so
// one query finds a run's lines whichever package wrote them. This reads
// the source of the packages that log on a run's behalf: the keys of
// key/value logger calls (Temporal's activity and workflow loggers) and
// of zerolog field methods. app/engine and internal/logging are left
// out: their "component" tag marks the engine's and the SDK's own lines,
// as the e2e tests read them.
func TestLogKeysArePascalCase(t *testing.T) {
	kv := map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true}
	field := map[string]bool{"Str": true, "Int": true, "Int64": true, "Dur": true, "Bool": true, "Strs": true, "Float64": true, "Interface": true, "Any": true, "Time": true, "Uint64": true}
	var files []string
	for _, dir := range []string{".", "../gate", "../workflows", "../app/daemon", "../internal/agent", "../internal/child", "../cmd/horizon"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	keys := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			var at []int
			switch name := sel.Sel.Name; {
			case kv[name] && len(call.Args) > 1:
				for i := 1; i < len(call.Args); i += 2 {
					at = append(at, i)
				}
			case field[name] && len(call.Args) == 2:
				at = []int{0}
			}
			for _, i := range at {
				lit, ok := call.Args[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				k, _ := strconv.Unquote(lit.Value)
				keys++
				require.Regexp(t, pascal, k, "%s: log key %q is not PascalCase", path, k)
			}
			return true
		})
	}
	require.Greater(t, keys, 10, "the scan found the packages' log keys")
}
