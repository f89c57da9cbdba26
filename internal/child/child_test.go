package child

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as a daemon: with CHILD_TEST_DAEMON set it
// tracks children under that directory, starts the command in
// CHILD_TEST_CMD, prints the group ID and waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CHILD_TEST_DAEMON"); dir != "" {
		if err := Track(dir); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		p, err := Start(exec.Command("/bin/sh", "-c", os.Getenv("CHILD_TEST_CMD")))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pgid", p.PGID())
		select {}
	}
	os.Exit(m.Run())
}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal and /proc are Linux only")
	}
}

// alive reports whether pid runs (zombies have exited).
func alive(pid int) bool {
	_, ok := startTime(pid)
	return ok
}

func members(t *testing.T, pgid int) []int {
	t.Helper()
	m, err := groupMembers(pgid)
	require.NoError(t, err)
	return m
}

// waitGone polls until group pgid has no live member.
func waitGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(members(t, pgid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("group %d still has live members %v after %s", pgid, members(t, pgid), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A daemon killed with SIGKILL takes its children with it: the leader
// (parent-death signal) and what the leader started (the guard kills the
// group). The record stays for Reap.
func TestChildrenDieWithTheDaemon(t *testing.T) {
	needLinux(t)
	dir := t.TempDir()
	daemon := exec.Command(os.Args[0], "-test.run=^$")
	daemon.Env = append(os.Environ(), "CHILD_TEST_DAEMON="+dir, "CHILD_TEST_CMD=sleep 60 & sleep 60")
	out, err := daemon.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, daemon.Start())
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	pgid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pgid ")))
	require.NoError(t, err, line)

	// The leader, its two sleeps and the guard.
	deadline := time.Now().Add(5 * time.Second)
	for len(members(t, pgid)) < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Len(t, members(t, pgid), 4, "leader, its children and the guard run in the group")
	recs, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, strconv.Itoa(pgid), recs[0].Name())

	require.NoError(t, daemon.Process.Signal(syscall.SIGKILL))
	_ = daemon.Wait()
	waitGone(t, pgid, 5*time.Second)
	_, err = os.Stat(filepath.Join(dir, strconv.Itoa(pgid)))
	require.NoError(t, err, "the record outlives a hard crash, for the next daemon's Reap")
}

// Go ends the OS thread of a goroutine that exits while locked to it; if
// that thread had forked a child with a parent-death signal, the child
// would die with it. Start keeps the forking thread to itself until Done.
func TestChildSurvivesThreadExits(t *testing.T) {
	needLinux(t)
	cmd := exec.Command("sleep", "30")
	p, err := Start(cmd)
	require.NoError(t, err)
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		p.Done()
	}()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	require.True(t, alive(cmd.Process.Pid), "the child outlives threads the runtime ended")
}

// Run waits for the command and then ends what it left in its group; the
// record is gone once it returns.
func TestRunEndsLeftoversAndForgets(t *testing.T) {
	needLinux(t)
	dir := t.TempDir()
	require.NoError(t, Track(dir))
	t.Cleanup(Untrack)
	var out strings.Builder
	// A background child holding stdout would keep Wait waiting; the
	// leftover here writes nowhere.
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	cmd.Stdout = &out
	require.NoError(t, Run(cmd))
	left, err := strconv.Atoi(strings.TrimSpace(out.String()))
	require.NoError(t, err, out.String())
	deadline := time.Now().Add(3 * time.Second)
	for alive(left) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.False(t, alive(left), "the leftover sleep %d was killed with the group", left)
	recs, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, recs)
}

// A command made with CommandContext is cancelled as a group.
func TestRunCancelKillsTheGroup(t *testing.T) {
	needLinux(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!; wait")
	cmd.Stdout = &out
	p, err := Start(cmd)
	require.NoError(t, err)
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	require.Error(t, cmd.Wait())
	p.Done()
	waitGone(t, p.PGID(), 3*time.Second)
}

// Reap kills a recorded group that still runs, also when its leader is
// gone, leaves a stranger that reused a recorded pid alone, and removes
// every record.
func TestReap(t *testing.T) {
	needLinux(t)
	dir := t.TempDir()
	startGroup := func(script string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		go func() { _ = cmd.Wait() }()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		return cmd
	}
	record := func(pid, pgid int, start uint64) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)), fmt.Appendf(nil, "%d %d %d\ntest\n", pid, pgid, start), 0o600))
	}

	ours := startGroup("sleep 30")
	st, ok := startTime(ours.Process.Pid)
	require.True(t, ok)
	record(ours.Process.Pid, ours.Process.Pid, st)

	// Leader gone, a member left: the group is still ours.
	var out strings.Builder
	orphaned := exec.Command("/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
	orphaned.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	orphaned.Stdout = &out
	require.NoError(t, orphaned.Run())
	t.Cleanup(func() { _ = syscall.Kill(-orphaned.Process.Pid, syscall.SIGKILL) })
	record(orphaned.Process.Pid, orphaned.Process.Pid, 1)
	require.NotEmpty(t, members(t, orphaned.Process.Pid))

	stranger := startGroup("sleep 30")
	record(stranger.Process.Pid, stranger.Process.Pid, 1) // not its start time

	require.NoError(t, os.WriteFile(filepath.Join(dir, "garbage"), []byte("not a record"), 0o600))

	n, err := Reap(dir, zerolog.Nop())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Empty(t, members(t, ours.Process.Pid))
	require.Empty(t, members(t, orphaned.Process.Pid))
	require.True(t, alive(stranger.Process.Pid), "a reused pid is not ours")
	recs, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, recs)

	n, err = Reap(filepath.Join(dir, "missing"), zerolog.Nop())
	require.NoError(t, err)
	require.Zero(t, n)
}
