package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLockIsExclusivePerHome(t *testing.T) {
	p := Paths{Home: t.TempDir()}
	_, running := Running(p)
	require.False(t, running)

	l, err := Acquire(p)
	require.NoError(t, err)
	pid, running := Running(p)
	require.True(t, running)
	require.Equal(t, os.Getpid(), pid)
	b, err := os.ReadFile(p.PID())
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(os.Getpid()), strings.TrimSpace(string(b)))

	_, err = Acquire(p)
	var ar *AlreadyRunningError
	require.True(t, errors.As(err, &ar), "%v", err)
	require.Equal(t, os.Getpid(), ar.PID)
	require.Contains(t, err.Error(), "horizon stop")

	// Another home is independent.
	other, err := Acquire(Paths{Home: t.TempDir()})
	require.NoError(t, err)
	other.Release()

	require.NoError(t, WriteInfo(p, Info{PID: 1, Frontend: "127.0.0.1:1"}))
	info, err := ReadInfo(p)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:1", info.Frontend)

	l.Release()
	_, running = Running(p)
	require.False(t, running)
	_, err = os.Stat(p.PID())
	require.True(t, os.IsNotExist(err), "pid file removed on release")
	_, err = os.Stat(p.Info())
	require.True(t, os.IsNotExist(err), "info file removed on release")

	l2, err := Acquire(p)
	require.NoError(t, err, "the lock is free again")
	l2.Release()
}

func TestStopWithoutDaemon(t *testing.T) {
	_, err := Stop(Paths{Home: t.TempDir()}, 0)
	require.ErrorIs(t, err, ErrNotRunning)
}

// A daemon whose server.pid is gone is still found through server.json;
// with neither file naming it, Stop says how to find it instead of
// signalling a guess.
func TestRunningFallsBackToInfo(t *testing.T) {
	p := Paths{Home: t.TempDir()}
	l, err := Acquire(p)
	require.NoError(t, err)
	defer l.Release()
	require.NoError(t, os.Remove(p.PID()))

	pid, running := Running(p)
	require.True(t, running)
	require.Zero(t, pid, "no file names the pid")
	_, err = Stop(p, time.Second)
	var np *NoPIDError
	require.True(t, errors.As(err, &np), "%v", err)
	require.Contains(t, err.Error(), "fuser "+p.Lock())

	require.NoError(t, WriteInfo(p, Info{PID: os.Getpid()}))
	pid, running = Running(p)
	require.True(t, running)
	require.Equal(t, os.Getpid(), pid)
}

// Two commands that start the home's daemon at the same moment each spawn
// one; the second finds the lock taken and exits. Its command waits for
// the daemon that won instead of saying the start failed; with no daemon
// holding the lock, a dead pid is still a failed start.
func TestWaitReadyFollowsTheDaemonThatWon(t *testing.T) {
	p := Paths{Home: t.TempDir()}
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	dead := gone.Process.Pid

	err := WaitReady(context.Background(), p, dead, 2*time.Second)
	require.ErrorContains(t, err, "exited during start")

	l, err := Acquire(p) // the daemon that won: this process
	require.NoError(t, err)
	defer l.Release()
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = WriteInfo(p, Info{PID: os.Getpid()})
	}()
	require.NoError(t, WaitReady(context.Background(), p, dead, 5*time.Second))
}
