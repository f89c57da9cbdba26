package horizon

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A stalled feature slows down instead of burning money. Before each
// attempt a running feature judges its own attempts by the daily pass's
// stall rules (judgeAttempts); once stalled, it waits before the next
// attempt, 1 minute, then 2, 4… up to an hour (run.stall_backoff), and
// after run.stall_block_after attempts made while stalled it stops as a
// typed blocker, BlockerStalled, for a person.
//
// Progress and evidence, judged only from gate receipts:
//
//   - progress is a different failing set (or a gate that went green or
//     red), an accepted sibling feature or a person's unblock (the
//     caller's since): the stall is judged afresh from there, so the
//     delay and the count toward the blocker start over;
//   - new evidence is progress or a different diff (the gated tree): the
//     delay starts over at the base, but the count toward the blocker
//     goes on, so a worker that writes a new wrong diff each time still
//     stops after run.stall_block_after attempts.
//
// Attempts without a gate run (a protocol error, a blocked report) bring
// no evidence either way.

// Stall policy defaults (run.stall_backoff.base, .max and
// run.stall_block_after).
const (
	DefaultStallBackoffBase = time.Minute
	DefaultStallBackoffMax  = time.Hour
	DefaultStallBlockAfter  = 6
)

// StallPolicy is run.stall_backoff and run.stall_block_after, with the
// stall threshold of the daily pass (supervisor.stall_attempts).
type StallPolicy struct {
	Base       time.Duration `json:"base,omitempty"`
	Max        time.Duration `json:"max,omitempty"`
	BlockAfter int           `json:"block_after,omitempty"`
	Threshold  int           `json:"threshold,omitempty"`
}

// WithDefaults fills what is unset (zero) with the defaults.
func (p StallPolicy) WithDefaults() StallPolicy {
	if p.Base <= 0 {
		p.Base = DefaultStallBackoffBase
	}
	if p.Max <= 0 {
		p.Max = DefaultStallBackoffMax
	}
	p.Max = max(p.Max, p.Base)
	if p.BlockAfter < 1 {
		p.BlockAfter = DefaultStallBlockAfter
	}
	if p.Threshold < 1 {
		p.Threshold = DefaultStallAttempts
	}
	return p
}

// Delay is the wait before the n-th attempt since the last new evidence
// (n from 0): Base doubled n times, capped at Max.
func (p StallPolicy) Delay(n int) time.Duration {
	p = p.WithDefaults()
	d := p.Base
	for range n {
		if d >= p.Max/2 {
			return p.Max
		}
		d *= 2
	}
	return min(d, p.Max)
}

// StallVerdict is what the policy says of a feature after its latest
// attempt.
type StallVerdict struct {
	// Stall is the stall found (nil: not stalled, the next attempt goes at
	// once).
	Stall *Stall
	// Stalled counts the attempts made while the feature was stalled,
	// since its last progress.
	Stalled int
	// Block: Stalled reached the policy's BlockAfter; the feature stops
	// as BlockerStalled (Blocker) instead of trying again.
	Block bool
	// Wait and Until: the backoff before the next attempt, counted from
	// the end of the last one.
	Wait  time.Duration
	Until time.Time
	// Failing is the repeated failing set (sorted) and Strategies the
	// recovery strategies tried since the last progress, for the evidence.
	Failing    []string
	Strategies []Strategy
	Receipts   []string
}

// Judge applies the policy to a feature's attempts; attempts that started
// before since (an accepted sibling, a person's unblock) do not count.
// Pure and deterministic: a workflow calls it.
func (p StallPolicy) Judge(feature string, attempts []Attempt, since time.Time) StallVerdict {
	p = p.WithDefaults()
	var done []Attempt
	for _, a := range changeAttempts(attempts) {
		if a.Outcome == OutcomeRunning || (!since.IsZero() && a.StartedAt.Before(since)) {
			continue
		}
		done = append(done, a)
	}
	w, fresh := sinceProgress(done)
	n := len(w)
	if n == 0 {
		return StallVerdict{}
	}
	stalledAt := func(i int) bool { return len(judgeAttempts(Stall{Feature: feature}, w[:i], p.Threshold)) > 0 }
	found := judgeAttempts(Stall{Feature: feature}, w, p.Threshold)
	if len(found) == 0 {
		return StallVerdict{}
	}
	v := StallVerdict{Stall: &found[len(found)-1]}
	exp := 0
	for i := 1; i < n; i++ {
		if stalledAt(i) {
			v.Stalled++
			if i > fresh {
				exp++
			}
		}
	}
	for _, a := range w {
		if a.Strategy != "" && !slices.Contains(v.Strategies, a.Strategy) {
			v.Strategies = append(v.Strategies, a.Strategy)
		}
		if g := a.Gate; g != nil && !g.Passed() && g.FailingKnown && len(g.Failing) > 0 {
			v.Failing = failingSet(g.Failing)
		}
	}
	v.Receipts = receiptsOf(lastN(w, SameFailingInARow))
	if v.Stalled >= p.BlockAfter {
		v.Block = true
		return v
	}
	v.Wait = p.Delay(exp)
	v.Until = attemptTime(w[n-1]).Add(v.Wait)
	return v
}

