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
		if _, running := daemon.Running(a.paths()); !running {
			if !autostart {
				return nil, exitErr{code: ExitEnvironment, msg: "no horizon server is running for " + a.cfg.Home + "; `horizon resume` starts it (or run `horizon server` in a terminal)"}
			}
			if err := a.spawnDaemon(ctx); err != nil {
				return nil, err
			}
		}
		return engine.DialWait(ctx, a.cfg, a.log, 90*time.Second)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return engine.Dial(dctx, a.cfg, a.log)
}
func (a *app) spawnDaemon(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the horizon executable: %w", err)
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
	fmt.Fprintf(a.errOut, "starting the horizon server (engine on %s, logs in %s)…\n", a.cfg.FrontendAddress(), a.paths().Logs())
	pid, err := daemon.Spawn(a.paths(), exe, env)
	if err != nil {
		return err
	}
	if err := daemon.WaitRunning(ctx, a.paths(), pid, 60*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	// Ready means the worker polls (server.json is written then), not just
	// that the engine answers.
	if err := daemon.WaitReady(ctx, a.paths(), pid, 90*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	return nil
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
