package service

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnsupported: this system has no service manager horizon writes
	// units for.
	ErrUnsupported = errors.New("service: unsupported system")
	// ErrEnvironment: something around horizon (HOME, a directory) is
	// missing or not writable.
	ErrEnvironment = errors.New("service: environment")
)

// SpecError is bad input for a unit: a relative binary, a value no unit
// file can carry.
type SpecError struct {
	Field   string
	Problem string
}

func (e *SpecError) Error() string { return "service: " + e.Field + ": " + e.Problem }

// CommandError is a service manager command that failed.
type CommandError struct {
	Args   []string
	Output string
	Err    error
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("service: `%s` failed: %v", strings.Join(e.Args, " "), e.Err)
	if o := strings.TrimSpace(e.Output); o != "" {
		msg += ": " + o
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Err }
