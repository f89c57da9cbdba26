package ladder

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon/vocab"
)

func TestTierText(t *testing.T) {
	for _, tier := range Tiers() {
		b, err := tier.MarshalText()
		require.NoError(t, err)
		var back Tier
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, tier, back)
	}
	_, err := Tier(5).MarshalText()
	require.Error(t, err)
	_, err = ParseTier("T5")
	require.ErrorContains(t, err, "want T0..T4")
	require.True(t, Tier(-1).Paid(), "an invalid tier must count as paid")
	require.True(t, Tier(9).Paid())
	require.False(t, Availability{Tier(9): {Available: true}}.Available(Tier(9)))
}

// Entries and availability cross Temporal as JSON: they must round-trip.
func TestLedgerJSONRoundTrip(t *testing.T) {
	l := Ledger{
		{Card: "f1", Tier: T1, Applier: "opencode", Model: "ollama/qwen2.5-coder:14b", Outcome: vocab.OutcomeGateFailed,
			FailingSet: []string{"p.TestA"}, DiffHash: "sha256:ab", ChangedFiles: []string{"a.go"}, ChangedLines: 3, PromptTokens: 900,
			Triggers: []Trigger{{Kind: TriggerRegression, Evidence: []string{"p.TestA"}, Detail: "previously green tests now failing [p.TestA]"}}},
		{Card: "f1", Tier: T1, Action: ActionRetrieve, Outcome: vocab.OutcomeAccepted},
		{Card: "f1", Tier: T3, Cost: 0.42, Outcome: vocab.OutcomeAccepted},
	}
	b, err := json.Marshal(l)
	require.NoError(t, err)
	var back Ledger
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, l, back)
	require.Contains(t, string(b), `"tier":"T3"`)

	av := Availability{T1: {Available: true, Model: "ollama/qwen2.5-coder:14b"}, T2: {Reason: "no reader configured"}}
	b, err = json.Marshal(av)
	require.NoError(t, err)
	require.JSONEq(t, `{"T1":{"available":true,"model":"ollama/qwen2.5-coder:14b"},"T2":{"available":false,"reason":"no reader configured"}}`, string(b))
	var avBack Availability
	require.NoError(t, json.Unmarshal(b, &avBack))
	require.Equal(t, av, avBack)
}

func TestLedgerHelpers(t *testing.T) {
	l := Ledger{
		{Card: "a", Tier: T0, Outcome: vocab.OutcomeGateFailed},
		{Card: "b", Tier: T3, Cost: 1, Outcome: vocab.OutcomeGateFailed},
		{Card: "a", Tier: T1, Outcome: vocab.OutcomeGateFailed},
		{Card: "a", Tier: T2, Action: ActionRetrieve, Cost: 0.01},
		{Card: "a", Tier: T3, Cost: 0.5, Outcome: vocab.OutcomeRejected},
		{Card: "a", Tier: T3, Action: ActionRetrieve, Cost: 0.2},
	}
	a := l.ForCard("a")
	require.Len(t, a, 5)
	require.Len(t, a.Attempts(), 3)
	last, idx := a.LastAttempt()
	require.Equal(t, T3, last.Tier)
	require.Equal(t, 3, idx)
	last.Tier = T0 // a copy
	require.Equal(t, T3, a[3].Tier)
	require.Equal(t, 2, a.LocalAttempts())
	require.Equal(t, 1, a.PaidAttempts())
	require.Equal(t, 3, a.PaidCalls())
	require.InDelta(t, 1.71, l.Spent(), 1e-9)
	none, i := Ledger{}.LastAttempt()
	require.Nil(t, none)
	require.Equal(t, -1, i)
}
