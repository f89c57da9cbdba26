package gate

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is. The concrete errors returned by
// Discover are *NoGateError and *NotRunnableError, which carry the details.
var (
	// ErrNoGate: the directory has no gate script and no detectable test
	// command.
	ErrNoGate = errors.New("no gate")
	// ErrGateNotRunnable: a gate script exists but cannot be executed (it is
	// a directory, not a regular file, or lacks the execute bit).
	ErrGateNotRunnable = errors.New("gate not runnable")
)

// NoGateError is returned by Discover when nothing in Dir can serve as a gate.
// Looked lists every script path and marker file that was checked.
type NoGateError struct {
	Dir    string
	Looked []string
}

func (e *NoGateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no gate in %s: looked for %s", e.Dir, strings.Join(e.Looked, ", "))
	b.WriteString("; add one: create an executable .horizon/verify.sh that runs the repository's checks and exits 0 only when they pass, e.g.\n")
	b.WriteString("  mkdir -p .horizon && printf '#!/bin/sh\\nset -eu\\n# your lint, build and test commands here\\n' > .horizon/verify.sh && chmod +x .horizon/verify.sh")
	return b.String()
}

// Is makes errors.Is(err, ErrNoGate) true.
func (e *NoGateError) Is(target error) bool { return target == ErrNoGate }

// NotRunnableError is returned by Discover when a gate script exists but
// cannot be executed. Fix says what to do about it.
type NotRunnableError struct {
	Path   string
	Reason string
	Fix    string
}

func (e *NotRunnableError) Error() string {
	msg := fmt.Sprintf("gate %s is not runnable: %s", e.Path, e.Reason)
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// Is makes errors.Is(err, ErrGateNotRunnable) true.
func (e *NotRunnableError) Is(target error) bool { return target == ErrGateNotRunnable }
