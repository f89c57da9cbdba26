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

// gatePartTailBytes is how much of a failed part's output travels with
// it (GatePart.Tail), beside the test parts' tail.
const gatePartTailBytes = 2000

// RunGate runs the run's gate in the lane. The gate is the one decided
// on the base commit (in.Record, or discovered there for a history from
// before the record; never in the lane), and before it runs the lane is
// held to it: the worker's changes to protected paths are reverted
// (restoreGate) and the recorded script is put back exactly, whatever the
// worker did to it. A gate that cannot be restored is an error verdict
// naming it, never a pass. A test that failed at baseline and no longer
// appears is named in Vanished (vanishedTests).
//
// With gate.test_command or gate.lint_command the gate runs in parts
// (gate.RunParts): the script, then the test command, then the lint
// command, each capped and judged on its own, each with its own section
// of the receipt and of the result (GateRun.Parts); the failing set and
// the tail are the test parts' (runParts).
func (a *Activities) RunGate(ctx context.Context, in GateInput) (_ horizon.GateRun, err error) {
	defer a.watchOutage(ctx, in.RunID, in.Feature)(&err)
	judge := in.Record
	if !judge.Valid() {
		found, err := DecideGate(ctx, in.Repo, in.BaseCommit, in.Commands)
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

	opts := gate.Options{Dir: in.Lane, Timeout: in.Timeout, AllowEnv: a.GateAllowEnv,
		// The gate dies with the daemon and is recorded, so a retry after a
		// crash never runs beside its predecessor in the lane.
		Start: child.StartFunc}
	if judge.TestCommand != "" || judge.LintCommand != "" {
		return a.runParts(ctx, in, g, *judge, opts, restoreErr, snap, reverted, note)
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
		res = gate.Run(ctx, g, opts)
		hb.Stop()
	}
	if ctx.Err() != nil {
		return horizon.GateRun{}, ctx.Err()
	}
	out := fmt.Sprintf("$ %s\n%s\n[verdict %s, exit %d, %s]\n", g.String(), res.Output, res.Verdict, res.ExitCode, res.Duration.Round(time.Millisecond))
	if err := writeArtifact(a.gateLog(in), []byte(out)); err != nil {
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

// runParts is RunGate for a gate in parts: the recorded gate (the script
// or the detected command, none when gate.test_command stands in for
// it), the test command and the lint command, each run capped on its own
// (gate.RunParts). The verdict passes only when every part passed; the
// failing set, the tail and the vanished tests are the test parts' only,
// and each part carries its own verdict, exit code, failing set and
// (when it did not pass) tail.
func (a *Activities) runParts(ctx context.Context, in GateInput, g gate.Gate, judge horizon.GateRecord, opts gate.Options,
	restoreErr error, snap laneSnapshot, reverted []string, note string) (horizon.GateRun, error) {
	parts, err := gate.Parts(g, judge.TestCommand, judge.LintCommand)
	if err != nil {
		return horizon.GateRun{}, badInput("gate of %s at %s: %v", in.Repo, short(in.BaseCommit), err)
	}
	var results []gate.PartResult
	if restoreErr != nil {
		// Whatever is in the lane now is not the recorded gate: no part
		// runs, and each verdict says why.
		for _, p := range parts {
			results = append(results, gate.PartResult{Name: p.Name, Gate: p.Gate,
				Result: gate.Result{Verdict: gate.Error, ExitCode: -1, Err: restoreErr.Error()}})
		}
	} else {
		hb := startHeartbeat(ctx, beatOptions{Details: "gate running"})
		results = gate.RunParts(ctx, parts, opts)
		hb.Stop()
	}
	if ctx.Err() != nil {
		return horizon.GateRun{}, ctx.Err()
	}
	var log strings.Builder
	for _, r := range results {
		fmt.Fprintf(&log, "$ %s  # %s\n%s\n[%s: verdict %s, exit %d, %s]\n", r.Gate.String(), r.Name, r.Output, r.Name, r.Verdict, r.ExitCode, r.Duration.Round(time.Millisecond))
	}
	all := gate.Overall(results)
	fmt.Fprintf(&log, "[verdict %s, exit %d, %s]\n", all.Verdict, all.ExitCode, all.Duration.Round(time.Millisecond))
	if err := writeArtifact(a.gateLog(in), []byte(log.String())); err != nil {
		return horizon.GateRun{}, err
	}
	rec := gate.NewPartsReceipt(in.RunID, in.Feature, in.Attempt, snap.commit, results)
	rec.ID = gate.StableReceiptID(in.RunID, in.Feature, strconv.Itoa(in.Attempt))
	if err := gate.AppendReceipt(filepath.Join(a.runDir(in.RunID), "receipts.jsonl"), rec); err != nil {
		return horizon.GateRun{}, fmt.Errorf("record gate receipt: %w", err)
	}
	tail := all.Output
	var ps []horizon.GatePart
	for i, r := range results {
		p := horizon.GatePart{Name: r.Name, Command: rec.Parts[i].Command, Verdict: string(r.Verdict), ExitCode: r.ExitCode,
			DurationMS: r.Duration.Milliseconds(), Failing: rec.Parts[i].Failing}
		if r.Verdict != gate.Pass {
			t := r.Output
			if r.Err != "" {
				t += "\n" + r.Err
			}
			p.Tail = lastBytes(t, gatePartTailBytes)
			if r.Name.Tests() && r.Err != "" {
				tail += "\n" + r.Err
			}
		}
		ps = append(ps, p)
	}
	vanished, green, unknown := a.vanishedTests(ctx, in, rec, snap.tree)
	return horizon.GateRun{
		Reverted:       reverted,
		Vanished:       vanished,
		VanishedGreen:  green,
		PassingUnknown: unknown,
		ReceiptID:      rec.ID,
		Verdict:        string(all.Verdict),
		ExitCode:       all.ExitCode,
		DurationMS:     all.Duration.Milliseconds(),
		Command:        rec.Command,
		Tail:           lastBytes(tail, gateTailBytes),
		Failing:        rec.Failing,
		FailingKnown:   rec.FailingKnown,
		Snapshot:       snap.commit,
		Tree:           snap.tree,
		ChangedFiles:   snap.files,
		ChangedLines:   snap.lines,
		Note:           note,
		Parts:          ps,
	}, nil
}

// gateLog is the artifact that keeps a gate run's whole capped output.
func (a *Activities) gateLog(in GateInput) string {
	name := fmt.Sprintf("attempt-%d.log", in.Attempt)
	if in.Attempt == 0 {
		name = "baseline.log"
	}
	return filepath.Join(a.runDir(in.RunID), "gate", in.Feature+"-"+name)
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
