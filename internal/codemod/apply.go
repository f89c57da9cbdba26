package codemod

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// maxPasses bounds how often Apply re-runs one rule whose matches nested.
const maxPasses = 4

// maxResultOutput bounds Result.Output.
const maxResultOutput = 256 << 10

// Change is one rewrite Apply made.
type Change struct {
	Rule string `json:"rule"` // the rule's id
	File string `json:"file"` // repo-relative, slash-separated
	Line int    `json:"line"` // 1-based line of the match, in the file as the rule saw it
}

// Result is what Apply did to a lane.
type Result struct {
	Applied []Change `json:"applied"`
	Files   []string `json:"files"`  // changed files, repo-relative, slash-separated, sorted
	Output  string   `json:"output"` // a log for humans: per-rule counts, files skipped and why, ast-grep's messages
}

// Apply runs each rule, in order, over the directory dir (a lane) and
// rewrites the matched code in place. For every rule it runs
//
//	ast-grep scan -c <empty sgconfig.yml> --color never --inline-rules <rule> --json=stream .
//
// in dir (through gate.Run: own process group, timeout, bounded output,
// scrubbed environment) and applies the reported replacements itself; a
// rule's later matches see the earlier rules' edits. Where one rule's
// matches overlap (a match inside another), the outer one is applied and
// the rule runs again, at most maxPasses times.
//
// Apply writes only regular files inside dir, reached without symlinks and
// with no other hard link; a file whose text no longer matches what
// ast-grep reported is left alone. It creates nothing inside dir: the
// ast-grep config lives in a temporary directory elsewhere and the rule is
// passed on the command line.
//
// timeout bounds the whole call (0 means DefaultTimeout). A rule that
// ast-grep rejects or that fails is skipped and the others still run; the
// returned error then joins one *RuleError per failed rule, and Result
// still describes every change made. Running out of time or a cancelled
// ctx stops Apply with an error, also after recording what was done.
func Apply(ctx context.Context, bin, dir string, rules []Rule, timeout time.Duration) (Result, error) {
	var res Result
	if bin == "" {
		return res, errors.New("codemod: no ast-grep binary given")
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return res, fmt.Errorf("codemod: lane %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return res, fmt.Errorf("codemod: lane %s: %w", dir, err)
	}
	if st, err := os.Stat(real); err != nil {
		return res, fmt.Errorf("codemod: lane %s: %w", dir, err)
	} else if !st.IsDir() {
		return res, fmt.Errorf("codemod: lane %s is not a directory", dir)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	sb, err := newSandbox(real)
	if err != nil {
		return res, err
	}
	defer sb.close()

	a := &applier{bin: bin, root: real, sb: sb, deadline: deadline, files: map[string]bool{}}
	var errs []error
	for _, r := range rules {
		if err := ctx.Err(); err != nil {
			errs = append(errs, stopped(ctx, timeout))
			break
		}
		if err := a.rule(ctx, r); err != nil {
			if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				errs = append(errs, stopped(ctx, timeout))
				break
			}
			a.logf("%s: %v", r.ID, err)
			errs = append(errs, err)
		}
	}
	a.logf("codemods: %d rule(s), %d change(s) in %d file(s)", len(rules), len(a.applied), len(a.files))
	res.Applied = a.applied
	for f := range a.files {
		res.Files = append(res.Files, f)
	}
	slices.Sort(res.Files)
	res.Output = a.log.String()
	return res, errors.Join(errs...)
}

func stopped(ctx context.Context, timeout time.Duration) error {
	err := ctx.Err()
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("codemod: stopped after the %s timeout: %w", timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("codemod: stopped: %w", err)
}

type applier struct {
	bin      string
	root     string // the lane, absolute, symlinks resolved
	sb       *sandbox
	deadline time.Time
	applied  []Change
	files    map[string]bool
	log      strings.Builder
}

func (a *applier) logf(format string, args ...any) {
	if a.log.Len() >= maxResultOutput {
		return
	}
	line := fmt.Sprintf(format, args...)
	if a.log.Len()+len(line) >= maxResultOutput {
		line = "… (log truncated)"
	}
	a.log.WriteString(line)
	a.log.WriteByte('\n')
}

// match is the part of ast-grep's JSON match object Apply uses.
type match struct {
	Text  string `json:"text"`
	Range struct {
		ByteOffset offsets `json:"byteOffset"`
		Start      struct {
			Line int `json:"line"` // 0-based
		} `json:"start"`
	} `json:"range"`
	File               string   `json:"file"`
	Replacement        *string  `json:"replacement"`
	ReplacementOffsets *offsets `json:"replacementOffsets"`
	RuleID             string   `json:"ruleId"`
}

type offsets struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// rule applies one rule until it has nothing nested left to apply.
func (a *applier) rule(ctx context.Context, r Rule) error {
	if len(r.YAML) == 0 {
		return ruleError(r, "the rule has no YAML")
	}
	total, files := 0, map[string]bool{}
	for pass := 1; pass <= maxPasses; pass++ {
		matches, err := a.scan(ctx, r)
		if err != nil {
			return err
		}
		applied, nested := a.applyMatches(r, matches, files)
		total += applied
		if nested == 0 || applied == 0 {
			break
		}
		if pass == maxPasses {
			a.logf("%s: nested matches left after %d passes", r.ID, maxPasses)
		}
	}
	if total > 0 {
		a.logf("%s: %d change(s) in %d file(s)", r.ID, total, len(files))
	}
	return nil
}

// scan runs ast-grep with one rule over the lane and returns its matches.
func (a *applier) scan(ctx context.Context, r Rule) ([]match, error) {
	left := time.Until(a.deadline)
	if left <= 0 {
		return nil, context.DeadlineExceeded
	}
	res := astGrep(ctx, a.bin, a.root, "codemod "+r.ID, left, maxScanOutput,
		"scan", "-c", a.sb.config, "--color", "never", "--inline-rules", string(r.YAML), "--json=stream", ".")
	if f := runFailure(res); f != "" {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, ruleError(r, "running ast-grep: %s", f)
	}
	if res.OutputBytes > maxScanOutput {
		return nil, ruleError(r, "ast-grep printed more than %d MiB of matches; the rule is too broad for T0", maxScanOutput>>20)
	}
	var (
		matches []match
		notes   []string
	)
	sc := bufio.NewScanner(strings.NewReader(res.Output))
	sc.Buffer(nil, maxScanOutput+1)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			if strings.TrimSpace(line) != "" {
				notes = append(notes, line)
			}
			continue
		}
		var m match
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, ruleError(r, "cannot read ast-grep's JSON output: %v", err)
		}
		matches = append(matches, m)
	}
	// scan exits 0, or 1 when the rule's severity is error and it matched;
	// anything else (8: the rule does not parse) is a failure.
	if res.ExitCode != 0 && !(res.ExitCode == 1 && len(matches) > 0) {
		return nil, ruleError(r, "ast-grep rejects the rule (exit %d):\n%s", res.ExitCode, cleanMessage(res.Output, r.Source()))
	}
	for _, n := range notes {
		if res.ExitCode == 1 && strings.Contains(n, "error(s) found in code") || strings.HasPrefix(n, "Help: Scan succeeded") {
			continue // the severity: error summary, not a problem
		}
		a.logf("%s: ast-grep: %s", r.ID, cleanMessage(n, r.Source()))
	}
	return matches, nil
}

