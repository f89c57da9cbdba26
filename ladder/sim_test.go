package ladder

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon/vocab"
)

// TestSimulateLadderVersusT3 routes 60 synthetic cards with Route and with
// "always start at T3" and prints what each paid. It asserts the counts
// (deterministic for the fixed card set), never a time.
func TestSimulateLadderVersusT3(t *testing.T) {
	cards := SyntheticCards(60)
	cfg := DefaultSimConfig()
	ladder := Simulate(cards, cfg, Route)
	cloud := Simulate(cards, cfg, AlwaysStartAt(T3))

	t.Logf("ladder:          %s", ladder)
	t.Logf("always from T3:  %s", cloud)
	t.Logf("ratio ladder/T3: paid calls per resolved card %.2f, cost per resolved card %.2f",
		ladder.PaidCallsPerResolved()/cloud.PaidCallsPerResolved(), ladder.CostPerResolved()/cloud.CostPerResolved())

	require.Equal(t, 60, ladder.Resolved, "every card is solvable at T4 and both policies reach it")
	require.Equal(t, 60, cloud.Resolved)
	require.Less(t, ladder.PaidCalls, cloud.PaidCalls)
	require.Less(t, ladder.Cost, cloud.Cost)
	require.Equal(t, cloud.Attempts, cloud.PaidCalls, "the baseline never runs locally")
}

// Hand-checked paths through the ladder for one card of each shape.
func TestSimulateSingleCards(t *testing.T) {
	cfg := DefaultSimConfig()
	tests := []struct {
		name      string
		card      SimCard
		attempts  int
		paidCalls int
		cost      float64
	}{
		{"mechanical solved by codemods", SimCard{Card{ID: "m", Kind: vocab.KindMechanical}, T0}, 1, 0, 0},
		{"mechanical needing the local model: T0, T1", SimCard{Card{ID: "m", Kind: vocab.KindMechanical}, T1}, 2, 0, 0},
		{"bounded solved locally on the second try is still T1 first", SimCard{Card{ID: "b"}, T1}, 1, 0, 0},
		{"bounded needing T3: T1, T1, T2, T3", SimCard{Card{ID: "b"}, T3}, 4, 2, 0.32},
		{"open needing T4: T1, T2, T3, T4", SimCard{Card{ID: "o", Kind: vocab.KindOpen}, T4}, 4, 3, 1.52},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Simulate([]SimCard{tt.card}, cfg, Route)
			require.Equal(t, 1, r.Resolved)
			require.Equal(t, tt.attempts, r.Attempts)
			require.Equal(t, tt.paidCalls, r.PaidCalls)
			require.InDelta(t, tt.cost, r.Cost, 1e-9)
		})
	}
}

func TestSimulateUnresolved(t *testing.T) {
	cfg := DefaultSimConfig()
	cfg.MaxAttempts = 2
	// A bounded card retries T3 once before the red-twice trigger moves it to T4.
	r := Simulate([]SimCard{{Card{ID: "b"}, T4}}, cfg, AlwaysStartAt(T3))
	require.Equal(t, 0, r.Resolved)
	require.Equal(t, 2, r.Attempts)
	require.Equal(t, "0/1 resolved, 2 attempts, 2 paid calls, $0.60 (no card resolved)", r.String())
}

// BenchmarkRoute measures one routing decision on a 12-entry ledger.
func BenchmarkRoute(b *testing.B) {
	var l Ledger
	for i := 0; i < 6; i++ {
		l = append(l, red(T1), Entry{Card: "other", Tier: T3, Outcome: vocab.OutcomeGateFailed})
	}
	l[len(l)-2].Triggers = []Trigger{trSame}
	b.ReportAllocs()
	for b.Loop() {
		Route(l, bounded, allTiers, budget10)
	}
}

// BenchmarkSimulate reports the ladder's cost and paid calls per resolved
// card relative to always starting at T3 (go test -bench Simulate ./ladder/).
func BenchmarkSimulate(b *testing.B) {
	cards := SyntheticCards(60)
	cfg := DefaultSimConfig()
	var ladder, cloud SimResult
	for b.Loop() {
		ladder = Simulate(cards, cfg, Route)
		cloud = Simulate(cards, cfg, AlwaysStartAt(T3))
	}
	b.ReportMetric(ladder.CostPerResolved()/cloud.CostPerResolved(), "cost-ratio")
	b.ReportMetric(ladder.PaidCallsPerResolved()/cloud.PaidCallsPerResolved(), "paid-call-ratio")
}
