package procnet

import (
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:0035": "[::1]:53",
	} {
		got, err := parseAddr(in)
		require.NoError(t, err, in)
		require.Equal(t, netip.MustParseAddrPort(want), got, in)
	}
	for _, bad := range []string{"", "7F:1", "0100007F", "0100007F:XYZ", "zz00007F:0050"} {
		_, err := parseAddr(bad)
		require.Error(t, err, bad)
	}
}

func TestListeningFindsOwnListener(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	want := netip.MustParseAddrPort(ln.Addr().String())
	got, err := Listening(os.Getpid())
	require.NoError(t, err)
	require.Contains(t, got, Listener{PID: os.Getpid(), Addr: want})
	ln.Close()
	got, err = Listening(os.Getpid())
	require.NoError(t, err)
	require.NotContains(t, got, Listener{PID: os.Getpid(), Addr: want})

	tree, err := Tree(os.Getpid())
	require.NoError(t, err)
	require.Equal(t, os.Getpid(), tree[0])
}
