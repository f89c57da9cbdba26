package horizon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestStrategyFor(t *testing.T) {
	F, R, S, D := StrategyFocusedCorrection, StrategyReplan, StrategyResearch, StrategyDecomposition
	tests := []struct {
		interval int
		want     []Strategy // for attempts 0, 1, 2, ...
	}{
		{interval: 2, want: []Strategy{F, F, R, R, S, S, D, D, F, F, R}},
		{interval: 1, want: []Strategy{F, R, S, D, F, R, S, D, F}},
		{interval: 3, want: []Strategy{F, F, F, R, R, R, S, S, S, D, D, D, F}},
		{interval: 0, want: []Strategy{F, F, R, R, S, S, D, D, F}},  // unset: the default 2
		{interval: -5, want: []Strategy{F, F, R, R, S, S, D, D, F}}, // nonsense: the default 2
	}
	for _, tt := range tests {
		var got []Strategy
		for n := range tt.want {
			got = append(got, StrategyFor(n, tt.interval))
		}
		require.Equal(t, tt.want, got, "interval %d", tt.interval)
	}
	require.Equal(t, F, StrategyFor(-3, 2))
	require.Equal(t, D, StrategyFor(1_000_000*4+3, 1), "no cap: huge attempt counts still rotate")
}

// TestStrategyRotationProperty: the strategy changes exactly when the
// attempt count reaches a multiple of the interval, always to the next one
// in the rotation, cycles with period 4 windows, and never stops.
func TestStrategyRotationProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 50).Draw(t, "interval")
		n := rapid.IntRange(0, 100_000).Draw(t, "attempts")
		cur, next := StrategyFor(n, k), StrategyFor(n+1, k)
		if !cur.Valid() || !next.Valid() {
			t.Fatalf("invalid strategy %q/%q", cur, next)
		}
		changes := (n+1)%k == 0
		if changes != (cur != next) {
			t.Fatalf("n=%d k=%d: %s → %s, change expected %v", n, k, cur, next, changes)
		}
		if changes {
			i := slicesIndex(Strategies(), cur)
			if want := Strategies()[(i+1)%4]; next != want {
				t.Fatalf("n=%d k=%d: %s → %s, want %s", n, k, cur, next, want)
			}
		}
		if StrategyFor(n+4*k, k) != cur {
			t.Fatalf("rotation does not cycle every 4 windows")
		}
		// Every window of 4 consecutive windows sees every strategy.
		seen := map[Strategy]bool{}
		for w := range 4 {
			seen[StrategyFor(n+w*k, k)] = true
		}
		if len(seen) != 4 {
			t.Fatalf("4 windows from %d saw %v", n, seen)
		}
	})
}

func slicesIndex(s []Strategy, v Strategy) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestStrategyGuidance(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Strategies() {
		g := StrategyGuidance(s)
		require.True(t, strings.HasPrefix(g, "## Recovery strategy: "+s.Title()+"\n\n"), g)
		require.False(t, seen[g], "each strategy says something different")
		seen[g] = true
	}
	require.Contains(t, StrategyGuidance(StrategyFocusedCorrection), "do not start over")
	require.Contains(t, StrategyGuidance(StrategyReplan), "different approach")
	require.Contains(t, StrategyGuidance(StrategyResearch), "node_modules")
	require.Contains(t, StrategyGuidance(StrategyDecomposition), "smallest part")
	require.Equal(t, StrategyGuidance(StrategyFocusedCorrection), StrategyGuidance(""))
	require.Equal(t, StrategyGuidance(StrategyFocusedCorrection), StrategyGuidance("bogus"))
}
