package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/app/engine"
)

func (a *app) paths() daemon.Paths { return daemon.Paths{Home: a.cfg.Home} }

// connector reaches the engine; tests hand in one of their own.
type connector func(ctx context.Context, autostart bool) (client.Client, error)

// withEngine dials the engine, calls fn with the core over it and closes
// the connection. Commands reach horizon only through the core's verbs.
func (a *app) withEngine(ctx context.Context, autostart bool, fn func(h *core.App) error) error {
	connect := a.dial
	if a.connect != nil {
		connect = a.connect
	}
	c, err := connect(ctx, autostart)
	if err != nil {
		return err
	}
	h := core.New(c, a.cfg)
	defer h.Close()
	return fn(h)
}

// withRun is how a command reaches one run: it dials the engine (starting
// the daemon first when autostart), resolves the run (id, or the newest run
// when id is empty) and calls fn. A run the engine does not know, or one
// that has ended when op needs it running, is bad input, said the same way
// by every command (runError).
func (a *app) withRun(ctx context.Context, op, id string, autostart bool, fn func(h *core.App, id string) error) error {
	return a.withEngine(ctx, autostart, func(h *core.App) error {
		if id == "" {
			latest, err := h.Latest(ctx)
			if err != nil {
				return err
			}
			id = latest
		}
		return runError(op, id, fn(h, id))
	})
}

// runError turns the engine's "not found" for run id into the usual bad
// input: no such run, or (for an update or signal) a run that has ended.
func runError(op, id string, err error) error {
	var ended *core.EndedError
	if errors.As(err, &ended) {
		return runEnded(op, id)
	}
	var cnf *core.NotFoundError
	if errors.As(err, &cnf) {
		return usageError{cnf}
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return err
	}
	if strings.Contains(nf.Error(), "completed") {
		return runEnded(op, id)
	}
	return usageError{&core.NotFoundError{ID: id}}
}

// runEnded refuses op on a run that has ended.
func runEnded(op, id string) error {
	return usagef("%s %s: the run has ended; `horizon status %s` shows how", op, id, id)
}

// ping dials the engine within timeout and hangs up: doctor's check that
// it answers.
func (a *app) ping(ctx context.Context, timeout time.Duration) error {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := engine.Dial(dctx, a.cfg, a.log)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// dial connects to the engine. With autostart and the embedded engine, it
// first starts the daemon when none is running, and waits until it answers.
func (a *app) dial(ctx context.Context, autostart bool) (client.Client, error) {
	if a.cfg.Embedded() {
		// A home that cannot hold the daemon's files is said as such, not
		// as "no server is running; `horizon resume` starts it".
		if err := checkHome(a.cfg.Home); err != nil {
			return nil, err
		}
		if _, running := daemon.Running(a.paths()); !running && a.starting == 0 {
			if !autostart {
				return nil, exitErr{code: ExitEnvironment, msg: "no horizon server is running for " + a.cfg.Home + "; `horizon resume` starts it (or run `horizon server` in a terminal)"}
			}
			pid, err := a.spawnDaemon()
			if err != nil {
				return nil, err
			}
			a.starting = pid
		}
		// A daemon this command started (here or in startEarly) is
		// waited for until it takes work.
		if a.starting > 0 {
			if err := a.waitDaemon(ctx, a.starting); err != nil {
				return nil, err
			}
			a.starting = 0
		}
		return engine.DialWait(ctx, a.cfg, a.log, 90*time.Second)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return engine.Dial(dctx, a.cfg, a.log)
}

// spawn starts the daemon process; a variable so that this package's
// tests, whose executable is the test binary, never start it.
var spawn = daemon.Spawn

// spawnDaemon starts the daemon in the background and returns its pid;
// waitDaemon waits until it takes work.
func (a *app) spawnDaemon() (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find the horizon executable: %w", err)
	}
	// The daemon resolves its own config without a repository: hand it the
	// values this command resolved, so both agree on home and ports.
	env := append(os.Environ(),
		"HORIZON_HOME="+a.cfg.Home,
		"HORIZON_TEMPORAL_PORT="+strconv.Itoa(a.cfg.Temporal.Port),
		"HORIZON_UI_PORT="+strconv.Itoa(a.cfg.UI.Port),
		"HORIZON_UI_ENABLED="+strconv.FormatBool(a.cfg.UI.Enabled),
		"HORIZON_TEMPORAL_NAMESPACE="+a.cfg.Temporal.Namespace,
		"HORIZON_TEMPORAL_TASK_QUEUE="+a.cfg.Temporal.TaskQueue,
	)
	// A file a daemon that died hard left would pass for the new one's.
	_ = os.Remove(a.paths().OpenCodeEndpoint())
	pid, err := spawn(a.paths(), exe, env)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(a.errOut, "starting the horizon server (engine on %s, logs in %s)…\n", a.cfg.FrontendAddress(), a.paths().Logs())
	return pid, nil
}

// waitDaemon waits until the daemon pid runs and its worker polls
// (server.json is written then), not just until the engine answers.
func (a *app) waitDaemon(ctx context.Context, pid int) error {
	if err := daemon.WaitRunning(ctx, a.paths(), pid, 60*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	if err := daemon.WaitReady(ctx, a.paths(), pid, 90*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	return nil
}

// startEarly is a cold `horizon start`'s StartRequest.BeforeModels: it
// starts the daemon before the model check instead of after it, and
// waits (a minute at most) until the daemon's OpenCode answers or says
// it cannot, so that the check asks it rather than starting OpenCode
// once more. Nothing happens when a daemon runs, the engine is remote,
// or the daemon cannot be started (dial then says why). abandonEarly
// stops it again when the run is refused.
func (a *app) startEarly(ctx context.Context) {
	if !a.cfg.Embedded() || a.connect != nil || a.starting > 0 || checkHome(a.cfg.Home) != nil {
		return
	}
	if _, running := daemon.Running(a.paths()); running {
		return
	}
	pid, err := a.spawnDaemon()
	if err != nil {
		return
	}
	a.starting = pid
	daemon.WaitOpenCode(ctx, a.paths(), pid, time.Minute)
}

// abandonEarly stops the daemon startEarly started, for a run that was
// refused or interrupted before it existed: nothing that stays is
// started for it. It stops it even when ctx has ended (Ctrl-C).
func (a *app) abandonEarly(ctx context.Context) {
	pid := a.starting
	if pid == 0 {
		return
	}
	a.starting = 0
	ctx = context.WithoutCancel(ctx)
	if err := daemon.WaitRunning(ctx, a.paths(), pid, 60*time.Second); err != nil {
		return // it exited, or never took the lock: nothing to stop
	}
	if _, err := daemon.Stop(a.paths(), 30*time.Second); err != nil {
		a.log.Warn().Err(err).Msg("stop the horizon server started for a refused run")
	}
}

func tailOf(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return "\n--- " + path + " (tail) ---\n" + string(buf)
}