// sinceProgress returns the attempts since the last progress (a gate
// whose failing set differs from the gate before it) and the index in
// them of the last new evidence (progress, or a gated tree that differs
// from the tree before it).
func sinceProgress(as []Attempt) (w []Attempt, fresh int) {
	start, lastGate := 0, -1
	for i, a := range as {
		if a.Gate == nil {
			continue
		}
		if lastGate >= 0 && !sameEvidence(as[lastGate].Gate, a.Gate, false) {
			start = i
		}
		lastGate = i
	}
	w = as[start:]
	lastGate = -1
	for i, a := range w {
		if a.Gate == nil {
			continue
		}
		if lastGate >= 0 && !sameEvidence(w[lastGate].Gate, a.Gate, true) {
			fresh = i
		}
		lastGate = i
	}
	return w, fresh
}

// sameEvidence compares two gate runs: their verdict, failing set and
// failed parts (a lint step turning red or green is a change), and with
// tree also the gated tree (when both recorded one).
func sameEvidence(a, b *GateRun, tree bool) bool {
	if a.Passed() != b.Passed() || a.FailingKnown != b.FailingKnown || !slices.Equal(failingSet(a.Failing), failingSet(b.Failing)) ||
		!slices.Equal(a.FailedParts(), b.FailedParts()) {
		return false
	}
	return !tree || a.Tree == "" || b.Tree == "" || a.Tree == b.Tree
}

// Blocker is the typed blocker of a feature the policy blocks: the
// repeated failing set and the strategies tried are its evidence.
func (v StallVerdict) Blocker(feature string, p StallPolicy) (Blocker, error) {
	p = p.WithDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "%s made %d attempts while stalled without progress (backing off %s to %s between them)",
		feature, v.Stalled, viewDuration(p.Base), viewDuration(p.Delay(max(v.Stalled-1, 0))))
	if v.Stall != nil {
		fmt.Fprintf(&b, "; %s", v.Stall.Detail)
	}
	if len(v.Failing) > 0 {
		fmt.Fprintf(&b, "; the failing set each time: %s", strings.Join(v.Failing, ", "))
	}
	if len(v.Strategies) > 0 {
		var names []string
		for _, s := range v.Strategies {
			names = append(names, s.Title())
		}
		fmt.Fprintf(&b, "; strategies tried: %s", strings.Join(names, ", "))
	}
	if len(v.Receipts) > 0 {
		fmt.Fprintf(&b, "; last receipts: %s", strings.Join(v.Receipts, ", "))
	}
	return NewBlocker(BlockerStalled, b.String())
}

// Backoff is a stalled feature waiting before its next attempt, as the
// run's status shows it.
type Backoff struct {
	Feature string        `json:"feature"`
	Until   time.Time     `json:"until"`
	Wait    time.Duration `json:"wait"`
	// Stalled counts attempts made while stalled; the feature blocks at
	// BlockAfter.
	Stalled    int    `json:"stalled"`
	BlockAfter int    `json:"block_after"`
	Detail     string `json:"detail,omitempty"` // the stall, in words
}

// Backoff is the status of a feature that waits under verdict v.
func (v StallVerdict) Backoff(feature string, p StallPolicy) *Backoff {
	if v.Stall == nil || v.Block {
		return nil
	}
	return &Backoff{Feature: feature, Until: v.Until, Wait: v.Wait, Stalled: v.Stalled, BlockAfter: p.WithDefaults().BlockAfter, Detail: v.Stall.Detail}
}

// Line is the backoff in one line: "stalled: next attempt at 10:42:07
// UTC (f3 waits 4m; 2 of 6 attempts while stalled, then it blocks): …".
func (b *Backoff) Line() string {
	line := fmt.Sprintf("stalled: next attempt at %s (%s waits %s; %d of %d attempts while stalled, then it blocks)",
		b.Until.UTC().Format("15:04:05 UTC"), b.Feature, viewDuration(b.Wait), b.Stalled, b.BlockAfter)
	if b.Detail != "" {
		line += ": " + b.Detail
	}
	return line
}
