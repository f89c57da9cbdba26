package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/daemon"
)

type stopOptions struct {
	app     *app
	timeout time.Duration
}

func newStopCmd(a *app, runF func(context.Context, *stopOptions) error) *cobra.Command {
	o := &stopOptions{app: a}
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon cleanly and wait until it has stopped",
		Long: `Ask the daemon of $HORIZON_HOME to stop (SIGTERM) and wait. Runs are not
cancelled: they continue at the next ` + "`horizon resume`" + ` or ` + "`horizon start`" + `.

stop works when the configuration does not load: it warns, and looks in
the home it can still read (HORIZON_HOME, a home: key, else the default).`,
		Args:        noArgs(),
		Annotations: map[string]string{annotationConfig: configOptional},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return stopRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "how long to wait")
	return cmd
}

func stopRun(_ context.Context, o *stopOptions) error {
	a := o.app
	pid, err := stopDaemon(a.paths(), o.timeout)
	if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(a.out, "no horizon server is running")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "horizon server (pid %d) stopped\n", pid)
	return nil
}

// stopDaemon asks the daemon that holds the home's lock to stop (SIGTERM)
// and waits until the lock is free. Its pid comes from server.pid or, when
// that is gone, from server.json, which a ready daemon also writes.
func stopDaemon(p daemon.Paths, timeout time.Duration) (int, error) {
	pid, running := daemon.Running(p)
	if !running {
		return 0, daemon.ErrNotRunning
	}
	if pid <= 0 {
		if info, err := daemon.ReadInfo(p); err == nil {
			pid = info.PID
		}
	}
	if pid <= 0 {
		return 0, exitErr{code: ExitEnvironment, msg: fmt.Sprintf("a horizon server holds %s, but neither %s nor %s names its pid; find it with `fuser %s` and stop it with kill", p.Lock(), p.PID(), p.Info(), p.Lock())}
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return pid, fmt.Errorf("stop the horizon server: signal pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, running := daemon.Running(p); !running {
			return pid, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return pid, fmt.Errorf("the horizon server (pid %d) did not stop within %s; `kill -9 %d` is safe: runs continue after `horizon resume`", pid, timeout, pid)
}
