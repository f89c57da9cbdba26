package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/agent"
)

func diag(sev, line, col int, msg string) agent.Diagnostic {
	return agent.Diagnostic{Line: line, Col: col, Severity: sev, Message: msg}
}

// The files a review's diagnostics cover: those the worker's file tools
// changed since the last review, each with its newest report, named
// relative to the lane; a changed file no server reported on is left out,
// and so is a file the servers hold that the worker did not change.
func TestChangedDiagnostics(t *testing.T) {
	lane := t.TempDir()
	abs := func(f string) string { return filepath.Join(lane, f) }
	cases := []struct {
		name  string
		msgs  []agent.Message
		after string
		want  []fileDiagnostics
	}{{
		name: "no server: nothing",
		msgs: []agent.Message{{ID: "m1", Role: "assistant", Edited: []string{abs("a.go")}}},
	}, {
		name: "the newest report of each changed file; an unchanged file left out",
		msgs: []agent.Message{
			{ID: "m1", Role: "assistant", Edited: []string{abs("a.go")}, Diagnostics: map[string][]agent.Diagnostic{
				abs("a.go"): {diag(1, 3, 9, "undefined: c")}, abs("other.go"): {diag(1, 1, 1, "not changed")}}},
			{ID: "m2", Role: "assistant", Edited: []string{"b.go"}, Diagnostics: map[string][]agent.Diagnostic{
				abs("a.go"): {diag(2, 4, 1, "x declared and not used")}, abs("b.go"): nil}},
			{ID: "m3", Role: "assistant", Edited: []string{abs("c.txt")}},
		},
		want: []fileDiagnostics{{File: "a.go", Diags: []agent.Diagnostic{diag(2, 4, 1, "x declared and not used")}}, {File: "b.go"}},
	}, {
		name:  "only since the last review, and never the advisor's messages",
		after: "m1",
		msgs: []agent.Message{
			{ID: "m1", Role: "assistant", Edited: []string{abs("a.go")}, Diagnostics: map[string][]agent.Diagnostic{abs("a.go"): {diag(1, 3, 9, "reviewed")}}},
			{ID: "m2", Role: "user", Advice: "r1.1", Edited: []string{abs("n.go")}, Diagnostics: map[string][]agent.Diagnostic{abs("n.go"): {diag(1, 1, 1, "advice")}}},
			{ID: "m3", Role: "assistant", Edited: []string{abs("d/e.go")}, Diagnostics: map[string][]agent.Diagnostic{abs("d/e.go"): {diag(1, 2, 2, "new")}}},
		},
		want: []fileDiagnostics{{File: "d/e.go", Diags: []agent.Diagnostic{diag(1, 2, 2, "new")}}},
	}, {
		name: "a file outside the lane keeps its path",
		msgs: []agent.Message{{ID: "m1", Role: "assistant", Edited: []string{"/elsewhere/x.go"},
			Diagnostics: map[string][]agent.Diagnostic{"/elsewhere/x.go": {diag(1, 1, 1, "far")}}}},
		want: []fileDiagnostics{{File: "/elsewhere/x.go", Diags: []agent.Diagnostic{diag(1, 1, 1, "far")}}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, changedDiagnostics(c.msgs, c.after, lane))
		})
	}
}

