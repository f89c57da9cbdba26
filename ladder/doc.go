// Package ladder decides where the next attempt at a card goes: which rung
// of horizon's cost ladder, with which applier and model, or whether to
// retrieve context first or pause. It also holds the model leaderboard
// (zilX's models.json format) that maps horizon's roles to connected models.
//
// The ladder has five rungs:
//
//	T0  ast-grep codemods (.horizon/codemods/*.yml)         free, deterministic
//	T1  a local coder model on an OpenAI-compatible endpoint free (local)
//	T2  a reader: an HTTP model that returns text and has   metered
//	    no tools; horizon itself applies what it returns
//	T3  a cloud applier (OpenCode with a cloud model, ...)  metered
//	T4  a stronger cloud applier                            metered
//
// # Why Route is pure
//
// Route is a function of the attempt ledger, the card, the recorded tier
// availability and the spend figures, and nothing else: no clock, no
// randomness, no I/O. That makes it safe to call from a Temporal workflow
// (a replay reaches the same decision), and it makes it property-testable:
// route_prop_test.go drives it with a synthetic ledger generator and checks
// the invariants below on every generated case.
//
// # Why Route is security-sensitive
//
// Route decides where money goes and which model gets write access to a
// lane. Its inputs are artifacts the model cannot fake (gate verdicts,
// failing-assertion sets, diff hashes, changed paths, token counts, compiler
// output), never a model's own claim of success. Its invariants are the
// operator's guarantees:
//
//   - never a tier the ledger records as unavailable;
//   - never a paid tier (T2–T4) when spend is at or near a ceiling, and a
//     pause (not a local attempt) once a ceiling is reached;
//   - a ceiling that is not set (zero) means no paid budget: local only;
//   - mechanical and bounded cards get two local attempts before any
//     escalation, whenever a local tier is available;
//   - an escalation trigger moves the card up at least one rung, unless
//     it is still owed its local attempts, spend keeps it local, or it is
//     already on the top usable rung;
//   - an unresolved symbol leads to a read-only retrieval step at the same
//     tier, not to a bigger model (a bigger model would not know the symbol
//     either).
//
// Like the gate script, this package is part of the judge, not of the
// judged: an automated run must never edit it, so a run that works on
// horizon itself should treat ladder/ like the gate script (outside every
// card's allow-list, restored if touched).
//
// # Triggers
//
// Triggers computes, after each attempt, the escalation triggers of that
// attempt from its artifacts; the caller stores them in the ledger entry and
// Route reads them from there. Each trigger also exists as its own function
// (GateRedTwice, SameFailingSet, ...), tested on captured output of the real
// tools.
//
// # Leaderboard
//
// ParseLeaderboard validates a models.json (the bundled one is Bundled());
// Resolve picks, for a role, the lowest-ranked model that has a route among
// the connected provider/model IDs. There is no cross-role fallback: a role
// with no connected model is an error that names the roles that do resolve.
package ladder
