package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
)

// Exit codes, mapped from errors in exactly one place (exitCode).
const (
	ExitOK          = 0   // the run's change was accepted, or the command did what it was asked
	ExitRunEnded    = 1   // the run ended otherwise: failed, blocked or cancelled; or an unexpected error
	ExitUsage       = 2   // bad usage or bad input: flags, config, repo, gate, model
	ExitEnvironment = 3   // something outside the input is missing or busy: a tool, the engine, a port, the daemon lock
	ExitInterrupted = 130 // Ctrl-C: stopped following (the run goes on)
)

// usageError marks bad usage or input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitErr carries a chosen exit code with or without a message.
type exitErr struct {
	code int
	msg  string
}

func (e exitErr) Error() string { return e.msg }

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee exitErr
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	var ie *core.InputError
	var ce *config.Error
	var de *repo.DirtyError
	var bid *core.BadIDError
	var sd *core.SupervisorDiffersError
	switch {
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &ce), errors.As(err, &de), errors.As(err, &bid), errors.As(err, &sd),
		errors.Is(err, repo.ErrNotGit), errors.Is(err, repo.ErrNoCommits),
		errors.Is(err, gate.ErrNoGate), errors.Is(err, gate.ErrGateNotRunnable),
		errors.Is(err, daemon.ErrNoRemote):
		return ExitUsage
	}
	var ar *daemon.AlreadyRunningError
	var un *config.UnreachableError
	var pu *config.PortInUseError
	var he *homeError
	var np *daemon.NoPIDError
	var env *core.EnvironmentError
	switch {
	case errors.As(err, &env), core.EngineUnavailable(err):
		return ExitEnvironment
	case errors.As(err, &ar), errors.As(err, &un), errors.As(err, &pu), errors.As(err, &he), errors.As(err, &np),
		errors.Is(err, tools.ErrNotFound), errors.Is(err, daemon.ErrNotRunning):
		return ExitEnvironment
	}
	return ExitRunEnded
}

func printErr(w io.Writer, err error) {
	var ee exitErr
	if errors.As(err, &ee) && ee.msg == "" {
		return
	}
	fmt.Fprintln(w, "horizon:", err)
}
