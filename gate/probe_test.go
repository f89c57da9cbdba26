package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitPID reads the pid a fake interpreter wrote to path.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "the probe started")
	return pid
}

// gone reports whether pid has exited (no such process, or a zombie
// waiting for init to reap it).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// The virtualenv probe runs in its own process group, and a probe that
// hangs is killed with everything it started once its timeout passes, so
// discovery cannot hang or leave processes behind.
func TestPytestProbe(t *testing.T) {
	old := pytestProbeTimeout
	pytestProbeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { pytestProbeTimeout = old })

	tests := []struct {
		name   string
		script string // the fake interpreter; PIDFILE is where it writes a pid to watch
		want   bool
		ownPG  bool // it checks it leads its own process group
	}{
		{"imports pytest, in its own group", "#!/bin/sh\nset -- $(cut -d' ' -f5 /proc/$$/stat)\n[ \"$1\" = $$ ] || exit 9\nexit 0\n", true, true},
		{"cannot import pytest", "#!/bin/sh\nexit 1\n", false, false},
		{"hangs, with a child of its own", "#!/bin/sh\nsleep 300 &\necho $! > PIDFILE\nwait\n", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			py := writeFile(t, dir, ".venv/bin/python", strings.ReplaceAll(tt.script, "PIDFILE", pidFile), 0o755)
			start := time.Now()
			require.Equal(t, tt.want, canImportPytest(py))
			require.Less(t, time.Since(start), pytestProbeTimeout+probeWaitDelay+2*time.Second, "bounded by the timeout")
			if strings.Contains(tt.script, "PIDFILE") {
				pid := waitPID(t, pidFile)
				require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the probe's child died with its group")
			}
		})
	}
}
