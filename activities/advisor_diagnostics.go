package activities

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
)

// A review's diagnostics: what OpenCode's language servers reported for
// the files the worker changed since the last review. A fact measured
// without the model, like the diff stat, so the reviewer need not guess
// whether the code compiles. Bounded like the rest of the brief.
const (
	maxReviewDiagnostics = 20   // listed, errors before warnings
	maxDiagnosticMessage = 200  // runes of one message
	maxDiagnosticsBytes  = 4000 // the whole list
	maxCleanFiles        = 10   // files named as clean
)

// fileDiagnostics is the newest report of one changed file.
type fileDiagnostics struct {
	File  string // relative to the lane, slash-separated, when inside it
	Diags []agent.Diagnostic
}

// changedDiagnostics is, for each file the worker's file tools changed
// in the messages after the message after (the advisor's own aside), the
// newest report of it among those messages, by file name. A changed file
// no server reported on is not there; none is when no server is
// configured.
func changedDiagnostics(msgs []agent.Message, after, lane string) []fileDiagnostics {
	rel := laneRel(lane)
	changed := map[string]bool{}
	newest := map[string][]agent.Diagnostic{}
	for _, m := range msgs {
		if (after != "" && m.ID <= after) || m.Advice != "" {
			continue
		}
		for _, f := range m.Edited {
			changed[rel(f)] = true
		}
		for f, list := range m.Diagnostics {
			newest[rel(f)] = list // messages are in order: a later report is newer
		}
	}
	var out []fileDiagnostics
	for f := range changed {
		if list, ok := newest[f]; ok {
			out = append(out, fileDiagnostics{File: f, Diags: list})
		}
	}
	slices.SortFunc(out, func(a, b fileDiagnostics) int { return strings.Compare(a.File, b.File) })
	return out
}

// laneRel names a file as the review does: relative to the lane when
// inside it (through the lane's real path too, as OpenCode may resolve
// symlinks in it), else as given. A relative name is the lane's.
func laneRel(lane string) func(string) string {
	roots := []string{filepath.Clean(lane)}
	if real, err := filepath.EvalSymlinks(lane); err == nil && real != roots[0] {
		roots = append(roots, real)
	}
	return func(p string) string {
		if !filepath.IsAbs(p) {
			return filepath.ToSlash(filepath.Clean(p))
		}
		p = filepath.Clean(p)
		for _, root := range roots {
			if r, err := filepath.Rel(root, p); err == nil && r != "." && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
		}
		return filepath.ToSlash(p)
	}
}

// writeDiagnostics adds the review's diagnostics section to b: the errors,
// then the warnings, each with file:line:col, at most
// maxReviewDiagnostics of them and maxDiagnosticsBytes in all; or, when
// the servers reported on the changed files and found nothing, that they
// did. Nothing when no server reported on them.
func writeDiagnostics(b *strings.Builder, files []fileDiagnostics) {
	if len(files) == 0 {
		return
	}
	type entry struct {
		file string
		d    agent.Diagnostic
	}
	var all []entry
	for _, f := range files {
		for _, d := range f.Diags {
			all = append(all, entry{f.File, d})
		}
	}
	b.WriteString("\n## Language server diagnostics\n\n")
	if len(all) == 0 {
		names := make([]string, 0, len(files))
		for _, f := range files {
			names = append(names, f.File)
		}
		if len(names) > maxCleanFiles {
			names = append(names[:maxCleanFiles], fmt.Sprintf("%d more", len(files)-maxCleanFiles))
		}
		fmt.Fprintf(b, "OpenCode's language servers report no errors or warnings in the files the worker changed since your last review (%s).\n", strings.Join(names, ", "))
		return
	}
	slices.SortStableFunc(all, func(x, y entry) int {
		return cmp.Or(cmp.Compare(x.d.Severity, y.d.Severity), strings.Compare(x.file, y.file),
			cmp.Compare(x.d.Line, y.d.Line), cmp.Compare(x.d.Col, y.d.Col))
	})
	errs := 0
	for _, e := range all {
		if e.d.Severity == agent.SeverityError {
			errs++
		}
	}
	fmt.Fprintf(b, "What OpenCode's language servers reported for the files the worker changed since your last review, as of its last change to each (%s):\n\n",
		countsText(errs, len(all)-errs))
	size, listed := 0, 0
	for _, e := range all {
		sev := "error"
		if e.d.Severity != agent.SeverityError {
			sev = "warning"
		}
		line := fmt.Sprintf("- %s:%d:%d: %s: %s", e.file, e.d.Line, e.d.Col, sev, textio.Runes(oneLine(e.d.Message, 4*maxDiagnosticMessage), maxDiagnosticMessage))
		if e.d.Source != "" {
			line += " (" + textio.Runes(oneLine(e.d.Source, 40), 40) + ")"
		}
		if listed == maxReviewDiagnostics || size+len(line) > maxDiagnosticsBytes {
			break
		}
		b.WriteString(line + "\n")
		size += len(line) + 1
		listed++
	}
	if rest := all[listed:]; len(rest) > 0 {
		restErrs := 0
		for _, e := range rest {
			if e.d.Severity == agent.SeverityError {
				restErrs++
			}
		}
		fmt.Fprintf(b, "- (%d more not listed: %s)\n", len(rest), countsText(restErrs, len(rest)-restErrs))
	}
}

// countsText is "2 errors, 1 warning", leaving out a count of none.
func countsText(errs, warns int) string {
	var parts []string
	if errs > 0 {
		parts = append(parts, horizon.Plural(errs, "error"))
	}
	if warns > 0 {
		parts = append(parts, horizon.Plural(warns, "warning"))
	}
	return strings.Join(parts, ", ")
}
