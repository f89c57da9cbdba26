package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/child"
)

// gateTailBytes is how much gate output travels into history and the next
// brief; the full capped output is written under the run's directory.
const gateTailBytes = 4000

// RunGate runs the repository's gate in the lane. The gate script is the
// judge, so it is held to the base commit's version: if the worker edited
// it, the base version is restored before the run and the receipt says so.
func (a *Activities) RunGate(ctx context.Context, in GateInput) (_ horizon.GateRun, err error) {
	defer a.watchOutage(ctx, in.RunID, in.Feature)(&err)
	g, err := gate.Discover(in.Lane)
	note := ""
	if g.Path != "" || errors.Is(err, gate.ErrGateNotRunnable) {
		rel := g.Source
		if rel == "" {
			rel = scriptIn(in.Lane)
		}
		if rel != "" && !gitOK(ctx, in.Lane, "diff", "--quiet", in.BaseCommit, "--", rel) {
			if _, rerr := git(ctx, in.Lane, "checkout", in.BaseCommit, "--", rel); rerr != nil {
				return horizon.GateRun{}, fmt.Errorf("restore gate script %s: %w", rel, rerr)
			}
			note = "the worker changed " + rel + "; the base commit's version was restored and run"
			g, err = gate.Discover(in.Lane)
		}
	}
	if err != nil {
		return horizon.GateRun{}, badInput("gate in lane %s: %v", in.Lane, err)
	}

	// Snapshot what is judged before judging it: the receipt names this
	// exact lane state, and equal trees mean identical diffs.
	snap, err := snapshot(ctx, in)
	if err != nil {
		return horizon.GateRun{}, err
	}

	// Heartbeat while the gate runs so a crashed daemon's gate is retried
	// promptly; the output itself goes to the artifact, not to history.
	hb := startHeartbeat(ctx, beatOptions{Details: "gate running"})
	res := gate.Run(ctx, g, gate.Options{Dir: in.Lane, Timeout: in.Timeout, AllowEnv: a.GateAllowEnv,
		// The gate dies with the daemon and is recorded, so a retry after a
		// crash never runs beside its predecessor in the lane.
		Start: child.StartFunc})
	hb.Stop()
	if ctx.Err() != nil {
		return horizon.GateRun{}, ctx.Err()
	}
	name := fmt.Sprintf("attempt-%d.log", in.Attempt)
	if in.Attempt == 0 {
		name = "baseline.log"
	}
	out := fmt.Sprintf("$ %s\n%s\n[verdict %s, exit %d, %s]\n", g.String(), res.Output, res.Verdict, res.ExitCode, res.Duration.Round(time.Millisecond))
	if err := writeArtifact(filepath.Join(a.runDir(in.RunID), "gate", in.Feature+"-"+name), []byte(out)); err != nil {
		return horizon.GateRun{}, err
	}
	rec := gate.NewReceipt(in.RunID, in.Feature, in.Attempt, snap.commit, g, res)
	// A retried activity re-runs the gate; the stable ID keeps one receipt
	// per attempt in the ledger.
	rec.ID = gate.StableReceiptID(in.RunID, in.Feature, strconv.Itoa(in.Attempt))
	if err := gate.AppendReceipt(filepath.Join(a.runDir(in.RunID), "receipts.jsonl"), rec); err != nil {
		return horizon.GateRun{}, fmt.Errorf("record gate receipt: %w", err)
	}
	tail := res.Output
	if res.Err != "" {
		tail += "\n" + res.Err
	}
	return horizon.GateRun{
		ReceiptID:    rec.ID,
		Verdict:      string(res.Verdict),
		ExitCode:     res.ExitCode,
		DurationMS:   res.Duration.Milliseconds(),
		Command:      g.Source,
		Tail:         lastBytes(tail, gateTailBytes),
		Failing:      rec.Failing,
		FailingKnown: rec.FailingKnown,
		Snapshot:     snap.commit,
		Tree:         snap.tree,
		ChangedFiles: snap.files,
		ChangedLines: snap.lines,
		Note:         note,
	}, nil
}

type laneSnapshot struct {
	commit, tree string
	files        []string
	lines        int
}

// snapshot records the lane's work tree as a commit object (not on any
// branch) and measures its diff against the base commit.
func snapshot(ctx context.Context, in GateInput) (laneSnapshot, error) {
	var s laneSnapshot
	args := append([]string{"add", "-A", "--", "."}, excluded...)
	if _, err := git(ctx, in.Lane, args...); err != nil {
		return s, fmt.Errorf("snapshot lane: %w", err)
	}
	tree, err := git(ctx, in.Lane, "write-tree")
	if err != nil {
		return s, fmt.Errorf("snapshot lane: %w", err)
	}
	s.tree = tree
	s.commit, err = git(ctx, in.Lane, "commit-tree", tree, "-p", "HEAD", "-m", fmt.Sprintf("horizon gate snapshot %s %s attempt %d", in.RunID, in.Feature, in.Attempt))
	if err != nil {
		return s, fmt.Errorf("snapshot lane: %w", err)
	}
	num, err := git(ctx, in.Lane, "diff", "--numstat", in.BaseCommit, tree)
	if err != nil {
		return s, fmt.Errorf("snapshot lane: %w", err)
	}
	for _, line := range strings.Split(num, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		s.files = append(s.files, f[2])
		added, _ := strconv.Atoi(f[0]) // "-" for binary files counts 0
		deleted, _ := strconv.Atoi(f[1])
		s.lines += added + deleted
	}
	return s, nil
}

func scriptIn(dir string) string {
	for _, p := range gate.ScriptPaths {
		if gitOK(context.Background(), dir, "ls-files", "--error-unmatch", p) {
			return p
		}
	}
	return ""
}

func lastBytes(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut++
	}
	return s[cut:]
}
