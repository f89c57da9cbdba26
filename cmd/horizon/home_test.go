package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckHome(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	readOnly := filepath.Join(tmp, "ro")
	require.NoError(t, os.Mkdir(readOnly, 0o500))
	tests := []struct {
		name     string
		home     string
		want     string // "" : usable
		needUser bool   // root may write anywhere
	}{
		{"existing directory", tmp, "", false},
		{"to be created", filepath.Join(tmp, "a", "b"), "", false},
		{"a file", file, "is a file, not a directory", false},
		{"under a file", filepath.Join(file, "home"), "cannot be created: " + file + " is a file", false},
		{"read-only", readOnly, "is not writable", true},
		{"under a read-only directory", filepath.Join(readOnly, "home"), "cannot be created: " + readOnly + " is not writable", true},
		{"under /proc", "/proc/horizon-home", "is on /proc (procfs), where no file can be made", false},
		{"under /sys", "/sys/horizon-home", "is on sysfs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needUser && os.Geteuid() == 0 {
				t.Skip("root may write to a read-only directory")
			}
			err := checkHome(tt.home)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "HORIZON_HOME")
			require.Equal(t, ExitEnvironment, exitCode(err))
		})
	}
}

// A home that cannot hold horizon's files is the environment's problem
// (exit 3) for every command that needs it, and none of them suggests
// `horizon resume`, which would fail the same way.
func TestUnusableHome(t *testing.T) {
	file := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	t.Setenv("HORIZON_HOME", file)
	for _, args := range [][]string{{"status"}, {"list"}, {"resume"}, {"cancel", "run-1"}, {"server"}, {"worker"}} {
		t.Run(args[0], func(t *testing.T) {
			if args[0] == "worker" {
				t.Setenv("HORIZON_TEMPORAL_ADDRESS", "127.0.0.1:1")
			}
			code, _, errOut := runCLI(t, args...)
			require.Equal(t, ExitEnvironment, code, errOut)
			require.Contains(t, errOut, file+" is a file")
			require.NotContains(t, errOut, "horizon resume")
		})
	}
}
