package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// restoreGate holds a lane to its run's gate before the gate runs. Every
// change of the lane against base under a protected path (the globs, the
// gate script paths, the recorded script) is undone: edits and deletions
// are checked out from base, additions removed, mode changes and links
// replaced. Then the recorded script is checked byte for byte and mode for
// mode against the record, and checked out from the record's commit when
// it differs, whatever the diff said. It returns the protected paths the
// worker had changed. An error means the recorded gate is not what the
// lane holds: the gate must not run.
func restoreGate(ctx context.Context, lane, base string, rec horizon.GateRecord, protected []string) ([]string, error) {
	globs := slices.Concat(protected, gate.ScriptPaths)
	if rec.Script != "" {
		globs = append(globs, rec.Script)
	}
	// Staging shows additions, deletions, type and mode changes alike.
	if _, err := git(ctx, lane, append([]string{"add", "-A", "--", "."}, excluded...)...); err != nil {
		return nil, fmt.Errorf("restore gate: stage the lane: %w", err)
	}
	out, err := git(ctx, lane, "diff", "--cached", "--no-renames", "--name-only", "-z", base)
	if err != nil {
		return nil, fmt.Errorf("restore gate: diff the lane against %s: %w", short(base), err)
	}
	var changed []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" && slices.ContainsFunc(globs, func(g string) bool { return ladder.MatchPath(g, p) }) {
			changed = append(changed, p)
		}
	}
	// Additions first (a link or a file standing where base has a
	// directory must go before what base has under it comes back).
	var added, kept []string
	for _, p := range changed {
		if gitOK(ctx, lane, "cat-file", "-e", base+":"+p) {
			kept = append(kept, p)
		} else {
			added = append(added, p)
		}
	}
	for _, p := range added {
		if err := removeInLane(lane, p); err != nil {
			return changed, fmt.Errorf("restore gate: remove %s: %w", p, err)
		}
		if _, err := git(ctx, lane, "rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", literal(p)); err != nil {
			return changed, fmt.Errorf("restore gate: unstage %s: %w", p, err)
		}
	}
	for _, p := range kept {
		if err := removeInLane(lane, p); err != nil {
			return changed, fmt.Errorf("restore gate: replace %s: %w", p, err)
		}
		if _, err := git(ctx, lane, "checkout", base, "--", literal(p)); err != nil {
			return changed, fmt.Errorf("restore gate: check out %s from %s: %w", p, short(base), err)
		}
	}
	if rec.Script == "" {
		return changed, nil
	}
	if why := scriptDiffers(ctx, lane, rec); why != "" {
		from := rec.Commit
		if from == "" {
			from = base
		}
		if err := removeInLane(lane, rec.Script); err != nil {
			return changed, fmt.Errorf("restore gate %s: %w", rec.Script, err)
		}
		if _, err := git(ctx, lane, "checkout", from, "--", literal(rec.Script)); err != nil {
			return changed, fmt.Errorf("the recorded gate %s (mode %s, blob %s) could not be restored in the lane (%s): %w", rec.Script, rec.Mode, short(rec.Hash), why, err)
		}
		if why := scriptDiffers(ctx, lane, rec); why != "" {
			return changed, fmt.Errorf("the recorded gate %s (mode %s, blob %s) could not be restored in the lane: %s", rec.Script, rec.Mode, short(rec.Hash), why)
		}
		if !slices.Contains(changed, rec.Script) {
			changed = append(changed, rec.Script)
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// literal makes a path a pathspec that matches only itself: a worker's
// file may well be named "*".
func literal(p string) string { return ":(literal)" + p }

// scriptDiffers says how the lane's copy of the recorded script differs
// from the record ("" when it is the same: same kind, mode and content).
func scriptDiffers(ctx context.Context, lane string, rec horizon.GateRecord) string {
	p := filepath.Join(lane, filepath.FromSlash(rec.Script))
	if err := parentsInLane(lane, rec.Script); err != nil {
		return err.Error()
	}
	st, err := os.Lstat(p)
	if err != nil {
		return "it is missing"
	}
	if rec.Mode == gate.ModeSymlink {
		if st.Mode()&fs.ModeSymlink == 0 {
			return "it is not the recorded symbolic link"
		}
		target, err := os.Readlink(p)
		want, gerr := git(ctx, lane, "cat-file", "blob", rec.Hash)
		if err != nil || gerr != nil || target != want {
			return "the link points elsewhere"
		}
		return ""
	}
	switch {
	case !st.Mode().IsRegular():
		return "it is not a regular file (" + st.Mode().Type().String() + ")"
	case rec.Mode == gate.ModeExecutable && st.Mode().Perm()&0o100 == 0:
		return "it lost its execute bit"
	}
	h, err := git(ctx, lane, "hash-object", "--", rec.Script)
	if err != nil || h != rec.Hash {
		return "its content differs"
	}
	return ""
}

// parentsInLane refuses a path whose parents are not plain directories of
// the lane (a link could lead a removal or a check-out outside it).
func parentsInLane(lane, rel string) error {
	dir := path.Dir(rel)
	for dir != "." && dir != "/" {
		st, err := os.Lstat(filepath.Join(lane, filepath.FromSlash(dir)))
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		dir = path.Dir(dir)
	}
	return nil
}

// removeInLane removes rel from the lane, and first any parent that is a
// link or a file where a directory belongs (never following a link).
func removeInLane(lane, rel string) error {
	if strings.HasPrefix(rel, "/") || slices.Contains(strings.Split(rel, "/"), "..") {
		return fmt.Errorf("%s is not a path inside the lane", rel)
	}
	segs := strings.Split(rel, "/")
	for i := 1; i < len(segs); i++ {
		p := filepath.Join(lane, filepath.FromSlash(strings.Join(segs[:i], "/")))
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing below it either
		}
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return os.Remove(p)
		}
	}
	err := os.RemoveAll(filepath.Join(lane, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// vanishedListMax bounds the names a gate run carries into history.
const vanishedListMax = 50

// vanishedTests compares the receipt of this gate run with the baseline's
// (both in receipts.jsonl): the tests that failed at baseline and appear
// in neither this run's failing nor its passing set (vanished), and those
// that passed at baseline and appear in neither (green). When this run's
// output names no passing tests (plain `go test` prints only "ok pkg"),
// absence cannot be read from it; then a baseline-failing test not failing
// now counts as vanished when its name, present in the base commit's
// sources, is gone from the lane's (unknown is true either way).
func (a *Activities) vanishedTests(ctx context.Context, in GateInput, cur gate.Receipt, tree string) (vanished, green []string, unknown bool) {
	if in.BaselineReceipt == "" || in.Attempt == 0 {
		return nil, nil, false
	}
	all, err := gate.ReadReceipts(filepath.Join(a.runDir(in.RunID), "receipts.jsonl"))
	if err != nil {
		return nil, nil, false
	}
	i := slices.IndexFunc(all, func(r gate.Receipt) bool { return r.ID == in.BaselineReceipt })
	if i < 0 {
		return nil, nil, false
	}
	base := all[i]
	if base.FailingKnown && len(base.Failing) > 0 {
		if cur.PassingKnown {
			vanished = gate.Vanished(base.Failing, cur.Failing, cur.Passing)
		} else {
			for _, t := range gate.Vanished(base.Failing, cur.Failing, nil) {
				leaf := gate.TestLeaf(t)
				if leaf != "" && sourceHas(ctx, in.Lane, in.BaseCommit, leaf) && !sourceHas(ctx, in.Lane, tree, leaf) {
					vanished = append(vanished, t)
				}
			}
		}
	}
	if base.PassingKnown && cur.PassingKnown {
		green = gate.Vanished(base.Passing, cur.Failing, cur.Passing)
	}
	return capList(vanished), capList(green), !cur.PassingKnown
}

// sourceHas reports whether the tree names word in any file.
func sourceHas(ctx context.Context, dir, tree, word string) bool {
	return gitOK(ctx, dir, "grep", "-q", "-F", "-w", "-e", word, tree, "--")
}

func capList(s []string) []string {
	if len(s) <= vanishedListMax {
		return s
	}
	return append(slices.Clone(s[:vanishedListMax]), fmt.Sprintf("… (+%d more)", len(s)-vanishedListMax))
}
