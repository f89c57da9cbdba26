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
var surfaces = []string{"cmd/horizon", "app/console", "app/web"}

// engineImports are the engine's packages: the workflows and activities
// the core drives, the embedded server, and the Temporal SDK and API. A
// surface that imports one reads or changes horizon past the core.
var engineImports = []string{
	"github.com/horizon/horizon/workflows",
	"github.com/horizon/horizon/activities",
	"github.com/horizon/horizon/app/engine",
	"go.temporal.io/",
}

// hostFiles are the surfaces' files that host the engine rather than use
// it: the CLI dials the engine (and spawns the daemon that runs it) in one
// place, and hands each command the core over that connection.
var hostFiles = map[string]string{
	"cmd/horizon/engine.go": "dials the engine, spawns the daemon, and makes the core's App",
}

// engineImport is the engine package path imports, or "".
func engineImport(path string) string {
	for _, e := range engineImports {
		if path == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(path, e)) {
			return path
		}
	}
	return ""
}

// imports lists the engine packages one file imports, as "file: path".
func imports(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, im := range f.Imports {
		if p := engineImport(strings.Trim(im.Path.Value, `"`)); p != "" {
			out = append(out, fmt.Sprintf("%s: imports %s", fset.Position(im.Pos()).Filename, p))
		}
	}
	return out
}

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
// module at root: the engine writes, and the engine imports of any file
// but the host files.
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
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if _, host := hostFiles[filepath.ToSlash(rel)]; !host {
				out = append(out, imports(fset, f)...)
			}
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
	require.Empty(t, surfaceWrites(t, root), "a surface reaches the engine without app/core; add the verb (with its request and result types) to the core's App and call it")
	for f := range hostFiles {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err, "a host file named in hostFiles is gone; take it off the list")
	}
}

// The import check finds the engine's packages and passes the core's.
func TestBoundaryCheckFindsImports(t *testing.T) {
	src := `package main
import (
	"context"
	"go.temporal.io/sdk/client"
	enumspb "go.temporal.io/api/enums/v1"
	"github.com/horizon/horizon/workflows"
	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/app/engine"
	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/workflowsextra"
)`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cmd.go", src, parser.ImportsOnly)
	require.NoError(t, err)
	var got []string
	for _, im := range imports(fset, f) {
		got = append(got, im[strings.LastIndex(im, " ")+1:])
	}
	require.Equal(t, []string{"go.temporal.io/sdk/client", "go.temporal.io/api/enums/v1", "github.com/horizon/horizon/workflows",
		"github.com/horizon/horizon/activities", "github.com/horizon/horizon/app/engine"}, got)
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
