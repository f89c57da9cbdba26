package agent

// Diagnostics: what OpenCode's language servers said about the files a
// step changed, read off the step's file tools for the advisor's review.
// Relies on (opencode 1.18.33), with a server configured for the file
// (the config's `lsp` key; without it OpenCode runs none):
//
//   - edit and write touch the file, wait for the server's diagnostics of
//     it and return, in the tool part's state.metadata.diagnostics, every
//     diagnostic the servers hold: a map from the normalized absolute path
//     to a list of LSP Diagnostics ({range: {start: {line, character}},
//     severity, message, source}, 0-based, severity 1 error … 4 hint,
//     missing meaning error). apply_patch does the same for the files in
//     its metadata.files ({filePath, movePath?, type}).
//   - Their output text repeats a file's errors (not its warnings), at most
//     20 of them: `<diagnostics file="PATH">` then `ERROR [line:col] msg`
//     lines (1-based), then `</diagnostics>`. It is read only when the
//     metadata carries no map.

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Diagnostic is one problem a language server reported in a file.
type Diagnostic struct {
	Line, Col int // 1-based, where it starts
	// Severity is LSP's: 1 error, 2 warning, 3 information, 4 hint.
	Severity int
	Message  string
	Source   string // the server's name for the check (compiler, go vet…)
}

// LSP severities the advisor reads; information and hints are left out
// when a step's report is read, as too many to be worth a review's room.
const (
	SeverityError   = 1
	SeverityWarning = 2
)

// maxFileDiagnostics bounds what a step keeps of one file's report: a
// review shows far fewer, and a file broken everywhere says so in 50.
const maxFileDiagnostics = 50

// diagnosingTools are the tools that change files and report the
// language servers' diagnostics after they ran.
var diagnosingTools = map[string]bool{"edit": true, "write": true, "patch": true, "apply_patch": true, "multiedit": true}

// toolDiagnostics reads a finished file tool's part: the files it
// changed, as the tool named them, and the diagnostics it reported, by
// file (nil when it reported none: no server for those files). A part of
// another tool, or one that did not complete, gives nothing.
func toolDiagnostics(p ocPart) (edited []string, diags map[string][]Diagnostic) {
	if p.Type != "tool" || !diagnosingTools[p.Tool] || p.State == nil || p.State.Status != "completed" {
		return nil, nil
	}
	var meta struct {
		Diagnostics map[string][]lspDiagnostic `json:"diagnostics"`
		Files       []struct {
			FilePath string `json:"filePath"`
			MovePath string `json:"movePath"`
			Type     string `json:"type"`
		} `json:"files"`
	}
	_ = json.Unmarshal(p.State.Metadata, &meta) // a part without metadata still names its file
	if f, ok := p.State.Input["filePath"].(string); ok && f != "" {
		edited = append(edited, f)
	}
	for _, f := range meta.Files {
		switch {
		case f.Type == "delete":
		case f.MovePath != "":
			edited = append(edited, f.MovePath)
		case f.FilePath != "":
			edited = append(edited, f.FilePath)
		}
	}
	if meta.Diagnostics != nil {
		diags = make(map[string][]Diagnostic, len(meta.Diagnostics))
		for file, list := range meta.Diagnostics {
			var out []Diagnostic
			for _, d := range list {
				if d.Severity == 0 {
					d.Severity = SeverityError // as OpenCode reads it
				}
				if d.Severity <= SeverityWarning {
					out = append(out, Diagnostic{Line: d.Range.Start.Line + 1, Col: d.Range.Start.Character + 1,
						Severity: d.Severity, Message: d.Message, Source: d.Source})
				}
			}
			// Errors first, so a file full of warnings keeps its errors.
			slices.SortStableFunc(out, func(a, b Diagnostic) int { return a.Severity - b.Severity })
			diags[file] = out[:min(len(out), maxFileDiagnostics)]
		}
		return edited, diags
	}
	return edited, outputDiagnostics(p.State.Output)
}

type lspDiagnostic struct {
	Range struct {
		Start struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"start"`
	} `json:"range"`
	Severity int    `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source"`
}

var (
	diagBlock = regexp.MustCompile(`(?s)<diagnostics file="([^"]+)">\n(.*?)\n</diagnostics>`)
	diagLine  = regexp.MustCompile(`^(ERROR|WARN|INFO|HINT) \[(\d+):(\d+)\] (.*)$`)
)

// outputDiagnostics reads the errors a file tool's output text repeats,
// for a part whose metadata carries no map; nil when it names none.
func outputDiagnostics(out string) map[string][]Diagnostic {
	var diags map[string][]Diagnostic
	for _, blk := range diagBlock.FindAllStringSubmatch(out, -1) {
		for _, l := range strings.Split(blk[2], "\n") {
			m := diagLine.FindStringSubmatch(l)
			if m == nil {
				continue // "... and N more"
			}
			line, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			sev := map[string]int{"ERROR": 1, "WARN": 2, "INFO": 3, "HINT": 4}[m[1]]
			if diags == nil {
				diags = map[string][]Diagnostic{}
			}
			if len(diags[blk[1]]) < maxFileDiagnostics {
				diags[blk[1]] = append(diags[blk[1]], Diagnostic{Line: line, Col: col, Severity: sev, Message: m[4]})
			}
		}
	}
	return diags
}
