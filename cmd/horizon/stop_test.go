package main

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/daemon"
)

// helperHome, set in a child test process, makes TestHelperDaemon a
// stand-in daemon for that home.
const helperHome = "HORIZON_CMD_TEST_DAEMON_HOME"

// TestHelperDaemon is no test of its own: run as a child process by
// TestStopWithoutPIDFile, it holds the home's lock like a daemon, publishes
// server.json, loses server.pid and waits for SIGTERM.
func TestHelperDaemon(t *testing.T) {
	home := os.Getenv(helperHome)
	if home == "" {
		t.Skip("a helper process for TestStopWithoutPIDFile")
	}
	p := daemon.Paths{Home: home}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	l, err := daemon.Acquire(p)
	require.NoError(t, err)
	require.NoError(t, os.Remove(p.PID()))
	require.NoError(t, daemon.WriteInfo(p, daemon.Info{PID: os.Getpid(), Embedded: true, StartedAt: time.Now()}))
	select {
	case <-sig:
	case <-time.After(time.Minute):
	}
	l.Release()
}

// A daemon whose server.pid is gone is still found, through server.json,
// and stopped.
func TestStopWithoutPIDFile(t *testing.T) {
	home := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestHelperDaemon$")
	child.Env = append(os.Environ(), helperHome+"="+home)
	require.NoError(t, child.Start())
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	p := daemon.Paths{Home: home}
	require.Eventually(t, func() bool {
		_, running := daemon.Running(p)
		_, err := daemon.ReadInfo(p)
		return running && err == nil
	}, 20*time.Second, 50*time.Millisecond)
	_, err := os.Stat(p.PID())
	require.True(t, os.IsNotExist(err), "server.pid is gone")

	t.Setenv("HORIZON_HOME", home)
	code, out, errOut := runCLI(t, "stop", "--timeout", "20s")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "horizon server (pid "+strconv.Itoa(child.Process.Pid)+") stopped\n", out)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the stand-in daemon did not exit")
	}
}

// A bad configuration does not lock a person out: stop and version work,
// with a warning; every other command refuses it.
func TestBadConfigStopAndVersion(t *testing.T) {
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "horizon"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "horizon", "config.yaml"), []byte("temporl:\n  port: 1\n"), 0o600))
	t.Setenv("XDG_CONFIG_HOME", xdg)
	home := t.TempDir()
	t.Setenv("HORIZON_HOME", home)
	tests := []struct {
		args    []string
		code    int
		out     string
		warning bool
	}{
		{[]string{"version"}, ExitOK, "horizon ", true},
		{[]string{"stop"}, ExitOK, "no horizon server is running", true},
		{[]string{"status"}, ExitUsage, "", false},
		{[]string{"list"}, ExitUsage, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, errOut)
			require.Contains(t, out, tt.out)
			require.Contains(t, errOut, "unknown key(s) temporl.port")
			if tt.warning {
				require.Contains(t, errOut, "horizon: warning: config:")
				require.Contains(t, errOut, "goes on with the default settings, home "+home)
			}
		})
	}
}
