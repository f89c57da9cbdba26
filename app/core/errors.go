package core

import (
	"fmt"

	"github.com/horizon/horizon/horizon"
)

// The verbs' typed errors: each surface says them its own way (the CLI as
// exit 2 with the message, the web API as 404 or 409).

// EndedError says a verb needs a running workflow and this one has ended.
type EndedError struct{ Op, ID string }

func (e *EndedError) Error() string {
	return fmt.Sprintf("%s %s: the run has ended; `horizon status %s` shows how", e.Op, e.ID, e.ID)
}

// RefusedError is a workflow validator's refusal of an update ("not
// waiting for approval"), in the workflow's words.
type RefusedError struct {
	Op, ID string
	Reason string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s %s: %s", e.Op, e.ID, e.Reason) }

// EntryNotFoundError is a refusal because the queue holds no entry with
// the ID; it is a RefusedError too.
type EntryNotFoundError struct{ RefusedError }

func (e *EntryNotFoundError) Unwrap() error { return &e.RefusedError }

// SupervisorDiffersError refuses to start a supervisor that already runs
// with another autonomy: starting leaves a running one as it is.
type SupervisorDiffersError struct {
	Repo           string
	Running, Asked horizon.Autonomy
}

func (e *SupervisorDiffersError) Error() string {
	return fmt.Sprintf("a supervisor already runs for %s with autonomy %s; it is left as it is, not changed to %s: `horizon supervisor stop --repo %s`, then start it again with the autonomy you want",
		e.Repo, e.Running, e.Asked, e.Repo)
}

// SupervisorNotFoundError says no supervisor runs with that ID.
type SupervisorNotFoundError struct{ ID string }

func (e *SupervisorNotFoundError) Error() string {
	return fmt.Sprintf("no supervisor %s runs; `horizon supervisor start` starts one", e.ID)
}

// NoReportError says there is no daily report (of Date, or none at all
// when Date is empty) in Dir.
type NoReportError struct{ Date, Dir string }

func (e *NoReportError) Error() string {
	if e.Date == "" {
		return fmt.Sprintf("no daily report yet in %s; `horizon report --now` makes one", e.Dir)
	}
	return fmt.Sprintf("no daily report of %s in %s", e.Date, e.Dir)
}

// InputError is bad input a person can fix (a flag, a repository, a gate,
// a model name): the CLI says it with exit 2, the web API with 400.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputf is an *InputError with its message.
func inputf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// asInput marks err as bad input; nil stays nil.
func asInput(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}

// EnvironmentError is something outside the input that is missing or does
// not answer (OpenCode, a tool): the CLI says it with exit 3.
type EnvironmentError struct{ Err error }

func (e *EnvironmentError) Error() string { return e.Err.Error() }
func (e *EnvironmentError) Unwrap() error { return e.Err }

// reworded says err in other words and keeps it for errors.As.
type reworded struct {
	msg string
	err error
}

func (w *reworded) Error() string { return w.msg }
func (w *reworded) Unwrap() error { return w.err }
