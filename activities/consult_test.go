package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/consult"
)

// The worker's lane is registered for its attempt, the consults `horizon
// mcp` appends to that attempt's ledger come back on the session's output,
// and their cost is added to the session's usage, the same however often
// a retry reads the ledger.
func TestConsultsJoinTheWorkerSession(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	in := SessionInput{RunID: "run-1", Feature: "f1", Attempt: 2, Role: horizon.RoleWorker, Lane: t.TempDir()}
	require.NoError(t, a.registerConsults(in))
	reg, err := consult.Lookup(a.Home, in.Lane)
	require.NoError(t, err)
	require.Equal(t, consult.Registration{RunID: "run-1", Feature: "f1", Attempt: 2, Lane: in.Lane, Ledger: a.consultLedger(in)}, reg)

	none := SessionOutput{Usage: horizon.Usage{Input: 10, Cost: 0.5}}
	require.NoError(t, a.addConsults(in, &none))
	require.Empty(t, none.Consults)
	require.Equal(t, 0.5, none.Usage.Cost, "no consult, no change")

	require.NoError(t, consult.Append(reg.Ledger, horizon.Consult{ID: "call_1", Question: "q", Answer: "a", Usage: horizon.Usage{Input: 100, Output: 20, Cost: 0.25}}))
	for range 2 {
		out := SessionOutput{Usage: horizon.Usage{Input: 10, Cost: 0.5}}
		require.NoError(t, a.addConsults(in, &out))
		require.Len(t, out.Consults, 1)
		require.Equal(t, "call_1", out.Consults[0].ID)
		require.Equal(t, 0.75, out.Usage.Cost)
		require.Equal(t, int64(110), out.Usage.Input)
	}

	other := in
	other.Attempt = 3
	out := SessionOutput{}
	require.NoError(t, a.addConsults(other, &out))
	require.Empty(t, out.Consults, "another attempt has its own ledger")
}
