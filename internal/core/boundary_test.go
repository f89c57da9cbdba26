package core

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// surfaces are the packages people use horizon through. They read and
// change it only through this package: a surface that signals, updates,
// starts or cancels a workflow, or changes a schedule, itself would be a
// second way to do what the core does, with its own errors. The daemon,
// engine and worker internals, workflows and activities are not surfaces:
// they are what the core drives.
var surfaces = []string{"cmd/horizon", "internal/console", "internal/web"}

// engineWrites are the client's calls that change workflows.
var engineWrites = map[string]bool{
	"SignalWorkflow": true, "UpdateWorkflow": true, "ExecuteWorkflow": true, "CancelWorkflow": true,
	"TerminateWorkflow": true, "SignalWithStartWorkflow": true, "UpdateWithStartWorkflow": true,
}

// scheduleWrites are a ScheduleClient's (or a schedule handle's) calls
// that change schedules.
var scheduleWrites = map[string]bool{
	"Create": true, "Trigger": true, "Delete": true, "Pause": true, "Unpause": true, "Update": true, "Backfill": true,
}

// writes lists the engine writes in one file, as "file:line: call". The
// match is by selector name, without types: a surface has no business
// with methods of those names on anything else either.
func writes(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		name := sel.Sel.Name
		if engineWrites[name] || (scheduleWrites[name] && callsScheduleClient(sel.X)) {
			out = append(out, fmt.Sprintf("%s: %s", fset.Position(call.Pos()), name))
		}
		return true
	})
	return out
}

// callsScheduleClient tells an expression that reaches a schedule through
// the client's ScheduleClient().
func callsScheduleClient(x ast.Expr) bool {
	found := false
	ast.Inspect(x, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "ScheduleClient" {
				found = true
			}
		}
		return !found
	})
	return found
}

// surfaceWrites parses every non-test Go file under the surfaces of the
// module at root.
func surfaceWrites(t *testing.T, root string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	for _, s := range surfaces {
		dir := filepath.Join(root, filepath.FromSlash(s))
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return fmt.Errorf("parse %s: %w", path, err)
			}
			out = append(out, writes(fset, f)...)
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// No surface writes to the engine itself.
func TestSurfacesWriteOnlyThroughTheCore(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root")
	require.Empty(t, surfaceWrites(t, root), "a surface changes workflows or schedules without internal/core; add the verb to the core and call it")
}

// The check finds what it is meant to find, and passes what is allowed.
func TestBoundaryCheckFindsWrites(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"a command cancelling a run itself", `package main
func cancel(c client.Client) error { return c.CancelWorkflow(ctx, "run-1", "") }`, []string{"CancelWorkflow"}},
		{"an update sent directly", `package main
func f() { h, _ := a.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{}); _ = h }`, []string{"UpdateWorkflow"}},
		{"a schedule deleted", `package main
func f() { _ = c.ScheduleClient().GetHandle(ctx, "s").Delete(ctx) }`, []string{"Delete"}},
		{"a schedule created", `package main
func f() { _, _ = c.ScheduleClient().Create(ctx, o) }`, []string{"Create"}},
		{"reads and the core's verbs", `package main
func f() {
	_, _ = c.DescribeWorkflowExecution(ctx, id, "")
	_, _ = c.ScheduleClient().GetHandle(ctx, "s").Describe(ctx)
	_ = core.Runs{Client: c}.Cancel(ctx, id)
	_ = os.Create("x")
}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "snippet.go", tt.src, 0)
			require.NoError(t, err)
			var got []string
			for _, w := range writes(fset, f) {
				got = append(got, w[strings.LastIndex(w, " ")+1:])
			}
			require.Equal(t, tt.want, got)
		})
	}
}
