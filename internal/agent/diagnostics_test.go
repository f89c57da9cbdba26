package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file tool's part gives the files it changed and the language servers'
// diagnostics it reported (errors and warnings, 1-based), from its
// metadata, else from the errors its output repeats; any other part gives
// nothing.
func TestToolDiagnostics(t *testing.T) {
	cases := []struct {
		name   string
		part   string
		edited []string
		diags  map[string][]Diagnostic
	}{{
		name: "edit: every file the servers hold, errors first, information and hints left out",
		part: `{"type": "tool", "tool": "edit", "state": {"status": "completed",
		  "input": {"filePath": "/lane/calc/add.go", "oldString": "a", "newString": "c"},
		  "output": "Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n<diagnostics file=\"/lane/calc/add.go\">\nERROR [4:9] undefined: c\n</diagnostics>",
		  "metadata": {"diff": "…", "diagnostics": {
		    "/lane/calc/add.go": [
		      {"range": {"start": {"line": 3, "character": 8}, "end": {"line": 3, "character": 9}}, "severity": 1, "message": "undefined: c", "source": "compiler"},
		      {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 3, "message": "an information"},
		      {"range": {"start": {"line": 5, "character": 1}, "end": {"line": 5, "character": 2}}, "severity": 2, "message": "x declared and not used", "source": "go vet"},
		      {"range": {"start": {"line": 6, "character": 0}, "end": {"line": 6, "character": 1}}, "message": "no severity is an error"}],
		    "/lane/calc/sub.go": []}}}}`,
		edited: []string{"/lane/calc/add.go"},
		diags: map[string][]Diagnostic{
			"/lane/calc/add.go": {
				{Line: 4, Col: 9, Severity: SeverityError, Message: "undefined: c", Source: "compiler"},
				{Line: 7, Col: 1, Severity: SeverityError, Message: "no severity is an error"},
				{Line: 6, Col: 2, Severity: SeverityWarning, Message: "x declared and not used", Source: "go vet"},
			},
			"/lane/calc/sub.go": nil,
		},
	}, {
		name: "write with no server for the file: an empty map",
		part: `{"type": "tool", "tool": "write", "state": {"status": "completed",
		  "input": {"filePath": "notes.txt", "content": "x"}, "output": "Wrote file successfully.",
		  "metadata": {"diagnostics": {}, "filepath": "/lane/notes.txt", "exists": false}}}`,
		edited: []string{"notes.txt"},
		diags:  map[string][]Diagnostic{},
	}, {
		name: "apply_patch: the files it wrote, a move under its new name, a deletion not",
		part: `{"type": "tool", "tool": "apply_patch", "state": {"status": "completed",
		  "input": {"patchText": "*** Begin Patch…"}, "output": "Success.",
		  "metadata": {"files": [
		    {"filePath": "/lane/a.go", "relativePath": "a.go", "type": "update"},
		    {"filePath": "/lane/old.go", "movePath": "/lane/new.go", "relativePath": "new.go", "type": "move"},
		    {"filePath": "/lane/gone.go", "relativePath": "gone.go", "type": "delete"}],
		    "diagnostics": {"/lane/a.go": [{"range": {"start": {"line": 0, "character": 0}}, "severity": 1, "message": "expected 'package', found 'EOF'"}]}}}}`,
		edited: []string{"/lane/a.go", "/lane/new.go"},
		diags:  map[string][]Diagnostic{"/lane/a.go": {{Line: 1, Col: 1, Severity: SeverityError, Message: "expected 'package', found 'EOF'"}}},
	}, {
		name: "no metadata: the errors the output repeats",
		part: `{"type": "tool", "tool": "edit", "state": {"status": "completed",
		  "input": {"filePath": "/lane/calc/add.go"},
		  "output": "Edit applied successfully.\n\nLSP errors detected in this file, please fix:\n<diagnostics file=\"/lane/calc/add.go\">\nERROR [4:9] undefined: c\nERROR [5:1] missing return\n... and 3 more\n</diagnostics>"}}`,
		edited: []string{"/lane/calc/add.go"},
		diags: map[string][]Diagnostic{"/lane/calc/add.go": {
			{Line: 4, Col: 9, Severity: SeverityError, Message: "undefined: c"},
			{Line: 5, Col: 1, Severity: SeverityError, Message: "missing return"},
		}},
	}, {
		name:   "no metadata, no errors: nothing reported",
		part:   `{"type": "tool", "tool": "edit", "state": {"status": "completed", "input": {"filePath": "/lane/a.go"}, "output": "Edit applied successfully."}}`,
		edited: []string{"/lane/a.go"},
	}, {
		name: "an edit that failed changed nothing",
		part: `{"type": "tool", "tool": "edit", "state": {"status": "error", "input": {"filePath": "/lane/a.go"}, "error": "oldString not found"}}`,
	}, {
		name: "a read is no file tool",
		part: `{"type": "tool", "tool": "read", "state": {"status": "completed", "input": {"filePath": "/lane/a.go"}, "output": "<diagnostics file=\"/lane/a.go\">\nERROR [1:1] quoted\n</diagnostics>"}}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p ocPart
			require.NoError(t, json.Unmarshal([]byte(c.part), &p))
			edited, diags := toolDiagnostics(p)
			require.Equal(t, c.edited, edited)
			require.Equal(t, c.diags, diags)
		})
	}
}

// A step's message holds every file its tools changed and, for each
// file, the newest report: a later tool's replaces an earlier one's.
func TestMessageDiagnostics(t *testing.T) {
	const msg = `{"info": {"id": "m2", "role": "assistant", "time": {"created": 1, "completed": 2}, "finish": "tool-calls"}, "parts": [
	  {"type": "tool", "tool": "write", "state": {"status": "completed", "input": {"filePath": "/lane/a.go"},
	    "metadata": {"diagnostics": {"/lane/a.go": [{"range": {"start": {"line": 2, "character": 4}}, "severity": 1, "message": "undefined: Sub"}]}}}},
	  {"type": "tool", "tool": "write", "state": {"status": "completed", "input": {"filePath": "/lane/b.go"},
	    "metadata": {"diagnostics": {"/lane/a.go": [], "/lane/b.go": [{"range": {"start": {"line": 0, "character": 0}}, "severity": 2, "message": "unused"}]}}}},
	  {"type": "tool", "tool": "read", "state": {"status": "completed", "input": {"filePath": "/lane/c.go"}}}]}`
	var m ocMessage
	require.NoError(t, json.Unmarshal([]byte(msg), &m))
	got := readMessage(m)
	require.Equal(t, []string{"write", "write", "read"}, got.Tools)
	require.Equal(t, []string{"/lane/a.go", "/lane/b.go"}, got.Edited)
	require.Equal(t, map[string][]Diagnostic{
		"/lane/a.go": nil, // fixed by the second write
		"/lane/b.go": {{Line: 1, Col: 1, Severity: SeverityWarning, Message: "unused"}},
	}, got.Diagnostics)
}

// A file's report keeps at most maxFileDiagnostics, its errors first
// however many warnings come before them.
func TestToolDiagnosticsBounded(t *testing.T) {
	var list []string
	for i := range maxFileDiagnostics + 5 {
		list = append(list, fmt.Sprintf(`{"range": {"start": {"line": %d, "character": 0}}, "severity": 2, "message": "w"}`, i))
	}
	list = append(list, `{"range": {"start": {"line": 99, "character": 0}}, "severity": 1, "message": "the error"}`)
	part := `{"type": "tool", "tool": "write", "state": {"status": "completed", "input": {"filePath": "/lane/a.go"},
	  "metadata": {"diagnostics": {"/lane/a.go": [` + strings.Join(list, ",") + `]}}}}`
	var p ocPart
	require.NoError(t, json.Unmarshal([]byte(part), &p))
	_, diags := toolDiagnostics(p)
	require.Len(t, diags["/lane/a.go"], maxFileDiagnostics)
	require.Equal(t, Diagnostic{Line: 100, Col: 1, Severity: SeverityError, Message: "the error"}, diags["/lane/a.go"][0])
}
