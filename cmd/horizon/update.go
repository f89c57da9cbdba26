package main

import (
	"errors"

	"github.com/horizon/horizon/app/core"
)

// verbError says why a run refused a verb, as bad input (exit 2): a
// validator's reason ("not waiting for approval") is printed as the
// workflow wrote it. An unknown or ended run goes on unchanged: withRun
// says it (runError).
func verbError(err error) error {
	if err == nil {
		return nil
	}
	var nf *core.NotFoundError
	var ended *core.EndedError
	if errors.As(err, &nf) || errors.As(err, &ended) {
		return err
	}
	return usageError{err}
}

// supervisorError says a verb a supervisor refused as verbError does, and
// one that does not run with how to start it.
func supervisorError(err error) error {
	var nf *core.SupervisorNotFoundError
	if errors.As(err, &nf) {
		return usagef("no supervisor runs for this repository; `horizon supervisor start` starts one")
	}
	return verbError(err)
}
