package advisor

import "github.com/horizon/horizon/horizon"

// Breaker is the circuit breaker: a blocker may wake the worker's session
// at most once in a row. Once one woke it, every further blocker is
// delivered as a concern (without waking) until the worker takes a turn of
// its own, one that horizon's prompt, not the advisor's, started. After a
// wake the next ImmuneTurns worker turns also deliver concerns as nits.
// These two rules alone make an advisor/worker loop impossible, whatever
// the advisor says (TestBreakerNeverWakesTwice).
type Breaker struct {
	// Woke: a blocker woke the session and the worker has had no turn of
	// its own since.
	Woke bool `json:"woke,omitempty"`
	// Immune is how many more worker turns downgrade concerns to nits.
	Immune int `json:"immune,omitempty"`
}

// OwnTurn records a worker turn started by horizon (a new brief, a
// continuation): the session may be woken again.
func (b *Breaker) OwnTurn() { b.Woke = false }

// Turn records a worker turn boundary (a step or an idle): it counts down
// the immune turns.
func (b *Breaker) Turn() {
	if b.Immune > 0 {
		b.Immune--
	}
}

// Route decides how a note of severity sev is delivered: at which
// severity, whether it wakes the session, and why it was downgraded ("" if
// not).
func (b *Breaker) Route(sev horizon.Severity, immuneTurns int) (deliver horizon.Severity, wake bool, why string) {
	switch sev {
	case horizon.SeverityBlocker:
		if b.Woke {
			return horizon.SeverityConcern, false, "circuit breaker: a blocker already woke the session and the worker has taken no turn of its own since"
		}
		b.Woke, b.Immune = true, immuneTurns
		return sev, true, ""
	case horizon.SeverityConcern:
		if b.Immune > 0 {
			return horizon.SeverityNit, false, "immune turns: a blocker woke the session recently"
		}
	}
	return sev, false, ""
}
