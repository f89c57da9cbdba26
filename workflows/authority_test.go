package workflows

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// meteredActivities are the activities that call a metered model: a
// session on OpenCode or an applier CLI, the reader, a loop's turn and its
// compaction, a task's session, the advisor's review, the lead's draft of
// a specialist. Every workflow-side execution of one must go through the
// spend authority: a grant's call (or, for a call that runs beside a
// session, its start). The second half of
// TestMeteredCallsGoThroughTheAuthority keeps this list honest against
// the activities package.
var meteredActivities = map[string]bool{
	"AgentSession": true, "Diagnose": true, "LoopActivation": true, "CompactLoop": true, "TaskSession": true, "AdvisorWatch": true, "Research": true,
	"SpecialistDraftSession": true,
}

// authorityMethods are the grant's methods that execute a metered
// activity (authority.go).
var authorityMethods = map[string]bool{"call": true, "start": true, "begin": true, "startOn": true}

// authorityFile is the one file that may make grants.
const authorityFile = "authority.go"

// meteredSite is one reference to a metered activity in workflow code.
type meteredSite struct {
	pos      string
	activity string
	ok       bool   // executed through a grant
	why      string // what is wrong, when not ok
}

// meteredSites lists every reference to a metered activity (a.X) in one
// file, and every grant made outside authority.go. A reference is fine
// only as the activity argument of a grant's call or start: passing it to
// execute or workflow.ExecuteActivity, or keeping it in a variable, would
// be a metered call the authority never weighed.
func meteredSites(fset *token.FileSet, f *ast.File, name string) []meteredSite {
	var out []meteredSite
	through := map[ast.Node]bool{} // metered references that are a grant call's activity argument
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !authorityMethods[sel.Sel.Name] || len(call.Args) < 3 {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "a" {
			return true // a method of the activities, not a grant
		}
		through[call.Args[2]] = true
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok || id.Name != "a" || !meteredActivities[n.Sel.Name] {
				return true
			}
			s := meteredSite{pos: fset.Position(n.Pos()).String(), activity: n.Sel.Name, ok: through[n]}
			if !s.ok {
				s.why = "a." + n.Sel.Name + " is executed (or kept) outside the spend authority: grant the call (authority.grant, routed) and run it with the grant's call"
			}
			out = append(out, s)
		case *ast.CompositeLit:
			if id, ok := n.Type.(*ast.Ident); ok && id.Name == "grant" && name != authorityFile {
				out = append(out, meteredSite{pos: fset.Position(n.Pos()).String(), activity: "grant", why: "a grant made outside " + authorityFile + ": only the authority grants metered calls"})
			}
		}
		return true
	})
	return out
}

// checkSource parses one file and returns its metered sites.
func checkSource(t *testing.T, name, src string) []meteredSite {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	require.NoError(t, err)
	return meteredSites(fset, f, filepath.Base(name))
}

func bypasses(sites []meteredSite) []string {
	var out []string
	for _, s := range sites {
		if !s.ok {
			out = append(out, s.pos+": "+s.why)
		}
	}
	return out
}

// Every metered model call horizon's workflows make goes through the spend
// authority. The test lists every call site of a metered activity in this
// package (logged) and fails on one that bypasses the authority.
func TestMeteredCallsGoThroughTheAuthority(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	seen := map[string]int{}
	var problems, sites []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, s := range meteredSites(fset, f, path) {
			if s.ok {
				seen[s.activity]++
				sites = append(sites, fmt.Sprintf("%s: %s", s.pos, s.activity))
				continue
			}
			problems = append(problems, s.pos+": "+s.why)
		}
	}
	sort.Strings(sites)
	t.Logf("metered call sites, each through the authority:\n%s", strings.Join(sites, "\n"))
	require.Empty(t, problems)
	for act := range meteredActivities {
		require.Positive(t, seen[act], "metered activity %s is executed nowhere: is the list stale, or does a call bypass the scan?", act)
	}

	// The list is the activities that reach a metered model: every
	// function of the activities package that records a metered cost or
	// runs a model session must be reachable from a listed activity.
	reach := meteredReach(t, "../activities")
	for fn, why := range reach.direct {
		if !reach.from[fn] {
			problems = append(problems, fmt.Sprintf("activities.%s %s, but no activity in meteredActivities reaches it: add the activity to the list and run it through the authority", fn, why))
		}
	}
	sort.Strings(problems)
	require.Empty(t, problems)
}

