package activities

import (
	"context"
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

// RunGate runs the run's gate in the lane. The gate is the one decided
// on the base commit (in.Record, or discovered there for a history from
// before the record; never in the lane), and before it runs the lane is
// held to it: the worker's changes to protected paths are reverted
// (restoreGate) and the recorded script is put back exactly, whatever the
// worker did to it. A gate that cannot be restored is an error verdict
// naming it, never a pass. A test that failed at baseline and no longer
// appears is named in Vanished (vanishedTests).
func (a *Activities) RunGate(ctx context.Context, in GateInput) (_ horizon.GateRun, err error) {
	defer a.watchOutage(ctx, in.RunID, in.Feature)(&err)
	judge := in.Record
	if !judge.Valid() {
		found, err := DiscoverGate(ctx, in.Repo, in.BaseCommit)
		if err != nil {
			return horizon.GateRun{}, badInput("gate of %s at %s: %v", in.Repo, short(in.BaseCommit), err)
		}
		judge = &found
	}
	protected := in.Protected
	if protected == nil {
		protected = horizon.DefaultGateProtected
	}
	g := gate.Gate{Command: judge.Command, Source: judge.Source}
	if judge.Script != "" {
		p := filepath.Join(in.Lane, filepath.FromSlash(judge.Script))
		g = gate.Gate{Path: p, Command: []string{p}, Source: judge.Script}
	}
	reverted, restoreErr := restoreGate(ctx, in.Lane, in.BaseCommit, *judge, protected)
	note := ""
	if len(reverted) > 0 {
		note = fmt.Sprintf("the worker changed protected paths (%s); they were reverted to the base commit before the gate ran", strings.Join(reverted, ", "))
	}

	// Snapshot what is judged before judging it: the receipt names this
	// exact lane state, and equal trees mean identical diffs.
	snap, err := snapshot(ctx, in)
	if err != nil {
		return horizon.GateRun{}, err
	}

	// Heartbeat while the gate runs so a crashed daemon's gate is retried
	// promptly; the output itself goes to the artifact, not to history.
	var res gate.Result
	if restoreErr != nil {
		// Whatever is in the lane now is not the recorded gate: nothing
		// runs, and the verdict says why.
		res = gate.Result{Verdict: gate.Error, ExitCode: -1, Err: restoreErr.Error()}
	} else {
		hb := startHeartbeat(ctx, beatOptions{Details: "gate running"})
		res = gate.Run(ctx, g, gate.Options{Dir: in.Lane, Timeout: in.Timeout, AllowEnv: a.GateAllowEnv,
			// The gate dies with the daemon and is recorded, so a retry after a
			// crash never runs beside its predecessor in the lane.
			Start: child.StartFunc})
		hb.Stop()
	}
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
	vanished, green, unknown := a.vanishedTests(ctx, in, rec, snap.tree)
	return horizon.GateRun{
		Reverted:       reverted,
		Vanished:       vanished,
		VanishedGreen:  green,
		PassingUnknown: unknown,
		ReceiptID:      rec.ID,
		Verdict:        string(res.Verdict),
		ExitCode:       res.ExitCode,
		DurationMS:     res.Duration.Milliseconds(),
		Command:        g.Source,
		Tail:           lastBytes(tail, gateTailBytes),
		Failing:        rec.Failing,
		FailingKnown:   rec.FailingKnown,
		Snapshot:       snap.commit,
		Tree:           snap.tree,
		ChangedFiles:   snap.files,
		ChangedLines:   snap.lines,
		Note:           note,
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
