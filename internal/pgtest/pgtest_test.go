package pgtest

import (
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A started cluster accepts connections on its port and is gone, files
// and all, once stopped.
func TestStartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	c := Start(t)
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)))
	require.NoError(t, err)
	conn.Close()
	out, err := c.run("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", c.User, "-d", "postgres", "-Atc", "select 1")
	require.NoError(t, err, string(out))
	require.Equal(t, "1\n", string(out))
	data := c.data
	c.Stop()
	_, err = os.Stat(data)
	require.True(t, os.IsNotExist(err), "data directory %s removed", data)
	_, err = net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)))
	require.Error(t, err, "server stopped")
}
