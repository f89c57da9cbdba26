package consult

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/agent"
)

// A consult is weighed by the spend authority's word on its attempt: off
// for the attempt (spend was near a ceiling when the worker's session was
// granted), or off now that today's spend is past the throttle point of
// the day ceiling. A declined consult runs no model, is recorded in the
// attempt's ledger with why, and the worker reads why.
func TestConsultDeclinedOnSpend(t *testing.T) {
	for _, tc := range []struct {
		name     string
		check    *SpendCheck
		daySpent float64
		declined string // "" when the consult runs
	}{
		{"no check (a registration from before the authority)", nil, 100, ""},
		{"far from the day ceiling", &SpendCheck{DayCeiling: 10, ThrottleAt: 0.8}, 1, ""},
		{"past the throttle point of the day ceiling", &SpendCheck{DayCeiling: 10, ThrottleAt: 0.8}, 8.5, "today's spend $8.5000 is at or past 0.8 of the day ceiling $10.0000"},
		{"off for the attempt", &SpendCheck{Off: "spend is at or past 0.8 of a ceiling"}, 0, "spend is at or past 0.8 of a ceiling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, lane := t.TempDir(), t.TempDir()
			ledger := LedgerPath(filepath.Join(home, "runs", "run-1"), "f1", 1)
			require.NoError(t, Register(home, Registration{RunID: "run-1", Feature: "f1", Attempt: 1, Lane: lane, Ledger: ledger, Spend: tc.check}))
			b := fakeBackend{calls: []agent.RunningCall{running("call_1", "ok?")}, answer: "yes", usage: agent.Usage{Cost: 0.02}}
			a, err := NewAdvisor(&b, Options{Home: home, Dir: lane, Model: "cloud/lead", MaxTokens: 100,
				DaySpend: func(context.Context) (float64, error) { return tc.daySpent, nil }})
			require.NoError(t, err)
			res, err := connect(t, a).CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"question": "ok?"}})
			require.NoError(t, err)
			recs, err := Read(ledger)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			if tc.declined == "" {
				require.False(t, res.IsError, text(t, res))
				require.Len(t, b.requests, 1)
				require.Equal(t, 0.02, recs[0].Usage.Cost)
				return
			}
			require.True(t, res.IsError)
			require.Contains(t, text(t, res), tc.declined)
			require.Empty(t, b.requests, "a declined consult runs no model")
			require.Contains(t, recs[0].Error, tc.declined)
			require.Zero(t, recs[0].Usage.Cost)
		})
	}
}
