package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Spawn starts `<exe> server` detached from the caller's session and
// terminal, its output appended to logs/server.out. env is the daemon's
// whole environment.
func Spawn(p Paths, exe string, env []string) (int, error) {
	if err := os.MkdirAll(p.Logs(), 0o700); err != nil {
		return 0, fmt.Errorf("daemon: %w", err)
	}
	out, err := os.OpenFile(p.Stdout(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("daemon: open %s: %w", p.Stdout(), err)
	}
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, fmt.Errorf("daemon: %w", err)
	}
	defer devnull.Close()
	cmd := exec.Command(exe, "server")
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	// A new session: Ctrl-C in the terminal that started it, or that
	// terminal closing, does not reach the daemon.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("daemon: start %s server: %w", exe, err)
	}
	pid := cmd.Process.Pid
	// Reap it if it exits while we are still here, so no zombie lingers.
	go func() { _ = cmd.Wait() }()
	return pid, nil
}

// WaitRunning waits until a daemon holds the lock, or the spawned pid died.
func WaitRunning(ctx context.Context, p Paths, pid int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if _, ok := Running(p); ok {
			return nil
		}
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			return fmt.Errorf("the horizon server exited during start; see %s", p.Stdout())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the horizon server did not start within %s; see %s", timeout, p.Stdout())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitReady waits until the daemon pid has published server.json, which it
// does once its worker polls, or until it died. A pid that died because
// another daemon of the home took the lock first (two commands started
// one at the same moment) is not a failure: that daemon is waited for.
func WaitReady(ctx context.Context, p Paths, pid int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if info, err := ReadInfo(p); err == nil && (pid <= 0 || info.PID == pid) {
			return nil
		}
		if pid > 0 && syscall.Kill(pid, 0) != nil {
			if other, running := Running(p); running && other > 0 && other != pid && syscall.Kill(other, 0) == nil {
				pid = other
				continue
			}
			return fmt.Errorf("the horizon server exited during start; see %s", p.Stdout())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the horizon server did not become ready within %s; see %s", timeout, p.Stdout())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitOpenCode waits until the daemon pid, just started, has said where
// its OpenCode answers, or why it could not start it (the endpoint file),
// or until it exited or timeout passed. Either way the caller goes on:
// agent.ConnectEndpoint says whether a server answers.
func WaitOpenCode(ctx context.Context, p Paths, pid int, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if _, err := os.Stat(p.OpenCodeEndpoint()); err == nil || syscall.Kill(pid, 0) != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(25 * time.Millisecond):
		}
	}
}
