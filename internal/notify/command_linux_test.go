package notify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/config"
)

// readPID waits for the pid a command wrote to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "the command started")
	return pid
}

// A notify command is a child of the daemon like any other
// (internal/child): it does not outlive the daemon, even one killed with
// SIGKILL, nor leave a background child behind once it has exited. The
// daemon is a copy of this test binary, killed while the command runs.
func TestCommandDoesNotOutliveTheDaemon(t *testing.T) {
	if line := os.Getenv("HORIZON_TEST_NOTIFY_COMMAND"); line != "" {
		s, err := New(cfg(func(c *config.Notify) { c.Command, c.Timeout, c.Attempts = line, time.Minute, 1 }))
		require.NoError(t, err)
		_, _ = s.Send(context.Background(), NewEvent(Test, "", "", 0, "test"))
		time.Sleep(time.Minute) // the daemon lives on until killed
		return
	}
	tests := []struct {
		name    string
		command string // PIDFILE: where it writes the pid to watch
	}{
		{"still running", `echo $$ > 'PIDFILE'; exec sleep 300`},
		{"exited, leaving a background child", `sleep 300 & echo $! > 'PIDFILE'; exit 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			daemon := exec.Command(os.Args[0], "-test.run=^TestCommandDoesNotOutliveTheDaemon$")
			daemon.Env = append(os.Environ(), "HORIZON_TEST_NOTIFY_COMMAND="+strings.ReplaceAll(tt.command, "PIDFILE", pidFile))
			require.NoError(t, daemon.Start())
			t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
			pid := readPID(t, pidFile)

			require.NoError(t, daemon.Process.Kill())
			_ = daemon.Wait()
			require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "process %d outlived the daemon", pid)
		})
	}
}
