package ladder

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A retrieval step runs on its tier's explore model when the tier has
// one; attempts keep the tier's build model; a tier without an explore
// model retrieves on its own model, as before.
func TestRouteRetrievalRunsOnTheExploreModel(t *testing.T) {
	withExplore := avail(T0, T1, T2, T3, T4)
	for _, tier := range []Tier{T1, T3} {
		r := withExplore[tier]
		r.Explore, r.Research = "explore/"+tier.String(), "research/"+tier.String()
		withExplore[tier] = r
	}
	tests := []struct {
		name   string
		ledger Ledger
		av     Availability
		action Action
		model  string
	}{
		{"retrieval at T1", Ledger{red(T1, trSym)}, withExplore, ActionRetrieve, "explore/T1"},
		{"retrieval at T3", Ledger{red(T3, trSym)}, withExplore, ActionRetrieve, "explore/T3"},
		{"the attempt after it stays on the build model", Ledger{red(T1, trSym), retr(T1)}, withExplore, ActionAttempt, withExplore[T1].Model},
		{"a plain attempt", Ledger{red(T1)}, withExplore, ActionAttempt, withExplore[T1].Model},
		{"no explore model: the tier's", Ledger{red(T1, trSym)}, allTiers, ActionRetrieve, allTiers[T1].Model},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Route(tt.ledger, bounded, tt.av, budget10)
			require.Equal(t, tt.action, d.Action, d.Reason)
			require.Equal(t, tt.model, d.Model, d.Reason)
			require.Equal(t, tt.av[d.Tier].Applier, d.Applier)
		})
	}
}
