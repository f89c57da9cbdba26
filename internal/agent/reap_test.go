package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

func TestStartServerReportsEarlyExit(t *testing.T) {
	dir := t.TempDir()
	fakeBin := filepath.Join(dir, "opencode")
	require.NoError(t, os.WriteFile(fakeBin, []byte("#!/bin/sh\necho 'boom: cannot open database' >&2\nexit 3\n"), 0o755))
	_, err := StartServer(context.Background(), ServerOptions{Bin: fakeBin, LogPath: filepath.Join(dir, "oc.log"), Logger: zerolog.Nop()})
	var ee *earlyExitError
	require.ErrorAs(t, err, &ee)
	require.Contains(t, err.Error(), "boom: cannot open database")
	require.Contains(t, err.Error(), "exit status 3")
}

func TestReapOrphansSparesOthers(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pidFile := filepath.Join(t.TempDir(), "pids")
	lines := fmt.Sprintf("%d %d\n999999999 999999999\nnot a line\n", sleeper.Process.Pid, sleeper.Process.Pid)
	require.NoError(t, os.WriteFile(pidFile, []byte(lines), 0o644))
	n, err := ReapOrphans(pidFile, zerolog.Nop())
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, sleeper.Process.Signal(syscall.Signal(0)), "a process that is not opencode is left alone")
	b, _ := os.ReadFile(pidFile)
	require.Empty(t, b)
	n, err = ReapOrphans(filepath.Join(t.TempDir(), "missing"), zerolog.Nop())
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestStartServerTimesOutAndKills(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "opencode")
	pidOut := filepath.Join(dir, "script.pid")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s\necho 'still starting'\nexec sleep 30\n", pidOut)
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	_, err := StartServer(context.Background(), ServerOptions{Bin: bin, StartTimeout: 500 * time.Millisecond, StopTimeout: time.Second, Logger: zerolog.Nop()})
	require.ErrorContains(t, err, "no answer on http://127.0.0.1:")
	require.ErrorContains(t, err, "still starting", "the output tail is in the error")
	b, err := os.ReadFile(pidOut)
	require.NoError(t, err)
	var pid int
	_, err = fmt.Sscanf(string(b), "%d", &pid)
	require.NoError(t, err)
	require.Empty(t, groupMembers(pid), "the half-started server is killed")
}
