package ladder

import (
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// Decision is what Route asks the caller to do next for a card.
type Decision struct {
	Action Action `json:"action"`
	// Tier, Applier and Model say where to run an attempt or a retrieval
	// step; Applier and Model are copied from the tier's Rung. For pause and
	// done they are empty and Tier is T0: read Action first.
	Tier    Tier   `json:"tier"`
	Applier string `json:"applier,omitempty"`
	Model   string `json:"model,omitempty"`
	// Reason says why, in words for `horizon status` and the decision log.
	Reason string `json:"reason"`
}

// localBudget is how many local attempts mechanical and bounded cards get
// before any escalation.
const localBudget = 2

// Route decides the next step for card c from the run's ledger l (entries
// of other cards are ignored), the recorded tier availability av and the
// spend figures s. It is pure and deterministic. The rules, in order:
//
//  1. Spend: a figure that is not a number, or spend at or over the run or
//     day ceiling → pause, naming the ceiling. A ceiling not set, or spend
//     at or past ThrottleAt × ceiling → local tiers (T0, T1) only.
//  2. Never a tier av records as unavailable. T0 is used only for
//     mechanical cards and only once per card (codemods are deterministic:
//     a second run produces the same diff).
//  3. No attempt yet: mechanical cards start at T0 when codemods are
//     available, else at T1; bounded and open cards start at T1. An
//     unavailable start moves to the next usable rung up.
//  4. The last attempt was accepted → done.
//  5. The last attempt hit an unresolved symbol and no retrieval followed
//     it → retrieve at the same tier (at least T1: retrieval needs a
//     model). Once a retrieval has followed, the retry stays at that tier
//     whatever else the attempt triggered: the missing context was the
//     likelier cause. If the attempt right after a retrieval still hits an
//     unresolved symbol, retrieval did not help and that counts as an
//     escalation trigger.
//  6. Mechanical and bounded cards that have fewer than two local attempts
//     and no paid attempt → T1, whatever the triggers, as long as T1 is
//     usable.
//  7. Escalation triggers on the last attempt (any but unresolved symbol)
//     → one rung up: the lowest usable tier above the last one. Open cards
//     also climb after any failed attempt (gate red, rejected, protocol
//     error, blocked). On the top usable rung the card stays there.
//  8. Otherwise → retry at the last attempt's tier (or the nearest usable
//     one, upwards first).
//
// When no tier is usable, Route pauses and says which tier is missing why.
func Route(l Ledger, c Card, av Availability, s Spend) Decision {
	b := s.budget()
	if b.pause {
		return Decision{Action: ActionPause, Reason: b.why}
	}
	mine := l.ForCard(c.ID)
	r := router{card: c, av: av, budget: b, mine: mine}
	r.mechanical, r.open = c.shape()
	for _, e := range mine {
		if e.IsAttempt() && e.Tier == T0 && e.Outcome != vocab.OutcomeError {
			r.triedT0 = true
		}
	}
	return r.route()
}

// router holds one Route call's inputs.
type router struct {
	card       Card
	mechanical bool // codemods first (Card.Mechanical)
	open       bool // no local attempts owed; climbs after any failure (Card.Open)
	av         Availability
	budget     budget
	mine       Ledger
	triedT0    bool
}

func (r *router) route() Decision {
	last, lastIdx := r.mine.LastAttempt()
	if last == nil {
		return r.start()
	}
	if last.Outcome == vocab.OutcomeAccepted {
		return Decision{Action: ActionDone, Reason: fmt.Sprintf("card %s was accepted at %s", r.card.ID, last.Tier)}
	}
	attempts := r.mine.Attempts()
	n := len(attempts)
	retrievedAfter, retrievedBefore := false, lastIdx > 0 && r.mine[lastIdx-1].Action == ActionRetrieve
	for _, e := range r.mine[lastIdx+1:] {
		if e.Action == ActionRetrieve {
			retrievedAfter = true
		}
	}
	esc := last.escalating()
	what := fmt.Sprintf("attempt %d at %s", n, last.Tier)

	if last.Has(TriggerUnresolvedSymbol) {
		syms := symbolsOf(*last)
		switch {
		case retrievedAfter:
			// The retrieval answered this attempt; retry where it ran.
			return r.placeSame(ActionAttempt, last.Tier, func(t Tier) string {
				return fmt.Sprintf("%s hit unresolved symbols %s and context was retrieved since: retrying at %s with it", what, list(syms), t)
			})
		case !retrievedBefore:
			want := max(last.Tier, T1)
			if d, ok := r.tryPlace(ActionRetrieve, want, false, func(t Tier) string {
				return fmt.Sprintf("%s failed on unresolved symbols %s, which a bigger model would not know either: retrieving context (read-only explore/research) at %s first", what, list(syms), t)
			}); ok {
				return d
			}
			// No model tier is usable for retrieval: route as if it had
			// failed, below.
		default:
			esc = append(esc, Trigger{
				Kind:     TriggerUnresolvedSymbol,
				Evidence: syms,
				Detail:   "unresolved symbols " + list(syms) + " still unresolved after a retrieval step",
			})
		}
	}

	local := attempts.LocalAttempts()
	if !r.open && local < localBudget && attempts.PaidAttempts() == 0 && r.allowed(T1) {
		why := fmt.Sprintf("local attempt %d of two (at %s) ended %s", local, last.Tier, last.Outcome)
		if len(esc) > 0 {
			why += " with " + joinTriggers(esc)
		}
		return r.attempt(T1, fmt.Sprintf("%s; %s cards get two local attempts before any escalation: local attempt %d at T1", why, r.card.kind(), local+1))
	}

	if len(esc) > 0 || (r.open && modelFailure(last.Outcome)) {
		subject := what
		if local == localBudget && last.Tier.Local() && n == local {
			subject = "two local attempts"
		}
		var why string
		if len(esc) > 0 {
			why = fmt.Sprintf("%s failed with %s", subject, joinTriggers(esc))
		} else {
			why = fmt.Sprintf("%s ended %s and open cards climb after one failure", what, last.Outcome)
		}
		return r.climb(last.Tier, why)
	}

	if last.Tier == T0 {
		return r.placeSame(ActionAttempt, T1, func(t Tier) string {
			return fmt.Sprintf("codemods at T0 ended %s: moving on to %s", last.Outcome, t)
		})
	}
	return r.placeSame(ActionAttempt, last.Tier, func(t Tier) string {
		return fmt.Sprintf("%s ended %s with no escalation trigger: retrying at %s", what, last.Outcome, t)
	})
}

// start places a card's first attempt.
func (r *router) start() Decision {
	if r.mechanical && r.allowed(T0) {
		return r.attempt(T0, fmt.Sprintf("first attempt at mechanical card %s: codemods at T0 first", r.card.ID))
	}
	d, ok := r.tryPlace(ActionAttempt, T1, true, func(t Tier) string {
		return fmt.Sprintf("first attempt at %s card %s: starting at %s", r.card.kind(), r.card.ID, t)
	})
	if ok {
		return d
	}
	return r.pause(T1)
}

// climb moves one rung up from tier from.
func (r *router) climb(from Tier, why string) Decision {
	for t := from + 1; t <= T4; t++ {
		if r.allowed(t) {
			return r.attempt(t, why+"; escalating to "+t.String()+r.skipped(from+1, t))
		}
	}
	// Nothing usable above: stay as high as possible.
	for t := min(from, T4); t >= T0; t-- {
		if r.allowed(t) {
			var note string
			switch {
			case !r.budget.paidOK:
				note = r.budget.why
			case from >= T4:
				note = "already at T4, the top of the ladder"
			default:
				note = "already on the top usable tier (" + r.unusable(from+1, T4) + ")"
			}
			verb := "retrying"
			if t != from {
				verb = "continuing"
			}
			return r.attempt(t, fmt.Sprintf("%s; %s: %s at %s", why, note, verb, t))
		}
	}
	return r.pause(min(from+1, T4))
}

// placeSame runs action at tier want, or the nearest usable tier (upwards
// first). why words the reason for the tier chosen.
func (r *router) placeSame(action Action, want Tier, why func(Tier) string) Decision {
	if d, ok := r.tryPlace(action, want, false, why); ok {
		return d
	}
	return r.pause(want)
}

// tryPlace finds the lowest usable tier at or above want, else (unless
// upOnly) the highest below it.
func (r *router) tryPlace(action Action, want Tier, upOnly bool, why func(Tier) string) (Decision, bool) {
	if action == ActionRetrieve && want < T1 {
		want = T1
	}
	for t := want; t <= T4; t++ {
		if r.allowed(t) {
			return r.decide(action, t, why(t)+r.skipped(want, t)), true
		}
	}
	if upOnly {
		return Decision{}, false
	}
	floor := T0
	if action == ActionRetrieve {
		floor = T1
	}
	for t := want - 1; t >= floor; t-- {
		if r.allowed(t) {
			note := r.unusable(want, T4)
			if !r.budget.paidOK {
				note = r.budget.why
			}
			return r.decide(action, t, why(t)+" ("+note+")"), true
		}
	}
	return Decision{}, false
}

// allowed reports whether tier t may be used now for this card.
func (r *router) allowed(t Tier) bool {
	switch {
	case !r.av.Available(t):
		return false
	case t.Paid() && !r.budget.paidOK:
		return false
	case t == T0 && (!r.mechanical || r.triedT0):
		return false
	}
	return true
}

// whyNot says why tier t may not be used.
func (r *router) whyNot(t Tier) string {
	switch {
	case !r.av.Available(t):
		return t.String() + " unavailable: " + r.av.whyNot(t)
	case t.Paid() && !r.budget.paidOK:
		return t.String() + " is paid"
	case t == T0 && !r.mechanical:
		return "T0 codemods are for mechanical cards"
	case t == T0:
		return "T0 codemods already tried"
	}
	return t.String() + " usable"
}

// skipped notes the tiers in [from, to) passed over, if any.
func (r *router) skipped(from, to Tier) string {
	if from >= to {
		return ""
	}
	return " (skipping " + r.unusable(from, to-1) + ")"
}

// unusable lists why each tier in [from, to] may not be used.
func (r *router) unusable(from, to Tier) string {
	var parts []string
	for t := max(from, T0); t <= min(to, T4); t++ {
		parts = append(parts, r.whyNot(t))
	}
	if len(parts) == 0 {
		return "no tier above"
	}
	return strings.Join(parts, "; ")
}

// pause is the decision when no tier can be used.
func (r *router) pause(want Tier) Decision {
	why := "no usable tier for card " + r.card.ID + " (" + r.unusable(T0, T4) + ")"
	if !r.budget.paidOK {
		why = r.budget.why + ", and no local tier is usable for card " + r.card.ID + " (" + r.unusable(T0, T1) + ")"
	}
	return Decision{Action: ActionPause, Reason: fmt.Sprintf("%s wanted; %s: paused until one is available", want, why)}
}

func (r *router) attempt(t Tier, why string) Decision { return r.decide(ActionAttempt, t, why) }

func (r *router) decide(a Action, t Tier, why string) Decision {
	rung := r.av[t]
	model := rung.Model
	if a == ActionRetrieve && rung.Explore != "" {
		model = rung.Explore
	}
	return Decision{Action: a, Tier: t, Applier: rung.Applier, Model: model, Reason: why}
}

func joinTriggers(ts []Trigger) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, " and ")
}

func symbolsOf(e Entry) []string {
	for _, t := range e.Triggers {
		if t.Kind == TriggerUnresolvedSymbol {
			return t.Evidence
		}
	}
	return nil
}
