package advisor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

var rules = Rules{MaxNotes: 3, ImmuneTurns: 2, RequireEvidence: true}

func note(sev horizon.Severity, text string, e *horizon.AdviceEvidence) horizon.AdviceNote {
	return horizon.AdviceNote{Severity: sev, Note: text, Evidence: e}
}

type verdict struct {
	ID        string
	Verdict   horizon.AdviceVerdict
	Delivered horizon.Severity
	Woke      bool
}

func verdicts(recs []horizon.AdviceRecord) []verdict {
	out := make([]verdict, len(recs))
	for i, r := range recs {
		out[i] = verdict{r.ID, r.Verdict, r.Delivered, r.Woke}
	}
	return out
}

// The first done-when case, review by review: a blocker with true
// evidence wakes; the next review's blocker is delivered without waking; a
// blocker without evidence arrives as a concern; a refuted note and an
// LGTM never reach the session.
func TestJudgeReviews(t *testing.T) {
	var s State
	b := horizon.SeverityBlocker
	r1 := s.Judge(rules, horizon.Advice{Notes: []horizon.AdviceNote{
		note(b, "Add subtracts instead of adding", ev("calc/add.go", 5, "`return a - b`")),
	}}, laneFiles)
	require.Equal(t, []verdict{{"r1.1", horizon.AdviceDelivered, b, true}}, verdicts(r1))
	require.Equal(t, "the observed fact is at calc/add.go:5", r1[0].Reason)

	s.Breaker.Turn() // the worker answers the wake: not a turn of its own
	r2 := s.Judge(rules, horizon.Advice{Notes: []horizon.AdviceNote{
		note(b, "The README does not mention Add", ev("README.md", 3, "`Adds numbers.`")),
		note(b, "Add has no test", nil),
		note(horizon.SeverityConcern, "Add is exported without a doc example", ev("calc/add.go", 2, "`func Add(a, b int) string`")),
		note(horizon.SeverityNit, "LGTM", nil),
	}}, laneFiles)
	require.Equal(t, []verdict{
		{"r2.1", horizon.AdviceDowngraded, horizon.SeverityConcern, false},
		{"r2.2", horizon.AdviceDowngraded, horizon.SeverityNit, false},
		{"r2.3", horizon.AdviceRefuted, "", false},
		{"r2.4", horizon.AdviceSuppressed, "", false},
	}, verdicts(r2))
	require.Contains(t, r2[0].Reason, "circuit breaker")
	require.Contains(t, r2[1].Reason, "no evidence")
	require.Contains(t, r2[1].Reason, "immune turns", "within the immune turns the concern it became is a nit")
	require.Contains(t, r2[2].Reason, "does not show")
	require.Equal(t, "content-free", r2[3].Reason)
}

func TestJudgeGuard(t *testing.T) {
	c := horizon.SeverityConcern
	var s State
	first := s.Judge(rules, horizon.Advice{Notes: []horizon.AdviceNote{note(c, "Add needs a test", nil)}}, laneFiles)
	require.Equal(t, horizon.AdviceDelivered, first[0].Verdict)

	recs := s.Judge(rules, horizon.Advice{Notes: []horizon.AdviceNote{
		note(c, "add needs a TEST.", nil),                                                  // duplicate, same severity
		note(horizon.SeverityNit, "Add needs a test", nil),                                 // duplicate, milder
		note(horizon.SeverityBlocker, "Add needs a test", ev("calc/add.go", 5, "`a - b`")), // graver: news
		note(c, "one", nil),
		note(c, "two", nil),
		note(c, "three", nil), // over the quota of 3
		note("urgent", "four", nil),
	}}, laneFiles)
	require.Equal(t, []verdict{
		{"r2.1", horizon.AdviceSuppressed, "", false},
		{"r2.2", horizon.AdviceSuppressed, "", false},
		{"r2.3", horizon.AdviceDelivered, horizon.SeverityBlocker, true},
		{"r2.4", horizon.AdviceDowngraded, horizon.SeverityNit, false},
		{"r2.5", horizon.AdviceDowngraded, horizon.SeverityNit, false},
		{"r2.6", horizon.AdviceSuppressed, "", false},
		{"r2.7", horizon.AdviceSuppressed, "", false},
	}, verdicts(recs))
	require.Contains(t, recs[0].Reason, "duplicate")
	require.Equal(t, "over advisor.max_notes_per_update (3)", recs[5].Reason)
	require.Equal(t, `unknown severity "urgent"`, recs[6].Reason)

	f := s.Failed("review timed out after 1m0s")
	require.Equal(t, horizon.AdviceRecord{ID: "r3", Review: 3, Verdict: horizon.AdviceFailed, Reason: "review timed out after 1m0s"}, f)
}