// applyMatches rewrites each file the matches name. It returns how many
// matches it applied and how many it left because they nested in (or
// overlapped) another.
func (a *applier) applyMatches(r Rule, matches []match, files map[string]bool) (applied, nested int) {
	byFile := map[string][]match{}
	var names []string
	for _, m := range matches {
		if m.Replacement == nil {
			continue
		}
		if _, ok := byFile[m.File]; !ok {
			names = append(names, m.File)
		}
		byFile[m.File] = append(byFile[m.File], m)
	}
	slices.Sort(names)
	for _, name := range names {
		rel, changes, skipped, err := a.applyFile(name, byFile[name])
		if err != nil {
			a.logf("%s: %s left alone: %v", r.ID, name, err)
			continue
		}
		nested += skipped
		if len(changes) == 0 {
			continue
		}
		applied += len(changes)
		files[rel] = true
		a.files[rel] = true
		for _, line := range changes {
			a.applied = append(a.applied, Change{Rule: r.ID, File: rel, Line: line})
		}
	}
	return applied, nested
}

// applyFile applies one file's matches and returns the file's repo-relative
// name, the lines of the applied matches and how many nested matches it
// skipped. It touches the file only if every match still names the text
// ast-grep saw.
func (a *applier) applyFile(name string, ms []match) (rel string, lines []int, nested int, err error) {
	rel = filepath.Clean(filepath.FromSlash(name))
	if !filepath.IsLocal(rel) {
		return "", nil, 0, errors.New("path outside the lane")
	}
	full := filepath.Join(a.root, rel)
	// No directory on the way may be a symlink: the resolved parent must be
	// the parent itself.
	parent := filepath.Dir(full)
	if resolved, err := filepath.EvalSymlinks(parent); err != nil {
		return "", nil, 0, err
	} else if resolved != parent {
		return "", nil, 0, errors.New("reached through a symlinked directory")
	}
	f, err := os.OpenFile(full, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", nil, 0, err // a symlink fails here with ELOOP
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return "", nil, 0, errors.New("not a regular file")
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return "", nil, 0, fmt.Errorf("has %d hard links; writing it would change the other names too", sys.Nlink)
	}
	src, err := io.ReadAll(f)
	if err != nil {
		return "", nil, 0, err
	}

	// Outer matches first: by start, longer first. A match that begins
	// before the previous kept one ends is nested (or overlapping) and
	// waits for the next pass; an exact duplicate is dropped.
	slices.SortStableFunc(ms, func(x, y match) int {
		if c := cmp.Compare(x.repl().Start, y.repl().Start); c != 0 {
			return c
		}
		return cmp.Compare(y.repl().End, x.repl().End)
	})
	var keep []match
	end := -1
	for _, m := range ms {
		o, t := m.repl(), m.Range.ByteOffset
		if o.Start < 0 || o.End < o.Start || o.End > len(src) || t.Start < 0 || t.End < t.Start || t.End > len(src) {
			return "", nil, 0, errors.New("ast-grep reported offsets outside the file")
		}
		if string(src[t.Start:t.End]) != m.Text {
			return "", nil, 0, fmt.Errorf("the text at line %d is not what ast-grep matched (the file changed, or ast-grep read it differently)", m.Range.Start.Line+1)
		}
		if len(keep) > 0 {
			last := keep[len(keep)-1]
			if o == last.repl() && *m.Replacement == *last.Replacement {
				continue
			}
			if o.Start < end || o.Start == end && o.Start == last.repl().Start {
				nested++
				continue
			}
		}
		keep = append(keep, m)
		end = o.End
	}

	var out bytes.Buffer
	pos := 0
	for _, m := range keep {
		o := m.repl()
		if string(src[o.Start:o.End]) == *m.Replacement {
			continue // rewriting to itself changes nothing
		}
		out.Write(src[pos:o.Start])
		out.WriteString(*m.Replacement)
		pos = o.End
		lines = append(lines, m.Range.Start.Line+1)
	}
	if len(lines) == 0 {
		return filepath.ToSlash(rel), nil, nested, nil
	}
	out.Write(src[pos:])
	if err := f.Truncate(0); err != nil {
		return "", nil, 0, err
	}
	if _, err := f.WriteAt(out.Bytes(), 0); err != nil {
		return "", nil, 0, fmt.Errorf("writing: %w (the file may be partly written)", err)
	}
	if err := f.Close(); err != nil {
		return "", nil, 0, err
	}
	return filepath.ToSlash(rel), lines, nested, nil
}

// repl is where the replacement goes: replacementOffsets, or the match's
// range when ast-grep did not say.
func (m match) repl() offsets {
	if m.ReplacementOffsets != nil {
		return *m.ReplacementOffsets
	}
	return m.Range.ByteOffset
}
