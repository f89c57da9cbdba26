package horizon

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A goal is stalled when it burns attempts without progress. Failing is
// not stalling: in full autonomy a failing attempt is followed by another
// with a different recovery strategy. The daily pass flags a stall so a
// person can look, judged only from recorded attempts and gate receipts:
//
//   - a feature with at least N attempts (supervisor.stall_attempts,
//     default 6) that is still not accepted;
//   - a run with at least N attempts since its last accepted feature (or
//     its start), when no single feature already accounts for them;
//   - a feature (or a one-feature run) whose last three finished attempts
//     failed the gate with the same set of failing tests.
//
// Only runs still running are judged: a run that ended is reported by
// how it ended. Blocked, accepted, skipped and decomposed features are not
// stalled (a blocked one waits for a person and is reported as such).

// DefaultStallAttempts is supervisor.stall_attempts' default.
const DefaultStallAttempts = 6

// SameFailingInARow is how many finished attempts in a row must fail with
// the same failing set to stall a feature.
const SameFailingInARow = 3

// StallKind says which rule found a stall.
type StallKind string

// Stall kinds.
const (
	// StallAttempts: at least N attempts since the last accepted feature.
	StallAttempts StallKind = "attempts"
	// StallSameFailing: the same failing set three attempts in a row.
	StallSameFailing StallKind = "same_failing"
)

// Stall is one stalled feature or run, with its evidence.
type Stall struct {
	RunID string `json:"run_id"`
	Goal  string `json:"goal"`
	// Feature is the stalled feature; empty for the run as a whole or a
	// one-feature run.
	Feature string    `json:"feature,omitempty"`
	Title   string    `json:"title,omitempty"` // the feature's title
	Kind    StallKind `json:"kind"`
	// Attempts is the number of attempts counted.
	Attempts int `json:"attempts"`
	// Failing is the repeated failing set (kind same_failing), sorted.
	Failing []string `json:"failing,omitempty"`
	// Receipts are the gate receipts of the attempts in evidence, oldest
	// first (for kind attempts, the last three).
	Receipts []string `json:"receipts,omitempty"`
	// Since is when the last feature was accepted; zero when none was.
	Since time.Time `json:"since,omitzero"`
	// Detail says what was seen, in words.
	Detail string `json:"detail"`
}

// DetectStalls returns the stalls of a run, features in plan order, then
// the run's own. threshold is supervisor.stall_attempts; below 1 it is
// DefaultStallAttempts. The result is deterministic (no map iteration,
// no clock), so a workflow may call it.
func DetectStalls(s RunState, threshold int) []Stall {
	if threshold < 1 {
		threshold = DefaultStallAttempts
	}
	if s.Status != StatusRunning && s.Status != "" {
		return nil
	}
	base := Stall{RunID: s.RunID, Goal: s.Goal}
	if s.Plan == nil {
		return judgeAttempts(base, s.Attempts, threshold)
	}
	var out []Stall
	featureStall := false
	since := s.Plan.LastAccepted()
	var all []Attempt
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			all = append(all, f.Attempts...)
			if !f.Status.pending() && f.Status != FeatureRunning {
				continue
			}
			fb := base
			fb.Feature, fb.Title = f.ID, f.Title
			fs := judgeAttempts(fb, f.Attempts, threshold)
			for _, st := range fs {
				featureStall = featureStall || st.Kind == StallAttempts
			}
			out = append(out, fs...)
		}
	}
	var after []Attempt
	for _, a := range changeAttempts(all) {
		if since.IsZero() || attemptTime(a).After(since) {
			after = append(after, a)
		}
	}
	slices.SortStableFunc(after, func(a, b Attempt) int { return a.StartedAt.Compare(b.StartedAt) })
	if n := len(after); n >= threshold && !featureStall {
		st := base
		st.Kind, st.Attempts, st.Since, st.Receipts = StallAttempts, n, since, receiptsOf(lastN(after, SameFailingInARow))
		st.Detail = fmt.Sprintf("%d attempts since %s (stall at %d)", n, sinceWords(since), threshold)
		out = append(out, st)
	}
	return out
}

