package daemon

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A home's host id is made once and kept (a restarted daemon serves the
// same host queue, where its OpenCode store's sessions are); another home
// gets its own; the file is the owner's alone.
func TestHostIDBelongsToTheHome(t *testing.T) {
	p := Paths{Home: t.TempDir()}
	first, err := hostID(p)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(first, hostname()+"-"), first)
	again, err := hostID(p)
	require.NoError(t, err)
	require.Equal(t, first, again, "the same home, the same id")
	st, err := os.Stat(p.HostID())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	other, err := hostID(Paths{Home: t.TempDir()})
	require.NoError(t, err)
	require.NotEqual(t, first, other, "another home, another id")
}
