package advisor

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/horizon/horizon/horizon"
)

// genNote draws notes an adversarial advisor might give: mostly
// blockers, with true, false or no evidence, content-free or repeated.
func genNote() *rapid.Generator[horizon.AdviceNote] {
	return rapid.Custom(func(t *rapid.T) horizon.AdviceNote {
		n := horizon.AdviceNote{
			Severity: rapid.SampledFrom([]horizon.Severity{horizon.SeverityBlocker, horizon.SeverityBlocker, horizon.SeverityConcern, horizon.SeverityNit, "bogus"}).Draw(t, "severity"),
			Note:     rapid.SampledFrom([]string{"Add subtracts", "LGTM", "stop now", "wrong file", "ＳＴＯＰ ＮＯＷ", ""}).Draw(t, "note"),
		}
		switch rapid.IntRange(0, 3).Draw(t, "evidence") {
		case 0:
			n.Evidence = ev("calc/add.go", 5, "`return a - b`") // true
		case 1:
			n.Evidence = ev("calc/add.go", 5, "`return a + b`") // false
		case 2:
			n.Evidence = ev("nowhere.go", 1, "`x`")
		}
		return n
	})
}

// No sequence of advisor outputs, interleaved with any worker turn
// boundaries, makes more than one waking message without a worker turn
// of its own between them: the circuit breaker's guarantee.
func TestBreakerNeverWakesTwice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := Rules{
			MaxNotes:        rapid.IntRange(1, 5).Draw(t, "max_notes"),
			ImmuneTurns:     rapid.IntRange(0, 4).Draw(t, "immune_turns"),
			RequireEvidence: rapid.Bool().Draw(t, "require_evidence"),
		}
		var s State
		wakes := 0 // waking messages since the worker's last turn of its own
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 5).Draw(t, "event") {
			case 0:
				s.Breaker.OwnTurn()
				wakes = 0
			case 1:
				s.Breaker.Turn()
			default:
				notes := rapid.SliceOfN(genNote(), 0, 6).Draw(t, "notes")
				for _, rec := range s.Judge(r, horizon.Advice{Notes: notes}, laneFiles) {
					if rec.Woke {
						wakes++
					}
					if rec.Woke && (!rec.Reached() || rec.Delivered != horizon.SeverityBlocker) {
						t.Fatalf("%s woke the session as %q (%s)", rec.ID, rec.Delivered, rec.Verdict)
					}
					if !rec.Reached() && rec.Delivered != "" {
						t.Fatalf("%s was %s yet has a delivered severity", rec.ID, rec.Verdict)
					}
				}
				if wakes > 1 {
					t.Fatalf("%d waking messages without a worker turn of its own between", wakes)
				}
			}
		}
	})
}