// meteredReachResult is what meteredReach found: the functions that make a
// metered call themselves (with how) and those a listed activity reaches.
type meteredReachResult struct {
	direct map[string]string
	from   map[string]bool
}

// meteredReach builds the activities package's call graph by name (no
// types: a method and a function of one name are one node, which can
// only over-approximate what a listed activity reaches) and marks what
// the metered activities reach.
func meteredReach(t *testing.T, dir string) meteredReachResult {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	calls := map[string][]string{}
	res := meteredReachResult{direct: map[string]string{}, from: map[string]bool{}}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, path, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch fn := call.Fun.(type) {
				case *ast.Ident:
					callee = fn.Name
				case *ast.SelectorExpr:
					callee = fn.Sel.Name
					if id, ok := fn.X.(*ast.Ident); ok && id.Name == "reader" && callee == "Diagnose" {
						res.direct[name] = "calls the reader model"
					}
				}
				switch callee {
				case "recordSpend":
					res.direct[name] = "records a metered cost"
				case "RunSession":
					res.direct[name] = "runs a model session"
				}
				calls[name] = append(calls[name], callee)
				return true
			})
		}
	}
	var walk func(string)
	walk = func(fn string) {
		if res.from[fn] {
			return
		}
		res.from[fn] = true
		for _, c := range calls[fn] {
			walk(c)
		}
	}
	for act := range meteredActivities {
		require.Contains(t, calls, act, "metered activity %s is not a function of the activities package", act)
		walk(act)
	}
	return res
}

// The scan itself: snippets that bypass the authority fail it, the ways
// the authority is meant to be used pass.
func TestMeteredCallScanCatchesBypasses(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		bad             int
	}{
		{"a session executed directly", "x.go", `package workflows
func f(ctx C) { execute(ctx, opts, a.AgentSession, in, &out) }`, 1},
		{"a loop turn through the SDK", "x.go", `package workflows
func f(ctx C) { workflow.ExecuteActivity(ctx, a.LoopActivation, in) }`, 1},
		{"a metered activity kept in a variable", "x.go", `package workflows
func f(ctx C) { fn := a.TaskSession; g.call(ctx, opts, fn, in, &out) }`, 1},
		{"a grant made outside the authority", "x.go", `package workflows
func f(ctx C) { g := grant{}; g.call(ctx, opts, a.Diagnose, in, &out) }`, 1},
		{"an advisor review started without a grant", "x.go", `package workflows
func f(ctx C) { f := workflow.ExecuteActivity(wctx, a.AdvisorWatch, in) }`, 1},
		{"a compaction executed directly", "x.go", `package workflows
func f(ctx C) { execute(ctx, opts, a.CompactLoop, in, nil) }`, 1},
		{"through a grant's call", "x.go", `package workflows
func f(ctx C) { g, err := au.grant(ctx, role, s, true); g.call(ctx, opts, a.AgentSession, in, &out) }`, 0},
		{"through a routed grant", "x.go", `package workflows
func f(ctx C) { routed(p).call(ctx, opts, a.AgentSession, in, &out) }`, 0},
		{"the watchdog through a grant's start", "x.go", `package workflows
func f(ctx C) { f := g.start(wctx, opts, a.AdvisorWatch, in) }`, 0},
		{"grants made in the authority", "authority.go", `package workflows
func unchecked(s session) grant { return grant{session: s} }`, 0},
		{"an activity that is not metered", "x.go", `package workflows
func f(ctx C) { execute(ctx, opts, a.RunGate, in, &out) }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, bypasses(checkSource(t, tc.file, tc.src)), tc.bad)
		})
	}
}
