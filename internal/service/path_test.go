package service

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPath(t *testing.T) {
	tests := []struct {
		name, home, xdg string
		p               Platform
		want            string // "" : an ErrEnvironment
	}{
		{"systemd", "/home/ada", "", Systemd, "/home/ada/.config/systemd/user/horizon.service"},
		{"systemd with XDG_CONFIG_HOME", "/home/ada", "/cfg", Systemd, "/cfg/systemd/user/horizon.service"},
		{"a relative XDG_CONFIG_HOME is ignored", "/home/ada", "cfg", Systemd, "/home/ada/.config/systemd/user/horizon.service"},
		{"launchd", "/Users/ada", "", Launchd, "/Users/ada/Library/LaunchAgents/local.horizon.plist"},
		{"a relative HOME", "ada", "", Systemd, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", tt.home)
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			got, err := Path(tt.p, "horizon")
			if tt.want == "" {
				require.ErrorIs(t, err, ErrEnvironment)
				require.ErrorContains(t, err, "relative path")
				return
			}
			require.NoError(t, err)
			require.Equal(t, filepath.FromSlash(tt.want), got)
		})
	}
}
