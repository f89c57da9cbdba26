package activities

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpendLedgerCountsEachKeyOnce(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	got, err := a.DaySpend(context.Background())
	require.NoError(t, err)
	require.Zero(t, got)

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, a.recordSpend("r1", "r1/f1/1/worker", 0.25)) // a retried activity
		}()
	}
	wg.Wait()
	require.NoError(t, a.recordSpend("r2", "r2/f1/1/worker", 0.5))
	require.NoError(t, a.recordSpend("r2", "r2/f1/1/auditor", 0)) // free: not recorded
	got, err = a.DaySpend(context.Background())
	require.NoError(t, err)
	require.InDelta(t, 0.75, got, 1e-9)
}

func TestPaidClassification(t *testing.T) {
	lb, err := LoadLeaderboard("")
	require.NoError(t, err)
	require.True(t, Paid(lb, "anthropic/claude-sonnet-4-5"))
	require.True(t, Paid(lb, "someone/unknown-model"), "unknown routes count as metered")
	for _, m := range lb.Models {
		if m.Capabilities.Cost == "local" {
			require.False(t, Paid(lb, m.Routes[0]), m.Name)
		}
	}
	_, err = LoadLeaderboard("/nonexistent/models.json")
	require.ErrorContains(t, err, "/nonexistent/models.json")
}
