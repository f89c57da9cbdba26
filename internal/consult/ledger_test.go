package consult

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// A consult is in the ledger once per tool call, whoever appends it again
// (a retried call), and Read skips a torn last line.
func TestLedgerOncePerCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consults", "f1-attempt-1.jsonl")
	c := horizon.Consult{ID: "call_1", Session: "ses_1", Model: "fake/m", Question: "q", Answer: "a", Usage: horizon.Usage{Cost: 0.2}}
	require.NoError(t, Append(path, c))
	require.NoError(t, Append(path, c))
	c2 := c
	c2.ID = "call_2"
	require.NoError(t, Append(path, c2))
	f, err := openAppend(path)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"call_3","ques`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	got, err := Read(path)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "call_1", got[0].ID)
	require.Equal(t, "call_2", got[1].ID)
	require.InDelta(t, 0.4, horizon.ConsultUsage(got).Cost, 1e-9)

	none, err := Read(filepath.Join(t.TempDir(), "missing.jsonl"))
	require.NoError(t, err)
	require.Empty(t, none)
}

// A lane's registration is replaced by the next attempt's.
func TestRegisterReplacesEarlierAttempt(t *testing.T) {
	home, lane := t.TempDir(), t.TempDir()
	_, err := Lookup(home, lane)
	require.ErrorIs(t, err, ErrNotRegistered)
	for n := 1; n <= 2; n++ {
		require.NoError(t, Register(home, Registration{RunID: "run-1", Feature: "f1", Attempt: n, Lane: lane, Ledger: LedgerPath(home, "f1", n)}))
	}
	r, err := Lookup(home, lane+"/")
	require.NoError(t, err, "the lane is found by its clean path")
	link := filepath.Join(t.TempDir(), "lane-link")
	require.NoError(t, os.Symlink(lane, link))
	r, err = Lookup(home, link)
	require.NoError(t, err, "and through a symlink")
	require.Equal(t, 2, r.Attempt)
	require.Equal(t, filepath.Join(home, "consults", "f1-attempt-2.jsonl"), r.Ledger)
	require.ErrorContains(t, Register(home, Registration{Lane: lane}), "required")
}

func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
}
