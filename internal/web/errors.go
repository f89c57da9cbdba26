package web

import (
	"errors"
	"net/http"

	"github.com/horizon/horizon/internal/core"
)

// InputError is bad input the Core found (a path that is no repository, a
// goal its gate cannot run): 400 with its message.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// status is the HTTP status of an error of the Core: unknown things 404,
// a verb the workflow refused (its validator, or because it ended) 409,
// bad input 400, the rest 500.
func status(err error) int {
	var (
		nf    *core.NotFoundError
		snf   *core.SupervisorNotFoundError
		nr    *core.NoReportError
		sch   *core.ScheduleNotFoundError
		ref   *core.RefusedError
		ended *core.EndedError
		in    *InputError
		bid   *core.BadIDError
	)
	switch {
	case errors.As(err, &nf), errors.As(err, &snf), errors.As(err, &nr), errors.As(err, &sch):
		return http.StatusNotFound
	case errors.As(err, &ref), errors.As(err, &ended):
		return http.StatusConflict
	case errors.As(err, &in), errors.As(err, &bid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