// Without advisor.require_evidence a blocker needs no evidence to wake.
func TestJudgeEvidenceOptional(t *testing.T) {
	var s State
	recs := s.Judge(Rules{MaxNotes: 3}, horizon.Advice{Notes: []horizon.AdviceNote{note(horizon.SeverityBlocker, "stop: wrong file", nil)}}, laneFiles)
	require.Equal(t, []verdict{{"r1.1", horizon.AdviceDelivered, horizon.SeverityBlocker, true}}, verdicts(recs))
}

func TestBreaker(t *testing.T) {
	var b Breaker
	sev, wake, _ := b.Route(horizon.SeverityBlocker, 1)
	require.True(t, wake)
	require.Equal(t, horizon.SeverityBlocker, sev)
	sev, wake, why := b.Route(horizon.SeverityBlocker, 1)
	require.False(t, wake)
	require.Equal(t, horizon.SeverityConcern, sev)
	require.Contains(t, why, "circuit breaker")
	sev, _, _ = b.Route(horizon.SeverityConcern, 1)
	require.Equal(t, horizon.SeverityNit, sev, "immune after a wake")
	b.Turn()
	sev, _, _ = b.Route(horizon.SeverityConcern, 1)
	require.Equal(t, horizon.SeverityConcern, sev, "immunity over after immune_turns turns")
	_, wake, _ = b.Route(horizon.SeverityBlocker, 1)
	require.False(t, wake, "turns answering the wake are not the worker's own")
	b.OwnTurn()
	_, wake, _ = b.Route(horizon.SeverityBlocker, 1)
	require.True(t, wake, "a turn of its own re-arms the breaker")
}

// A note whose evidence the fact check can neither confirm nor refute
// goes as a nit; one whose unquoted code is an operator off the line
// never goes.
func TestJudgeUncertainIsANit(t *testing.T) {
	var s State
	recs := s.Judge(rules, horizon.Advice{Notes: []horizon.AdviceNote{
		note(horizon.SeverityConcern, "Add looks wrong here", ev("calc/add.go", 5, "return")),
		note(horizon.SeverityBlocker, "Add multiplies", ev("calc/add.go", 5, "return a * b")),
	}}, laneFiles)
	require.Equal(t, []verdict{
		{"r1.1", horizon.AdviceDowngraded, horizon.SeverityNit, false},
		{"r1.2", horizon.AdviceRefuted, "", false},
	}, verdicts(recs))
	require.Contains(t, recs[0].Reason, "uncertain: the evidence at calc/add.go:5 states no checkable fact")
	require.Contains(t, recs[1].Reason, `calc/add.go:5 does not show "return a * b"`)
}

// advisor.delivery: a blocker set to deliver arrives without waking; a
// severity set to record stays in the run's record; a concern the
// immune turns downgrade to a recorded nit is recorded too.
func TestJudgeDelivery(t *testing.T) {
	b, c := horizon.SeverityBlocker, horizon.SeverityConcern
	truth := ev("calc/add.go", 5, "`return a - b`")
	r := rules
	r.Delivery = map[horizon.Severity]string{b: Deliver, horizon.SeverityNit: Record}
	var s State
	recs := s.Judge(r, horizon.Advice{Notes: []horizon.AdviceNote{
		note(b, "Add subtracts", truth),
		note(horizon.SeverityNit, "Add could be documented", nil),
	}}, laneFiles)
	require.Equal(t, []verdict{
		{"r1.1", horizon.AdviceDelivered, b, false},
		{"r1.2", horizon.AdviceRecorded, "", false},
	}, verdicts(recs))
	require.Contains(t, recs[1].Reason, "advisor.delivery.nit is record")
	require.False(t, s.Breaker.Woke, "a blocker that is only delivered does not trip the breaker")

	// A blocker that wakes starts the immune turns; a concern then
	// becomes a nit, which is only recorded.
	r.Delivery[b] = Wake
	recs = s.Judge(r, horizon.Advice{Notes: []horizon.AdviceNote{note(b, "Add still subtracts", truth)}}, laneFiles)
	require.Equal(t, []verdict{{"r2.1", horizon.AdviceDelivered, b, true}}, verdicts(recs))
	recs = s.Judge(r, horizon.Advice{Notes: []horizon.AdviceNote{note(c, "Add is not tested", truth)}}, laneFiles)
	require.Equal(t, []verdict{{"r3.1", horizon.AdviceRecorded, "", false}}, verdicts(recs))
	require.Contains(t, recs[0].Reason, "immune turns")
}
