package engine

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The busy-port message names the variable that moves that port.
func TestPortInUseNamesItsSetting(t *testing.T) {
	inUse := errors.New("address already in use")
	for _, tt := range []struct {
		err  *PortInUseError
		want string
	}{
		{&PortInUseError{What: "horizon web", Addr: "127.0.0.1:8234", Err: inUse, Setting: "HORIZON_WEB_PORT"}, "(HORIZON_WEB_PORT)"},
		{&PortInUseError{What: "Web UI", Addr: "127.0.0.1:8233", Err: inUse, Setting: "HORIZON_UI_PORT"}, "(HORIZON_UI_PORT)"},
		{&PortInUseError{What: "engine", Addr: "127.0.0.1:7233", Err: inUse}, "(HORIZON_TEMPORAL_PORT, HORIZON_UI_PORT)"},
	} {
		require.Contains(t, tt.err.Error(), tt.want)
		require.Contains(t, tt.err.Error(), tt.err.Addr+" is in use")
	}
}