// The diagnostics section of a review's brief: errors before warnings,
// each with file:line:col, bounded in count and size; a line saying the
// changed files are clean when the servers found nothing; nothing when no
// server reported on them.
func TestWriteDiagnostics(t *testing.T) {
	var many []agent.Diagnostic
	for i := 1; i <= 25; i++ {
		many = append(many, diag(1+i%2, i, 1, fmt.Sprintf("problem %d", i)))
	}
	long := strings.Repeat("é", 300)
	cases := []struct {
		name  string
		files []fileDiagnostics
		want  string
	}{{
		name: "no report: nothing",
	}, {
		name: "errors, then warnings, by file and line",
		files: []fileDiagnostics{
			{File: "calc/add.go", Diags: []agent.Diagnostic{
				{Line: 6, Col: 2, Severity: 2, Message: "x declared and not used", Source: "go vet"},
				{Line: 4, Col: 9, Severity: 1, Message: "undefined: c", Source: "compiler"}}},
			{File: "calc/sub.go", Diags: []agent.Diagnostic{diag(1, 2, 1, "missing return\n  (after the loop)")}},
			{File: "calc/mul.go"},
		},
		want: `
## Language server diagnostics

What OpenCode's language servers reported for the files the worker changed since your last review, as of its last change to each (2 errors, 1 warning):

- calc/add.go:4:9: error: undefined: c (compiler)
- calc/sub.go:2:1: error: missing return (after the loop)
- calc/add.go:6:2: warning: x declared and not used (go vet)
`,
	}, {
		name:  "clean",
		files: []fileDiagnostics{{File: "a.go"}, {File: "b.go"}},
		want: `
## Language server diagnostics

OpenCode's language servers report no errors or warnings in the files the worker changed since your last review (a.go, b.go).
`,
	}, {
		name:  "bounded in count",
		files: []fileDiagnostics{{File: "big.go", Diags: many}},
		want: `
## Language server diagnostics

What OpenCode's language servers reported for the files the worker changed since your last review, as of its last change to each (12 errors, 13 warnings):

- big.go:2:1: error: problem 2
- big.go:4:1: error: problem 4
- big.go:6:1: error: problem 6
- big.go:8:1: error: problem 8
- big.go:10:1: error: problem 10
- big.go:12:1: error: problem 12
- big.go:14:1: error: problem 14
- big.go:16:1: error: problem 16
- big.go:18:1: error: problem 18
- big.go:20:1: error: problem 20
- big.go:22:1: error: problem 22
- big.go:24:1: error: problem 24
- big.go:1:1: warning: problem 1
- big.go:3:1: warning: problem 3
- big.go:5:1: warning: problem 5
- big.go:7:1: warning: problem 7
- big.go:9:1: warning: problem 9
- big.go:11:1: warning: problem 11
- big.go:13:1: warning: problem 13
- big.go:15:1: warning: problem 15
- (5 more not listed: 5 warnings)
`,
	}, {
		name:  "a long message cut",
		files: []fileDiagnostics{{File: "a.go", Diags: []agent.Diagnostic{diag(1, 1, 1, long)}}},
		want: `
## Language server diagnostics

What OpenCode's language servers reported for the files the worker changed since your last review, as of its last change to each (1 error):

- a.go:1:1: error: ` + strings.Repeat("é", 199) + `…
`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			writeDiagnostics(&b, c.files)
			require.Equal(t, c.want, b.String())
		})
	}
}

// However long the messages, the section stays within its bytes.
func TestWriteDiagnosticsBounded(t *testing.T) {
	var files []fileDiagnostics
	for i := range 30 {
		files = append(files, fileDiagnostics{File: strings.Repeat("d/", 60) + fmt.Sprintf("f%d.go", i),
			Diags: []agent.Diagnostic{diag(1, 1, 1, strings.Repeat("x", 500))}})
	}
	var b strings.Builder
	writeDiagnostics(&b, files)
	require.Less(t, b.Len(), maxDiagnosticsBytes+600)
	require.Contains(t, b.String(), "more not listed: ")
}

// The review's brief carries the section between the facts horizon
// measured and the delta; without a report it has none.
func TestReviewPromptDiagnostics(t *testing.T) {
	in := watchInput(t)
	files := []fileDiagnostics{{File: "calc/add.go", Diags: []agent.Diagnostic{diag(1, 4, 9, "undefined: c")}}}
	p := reviewPrompt(context.Background(), in, 1, "### assistant (tools: edit)\n\n", files, nil)
	i := strings.Index(p, "## Language server diagnostics")
	require.Positive(t, i, p)
	require.Less(t, strings.Index(p, "## Facts horizon measured"), i)
	require.Less(t, i, strings.Index(p, "## What the worker did since your last review"))
	require.Contains(t, p, "- calc/add.go:4:9: error: undefined: c\n")
	require.NotContains(t, reviewPrompt(context.Background(), in, 1, "(nothing new)", nil, nil), "diagnostics")
}
