package ladder

import (
	"fmt"
	"slices"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// TriggerKind names an escalation trigger.
type TriggerKind string

// The escalation triggers. Each is computed from artifacts the model cannot
// fake: gate verdicts and failing sets, diff hashes, changed paths and line
// counts, prompt token counts, compiler output.
const (
	TriggerGateRedTwice     TriggerKind = "gate_red_twice"    // gate red on its tests on two attempts running at the same tier
	TriggerLintRedTwice     TriggerKind = "lint_red_twice"    // the gate's lint step red on two attempts running at the same tier
	TriggerSameFailingSet   TriggerKind = "same_failing_set"  // the same failing-assertion set as the previous attempt
	TriggerIdenticalDiff    TriggerKind = "identical_diff"    // a diff identical to the previous attempt's
	TriggerRegression       TriggerKind = "regression"        // a test not failing before is failing now
	TriggerOutOfScope       TriggerKind = "out_of_scope"      // files touched outside the card's allow-list
	TriggerOverLineCeiling  TriggerKind = "over_line_ceiling" // more changed lines than the card's ceiling
	TriggerContextOverflow  TriggerKind = "context_overflow"  // a local prompt over the local context cap
	TriggerUnresolvedSymbol TriggerKind = "unresolved_symbol" // the compiler or runtime could not resolve a name
	TriggerVanishedTests    TriggerKind = "vanished_tests"    // a test failing at baseline is absent from the gate's results
)

// Trigger is one escalation trigger fired by an attempt, with its evidence.
type Trigger struct {
	Kind TriggerKind `json:"kind"`
	// Evidence lists what fired it: failing tests, files, symbols.
	Evidence []string `json:"evidence,omitempty"`
	// Detail says it in words that read after "failed with", e.g. "the
	// same failing set as the previous attempt [pkg.TestAdd]".
	Detail string `json:"detail"`
}

// String returns the trigger's detail.
func (t Trigger) String() string {
	if t.Detail != "" {
		return t.Detail
	}
	return string(t.Kind)
}

// Triggers computes the escalation triggers of attempt cur, in a fixed
// order. The caller stores them in cur.Triggers before appending cur to
// the ledger.
//
//   - baselineFailing is the failing-assertion set of the gate run on the
//     lane's base commit, before any attempt (empty when it was green).
//   - prev is the card's previous attempt (Ledger.ForCard(id).LastAttempt()
//     before cur is appended), or nil for the first attempt. A retrieval
//     entry passed as prev is ignored.
//   - gateOutput is the gate's captured output for cur ("" if the gate did
//     not run); it is read for unresolved symbols.
//   - localContextCap is the local model's context window in tokens; 0
//     turns that trigger off.
func Triggers(card Card, baselineFailing []string, prev *Entry, cur Entry, gateOutput string, localContextCap int) []Trigger {
	if prev != nil && !prev.IsAttempt() {
		prev = nil
	}
	var out []Trigger
	for _, t := range []func() (Trigger, bool){
		func() (Trigger, bool) { return GateRedTwice(prev, cur) },
		func() (Trigger, bool) { return LintRedTwice(prev, cur) },
		func() (Trigger, bool) { return SameFailingSet(prev, cur) },
		func() (Trigger, bool) { return IdenticalDiff(prev, cur) },
		func() (Trigger, bool) { return Regression(baselineFailing, prev, cur) },
		func() (Trigger, bool) { return OutOfScope(card, cur) },
		func() (Trigger, bool) { return OverLineCeiling(card, cur) },
		func() (Trigger, bool) { return ContextOverflow(cur, localContextCap) },
		func() (Trigger, bool) { return UnresolvedSymbol(cur, gateOutput) },
		func() (Trigger, bool) { return VanishedTests(cur) },
	} {
		if tr, ok := t(); ok {
			out = append(out, tr)
		}
	}
	return out
}

// GateRedTwice fires when the gate was red on its tests on cur and on
// prev at the same tier. The streak counts per tier on purpose: a rung
// just climbed to gets its own two tries before this trigger moves it on,
// while "no progress" across rungs is caught by SameFailingSet and
// IdenticalDiff.
//
// A gate red only in its lint step (gate.lint_command, the receipt's
// parts) is not red on its tests, on either side: tests gone green with
// lint findings left is progress, not a second red gate, and two lint
// failures are LintRedTwice's, named as what they are. A gate of one
// part (and every run recorded before parts) counts as before: its
// whole verdict is its tests'.
func GateRedTwice(prev *Entry, cur Entry) (Trigger, bool) {
	if prev == nil || !prev.testsRed() || !cur.testsRed() || prev.Tier != cur.Tier {
		return Trigger{}, false
	}
	return Trigger{
		Kind:   TriggerGateRedTwice,
		Detail: fmt.Sprintf("the gate red twice running at %s", cur.Tier),
	}, true
}

// LintRedTwice fires when the gate's lint step failed on cur and on prev
// at the same tier: GateRedTwice's streak for lint findings, computed
// from the receipt's parts, never from what a model said. One lint
// failure does not fire it: the next attempt gets the lint step's output
// as its own evidence, and lint findings are most often a mechanical fix
// the same model can make; a second at the same tier is the "no
// progress" a higher rung answers, as a gate red on its tests twice is.
func LintRedTwice(prev *Entry, cur Entry) (Trigger, bool) {
	if prev == nil || !prev.lintRed() || !cur.lintRed() || prev.Tier != cur.Tier {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerLintRedTwice,
		Evidence: []string{string(vocab.GatePartLint)},
		Detail:   fmt.Sprintf("the lint step red twice running at %s", cur.Tier),
	}, true
}

// SameFailingSet fires when cur and prev both failed the gate on its tests
// with the same non-empty failing-assertion set: the attempt made no
// progress. Empty sets are not compared: an empty set of a red gate means
// the failures were not recognised (a lint step, a crash), not that they
// were the same. The sets are the test parts' only (a lint step's
// findings are never in them), and a side red only in its lint step is
// not compared at all (testsRed).
func SameFailingSet(prev *Entry, cur Entry) (Trigger, bool) {
	if prev == nil || !prev.testsRed() || !cur.testsRed() {
		return Trigger{}, false
	}
	a, b := normSet(prev.FailingSet), normSet(cur.FailingSet)
	if len(b) == 0 || !slices.Equal(a, b) {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerSameFailingSet,
		Evidence: b,
		Detail:   "the same failing set as the previous attempt " + list(b),
	}, true
}

// IdenticalDiff fires when cur's diff hash equals prev's: the model
// produced the same change again (or no change again, when the empty diff
// is hashed too).
func IdenticalDiff(prev *Entry, cur Entry) (Trigger, bool) {
	if prev == nil || cur.DiffHash == "" || cur.DiffHash != prev.DiffHash {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerIdenticalDiff,
		Evidence: []string{cur.DiffHash},
		Detail:   "a diff identical to the previous attempt's (" + short(cur.DiffHash) + ")",
	}, true
}

// Regression fires when cur failed the gate with tests that were not
// failing before: not in the baseline's failing set, or not in prev's when
// prev's gate ran. ladder sees failing sets only, so a test the attempt
// added and left failing counts too: it was not failing before either.
func Regression(baselineFailing []string, prev *Entry, cur Entry) (Trigger, bool) {
	if !cur.testsRed() {
		return Trigger{}, false
	}
	base := toSet(baselineFailing)
	var before map[string]bool
	if prev != nil && gateRan(prev.Outcome) {
		before = toSet(prev.FailingSet)
	}
	var broken []string
	for _, t := range normSet(cur.FailingSet) {
		if !base[t] || (before != nil && !before[t]) {
			broken = append(broken, t)
		}
	}
	if len(broken) == 0 {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerRegression,
		Evidence: broken,
		Detail:   "previously green tests now failing " + list(broken),
	}, true
}

// OutOfScope fires when cur touched files that no pattern of the card's
// allow-list covers, or changed protected paths (gate.protected, the gate
// script), which the gate step reverted. A card without an allow-list has
// no scope to leave; protected paths are out of every card's scope.
func OutOfScope(card Card, cur Entry) (Trigger, bool) {
	out := OutsideAllowList(card.AllowPaths, cur.ChangedFiles)
	rev := normSet(cur.Reverted)
	var why []string
	if len(out) > 0 {
		why = append(why, "files outside the card's allow-list "+list(out))
	}
	if len(rev) > 0 {
		why = append(why, "changes to protected paths, reverted before the gate "+list(rev))
	}
	if len(why) == 0 {
		return Trigger{}, false
	}
	ev := append(out, rev...)
	slices.Sort(ev)
	return Trigger{
		Kind:     TriggerOutOfScope,
		Evidence: slices.Compact(ev),
		Detail:   strings.Join(why, "; "),
	}, true
}

// VanishedTests fires when tests that failed at baseline appear in
// neither the failing nor the passing set of cur's gate run (the gate
// activity compares the receipts: gate.Vanished). Deleting a failing test
// is not a way to pass: such an attempt is never accepted
// (horizon.GateRun.Judged).
func VanishedTests(cur Entry) (Trigger, bool) {
	v := normSet(cur.Vanished)
	if len(v) == 0 {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerVanishedTests,
		Evidence: v,
		Detail:   "tests failing at baseline that no longer ran " + list(v),
	}, true
}

// OverLineCeiling fires when cur changed more lines than the card allows.
func OverLineCeiling(card Card, cur Entry) (Trigger, bool) {
	if card.LineCeiling <= 0 || cur.ChangedLines <= card.LineCeiling {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerOverLineCeiling,
		Evidence: []string{fmt.Sprint(cur.ChangedLines)},
		Detail:   fmt.Sprintf("%d changed lines, over the card's ceiling of %d", cur.ChangedLines, card.LineCeiling),
	}, true
}

// ContextOverflow fires when a local attempt's prompt did not fit the local
// model's context window. It only concerns local tiers: a cloud attempt's
// large prompt says nothing about needing a still bigger model.
func ContextOverflow(cur Entry, localContextCap int) (Trigger, bool) {
	if localContextCap <= 0 || !cur.Tier.Local() || cur.PromptTokens <= localContextCap {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerContextOverflow,
		Evidence: []string{fmt.Sprint(cur.PromptTokens)},
		Detail:   fmt.Sprintf("a %d-token prompt, over the local context cap of %d", cur.PromptTokens, localContextCap),
	}, true
}

// UnresolvedSymbol fires when cur failed the gate on its tests and their
// output names symbols the compiler or runtime could not resolve (see
// UnresolvedSymbols). Route answers it with a retrieval step, not a bigger
// model.
func UnresolvedSymbol(cur Entry, gateOutput string) (Trigger, bool) {
	if !cur.testsRed() {
		return Trigger{}, false
	}
	syms := UnresolvedSymbols(gateOutput)
	if len(syms) == 0 {
		return Trigger{}, false
	}
	return Trigger{
		Kind:     TriggerUnresolvedSymbol,
		Evidence: syms,
		Detail:   "unresolved symbols " + list(syms),
	}, true
}

// normSet returns s sorted, without duplicates or empty names.
func normSet(s []string) []string {
	out := make([]string, 0, len(s))
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func toSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[strings.TrimSpace(x)] = true
	}
	return m
}

// listMax bounds how many items a trigger detail names, so a thousand
// failing tests do not become a thousand-name reason string.
const listMax = 8

// list renders names as "[a b c]", or "[a b … (+12 more)]".
func list(names []string) string {
	if len(names) <= listMax {
		return "[" + strings.Join(names, " ") + "]"
	}
	return fmt.Sprintf("[%s … (+%d more)]", strings.Join(names[:listMax], " "), len(names)-listMax)
}

// short abbreviates a "sha256:<hex>" hash for messages.
func short(h string) string {
	if i := strings.IndexByte(h, ':'); i >= 0 && len(h) > i+13 {
		return h[:i+13]
	}
	return h
}
