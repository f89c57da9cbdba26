package ladder

import (
	"fmt"
	"slices"

	"github.com/horizon/horizon/horizon/vocab"
)

// Tier is a rung of the cost ladder. The zero value is T0.
type Tier int

// The rungs, cheapest first.
const (
	T0 Tier = iota // ast-grep codemods: deterministic, free
	T1             // local coder model on an OpenAI-compatible endpoint: free
	T2             // reader: an HTTP model that returns text and touches no lane
	T3             // cloud applier
	T4             // stronger cloud applier
)

// NumTiers is the number of rungs.
const NumTiers = 5

// Tiers returns every rung, cheapest first.
func Tiers() []Tier { return []Tier{T0, T1, T2, T3, T4} }

// Valid reports whether t is one of T0..T4.
func (t Tier) Valid() bool { return t >= T0 && t <= T4 }

// Local reports whether t runs on the operator's machine at no metered cost.
func (t Tier) Local() bool { return t == T0 || t == T1 }

// Paid reports whether t is metered (T2–T4). An invalid tier counts as paid,
// so a corrupted value can never slip past the spend checks.
func (t Tier) Paid() bool { return !t.Local() }

// String returns "T0".."T4".
func (t Tier) String() string {
	if t.Valid() {
		return fmt.Sprintf("T%d", int(t))
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// MarshalText encodes t as "T0".."T4" (also as a JSON map key).
func (t Tier) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("marshal tier: %d is not a tier", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText accepts "T0".."T4".
func (t *Tier) UnmarshalText(b []byte) error {
	p, err := ParseTier(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// ParseTier parses "T0".."T4" (or "t0".."t4").
func ParseTier(s string) (Tier, error) {
	if len(s) == 2 && (s[0] == 'T' || s[0] == 't') && s[1] >= '0' && s[1] <= '4' {
		return Tier(s[1] - '0'), nil
	}
	return 0, fmt.Errorf("parse tier %q: want T0..T4", s)
}

// Card is the unit of work the ladder routes: one feature of the plan.
type Card struct {
	ID string `json:"id"`
	// Kind is the plan's kind of the feature. Mechanical: a recurring fix
	// shape; codemods at T0 are tried first, then the two local attempts
	// of bounded work. Open: open-ended work; no local attempts are owed,
	// and any failed attempt climbs a rung. Bounded, and any other value,
	// is the safe reading: it never climbs faster than bounded work nor
	// tries codemods on work not declared mechanical.
	Kind vocab.FeatureKind `json:"kind,omitempty"`
	// AllowPaths are the paths the card may touch: slash-separated patterns
	// anchored at the repository root ("ladder/", "cmd/*/main.go",
	// "internal/**/*_test.go"); see MatchPath. Empty means no allow-list.
	AllowPaths []string `json:"allow_paths,omitempty"`
	// LineCeiling is the most changed lines (added + deleted) an attempt
	// may produce; 0 means no ceiling.
	LineCeiling int `json:"line_ceiling,omitempty"`
}

// shape reads the card's kind as the router uses it.
func (c Card) shape() (mechanical, open bool) {
	return c.Kind == vocab.KindMechanical, c.Kind == vocab.KindOpen
}

// kind names the card's routing in the plan's words, for the reasons
// Route gives ("first attempt at bounded card f1").
func (c Card) kind() string {
	switch mechanical, open := c.shape(); {
	case mechanical:
		return "mechanical"
	case open:
		return "open"
	}
	return "bounded"
}

// modelFailure reports whether o is evidence against the model that made
// the attempt. vocab.OutcomeError is not: a crashed endpoint says nothing about
// whether a bigger model is needed.
func modelFailure(o vocab.Outcome) bool {
	switch o {
	case vocab.OutcomeGateFailed, vocab.OutcomeRejected, vocab.OutcomeProtocolError, vocab.OutcomeBlocked:
		return true
	}
	return false
}

// gateRan reports whether an attempt with this outcome ran the gate, so
// that its failing set is known (empty for a green gate).
func gateRan(o vocab.Outcome) bool {
	return o == vocab.OutcomeGateFailed || o == vocab.OutcomeRejected || o == vocab.OutcomeAccepted
}

// Action is what a Decision asks the caller to do, and what a ledger entry
// recorded.
type Action string

// Actions.
const (
	// ActionAttempt: run the tier's applier on the card in its lane.
	ActionAttempt Action = "attempt"
	// ActionRetrieve: a read-only explore/research step at the tier (no lane
	// writes) that looks up the unresolved symbols, then route again.
	ActionRetrieve Action = "retrieve"
	// ActionPause: run nothing; the Decision's Reason says what must change
	// (a ceiling raised, a tier made available).
	ActionPause Action = "pause"
	// ActionDone: the card's last attempt was accepted; nothing to route.
	ActionDone Action = "done"
)

// Entry is one step in the ledger: an attempt at a card, or a retrieval
// step (Action ActionRetrieve) taken because an attempt hit an unresolved
// symbol.
type Entry struct {
	Card    string `json:"card"` // the card's ID
	Tier    Tier   `json:"tier"`
	Action  Action `json:"action,omitempty"` // "" or ActionAttempt: an attempt; ActionRetrieve: a retrieval step
	Applier string `json:"applier,omitempty"`
	Model   string `json:"model,omitempty"`
	// Triggers are the escalation triggers of this attempt, as Triggers
	// computed them when it ended. Route reads them from here.
	Triggers []Trigger     `json:"triggers,omitempty"`
	Cost     float64       `json:"cost"` // metered cost in USD, 0 for local tiers
	Outcome  vocab.Outcome `json:"outcome"`
	// FailingSet is the gate's failing-assertion set (gate.ParseFailures).
	FailingSet []string `json:"failing_set,omitempty"`
	// DiffHash identifies the attempt's diff against the lane base
	// (DiffStat.Hash). Hash the empty diff too, so that "changed nothing
	// twice" counts as an identical diff.
	DiffHash     string   `json:"diff_hash,omitempty"`
	ChangedFiles []string `json:"changed_files,omitempty"`
	ChangedLines int      `json:"changed_lines,omitempty"` // added + deleted
	PromptTokens int      `json:"prompt_tokens,omitempty"` // the attempt's largest prompt, in tokens
	// Vanished are tests that failed at baseline and are absent from the
	// attempt's gate results; Reverted its changes to protected paths.
	Vanished []string `json:"vanished,omitempty"`
	Reverted []string `json:"reverted,omitempty"`
	// FailedParts are the parts of a gate made of several (the gate
	// script, gate.test_command, gate.lint_command) that did not pass;
	// empty for a gate of one part. It tells a red lint step from red
	// tests (testsRed, lintRed).
	FailedParts []vocab.GatePart `json:"failed_parts,omitempty"`
}

// testsRed reports whether e failed the gate on its tests: a part whose
// failures are test failures (the gate script, the test command) did not
// pass, or the gate was red with no part to blame (one script or command,
// runs recorded before parts, a test that vanished). A gate red only in
// its lint step is not red on its tests.
func (e Entry) testsRed() bool {
	if e.Outcome != vocab.OutcomeGateFailed {
		return false
	}
	return len(e.FailedParts) == 0 || slices.ContainsFunc(e.FailedParts, vocab.GatePart.Tests)
}

// lintRed reports whether e's gate run failed in its lint step.
func (e Entry) lintRed() bool {
	return e.Outcome == vocab.OutcomeGateFailed && slices.Contains(e.FailedParts, vocab.GatePartLint)
}

// IsAttempt reports whether e is an attempt (not a retrieval step).
func (e Entry) IsAttempt() bool { return e.Action == "" || e.Action == ActionAttempt }

// Has reports whether e carries a trigger of kind k.
func (e Entry) Has(k TriggerKind) bool {
	return slices.ContainsFunc(e.Triggers, func(t Trigger) bool { return t.Kind == k })
}

// escalating returns e's triggers that call for a higher rung: all but the
// unresolved-symbol trigger, which calls for retrieval instead.
func (e Entry) escalating() []Trigger {
	var out []Trigger
	for _, t := range e.Triggers {
		if t.Kind != TriggerUnresolvedSymbol {
			out = append(out, t)
		}
	}
	return out
}

// Ledger is the run's entries in the order they happened, for all cards.
type Ledger []Entry

// ForCard returns the entries of card id, in order.
func (l Ledger) ForCard(id string) Ledger {
	var out Ledger
	for _, e := range l {
		if e.Card == id {
			out = append(out, e)
		}
	}
	return out
}

// Attempts returns the attempts (not the retrieval steps), in order.
func (l Ledger) Attempts() Ledger {
	var out Ledger
	for _, e := range l {
		if e.IsAttempt() {
			out = append(out, e)
		}
	}
	return out
}

// LastAttempt returns a copy of the last attempt in l and its index in l,
// or nil and -1. Pass it as prev to Triggers for the attempt that follows.
func (l Ledger) LastAttempt() (*Entry, int) {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].IsAttempt() {
			e := l[i]
			return &e, i
		}
	}
	return nil, -1
}

// LocalAttempts counts the attempts made at T0 or T1.
func (l Ledger) LocalAttempts() int {
	n := 0
	for _, e := range l {
		if e.IsAttempt() && e.Tier.Local() {
			n++
		}
	}
	return n
}

// PaidAttempts counts the attempts made at a paid tier.
func (l Ledger) PaidAttempts() int {
	n := 0
	for _, e := range l {
		if e.IsAttempt() && e.Tier.Paid() {
			n++
		}
	}
	return n
}

// PaidCalls counts the entries, attempts and retrieval steps, made at a
// paid tier: the calls the one-paid-call-at-a-time rule serialises.
func (l Ledger) PaidCalls() int {
	n := 0
	for _, e := range l {
		if e.Tier.Paid() {
			n++
		}
	}
	return n
}

// Spent sums the entries' costs.
func (l Ledger) Spent() float64 {
	var s float64
	for _, e := range l {
		s += e.Cost
	}
	return s
}

// Rung is what the ledger records about one tier's availability: whether
// it can be used now and, if not, why (shown in decisions and in
// `horizon status`). Applier and Model name what runs the tier.
type Rung struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`  // why it is not available, e.g. "no local endpoint answered at 127.0.0.1:11434"
	Applier   string `json:"applier,omitempty"` // e.g. "ast-grep", "opencode", "aider", "reader", "codex", "claude-code"
	Model     string `json:"model,omitempty"`   // provider/model, e.g. "ollama/qwen2.5-coder:14b"
	// Explore is the model a retrieval step at this tier runs on: the
	// explore role's best-ranked model of the tier's cost class, so
	// finding what an unresolved name is goes to the model ranked for
	// discovery, not the one ranked for building. "": the tier's Model.
	Explore string `json:"explore,omitempty"`
	// Research is the research role's best-ranked model of the tier's
	// cost class, for attempts under the research recovery strategy.
	// "": the tier's Model.
	Research string `json:"research,omitempty"`
	// Quick is the quick role's best-ranked model of the tier's cost
	// class, for an attempt whose Decision Brief holds only small,
	// explicit fixes (horizon.SmallBrief). "": the tier's Model.
	Quick string `json:"quick,omitempty"`
}

// Availability is the recorded availability of each tier. A tier missing
// from the map is unavailable: a rung is skipped only when the ledger
// records it as unavailable, and one that was never probed counts as such.
type Availability map[Tier]Rung

// Available reports whether tier t is recorded as available.
func (a Availability) Available(t Tier) bool { return t.Valid() && a[t].Available }

// whyNot is the recorded reason tier t is unavailable.
func (a Availability) whyNot(t Tier) string {
	r, ok := a[t]
	switch {
	case !ok:
		return "not recorded as available"
	case r.Reason != "":
		return r.Reason
	}
	return "unavailable"
}