// judgeAttempts is the one definition of a stalled feature, applied to
// one feature's attempts (or a one-feature run's): the daily pass judges
// every feature by it, and a running feature judges itself by it before
// each attempt (StallPolicy), so what the report flags and what backs off
// are the same thing.
func judgeAttempts(base Stall, attempts []Attempt, threshold int) []Stall {
	var out []Stall
	changes := changeAttempts(attempts)
	if n := len(changes); n >= threshold {
		st := base
		st.Kind, st.Attempts, st.Receipts = StallAttempts, n, receiptsOf(lastN(changes, SameFailingInARow))
		st.Detail = fmt.Sprintf("%d attempts and not accepted (stall at %d)", n, threshold)
		if base.Feature != "" {
			st.Detail = fmt.Sprintf("%d attempts on feature %s and not accepted (stall at %d)", n, base.Feature, threshold)
		}
		out = append(out, st)
	}
	if st, ok := sameFailing(base, changes); ok {
		out = append(out, st)
	}
	return out
}

// sameFailing applies the same-failing-set rule to a feature's change
// attempts: the last SameFailingInARow finished ones all ran the gate,
// failed it with a recognised, non-empty failing set, and the sets are
// equal.
func sameFailing(base Stall, changes []Attempt) (Stall, bool) {
	var done []Attempt
	for _, a := range changes {
		if a.Outcome != OutcomeRunning {
			done = append(done, a)
		}
	}
	if len(done) < SameFailingInARow {
		return Stall{}, false
	}
	last := lastN(done, SameFailingInARow)
	var set []string
	for i, a := range last {
		g := a.Gate
		if g == nil || g.Passed() || !g.FailingKnown || len(g.Failing) == 0 {
			return Stall{}, false
		}
		s := failingSet(g.Failing)
		if i > 0 && !slices.Equal(s, set) {
			return Stall{}, false
		}
		set = s
	}
	st := base
	st.Kind, st.Attempts, st.Failing, st.Receipts = StallSameFailing, SameFailingInARow, set, receiptsOf(last)
	what := "attempts"
	if base.Feature != "" {
		what = "attempts on feature " + base.Feature
	}
	st.Detail = fmt.Sprintf("the last %d %s failed the gate with the same %s: %s",
		SameFailingInARow, what, countNoun(len(set), "failing test", "failing tests"), strings.Join(set, ", "))
	return st, true
}

// LastAccepted is when the plan's latest verified feature was accepted
// (its verifying attempt's end), zero when none was: an accepted feature
// is progress for the whole run, so stalls count from it.
func (p *Plan) LastAccepted() time.Time {
	var since time.Time
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			if f.Status != FeatureAccepted {
				continue
			}
			if a, ok := f.Verified(); ok {
				if t := attemptTime(a); t.After(since) {
					since = t
				}
			}
		}
	}
	return since
}

// changeAttempts drops retrieval steps, which change nothing.
func changeAttempts(as []Attempt) []Attempt {
	var out []Attempt
	for _, a := range as {
		if a.Action != "retrieve" {
			out = append(out, a)
		}
	}
	return out
}

func lastN(as []Attempt, n int) []Attempt { return as[max(0, len(as)-n):] }

func receiptsOf(as []Attempt) []string {
	var out []string
	for _, a := range as {
		if a.Gate != nil && a.Gate.ReceiptID != "" {
			out = append(out, a.Gate.ReceiptID)
		}
	}
	return out
}

// failingSet is a failing-assertion list as a set: sorted, without
// repeats.
func failingSet(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// attemptTime is when an attempt ended, or started if it has not.
func attemptTime(a Attempt) time.Time {
	if !a.EndedAt.IsZero() {
		return a.EndedAt
	}
	return a.StartedAt
}

func sinceWords(t time.Time) string {
	if t.IsZero() {
		return "the run's start (no feature accepted yet)"
	}
	return "the last accepted feature (" + t.UTC().Format("2006-01-02 15:04 UTC") + ")"
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
