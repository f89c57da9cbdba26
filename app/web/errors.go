package web

import (
	"errors"
	"net/http"

	"github.com/horizon/horizon/app/core"
)

// unavailableText is what a caller reads while the engine does not answer,
// in place of the transport's error.
const unavailableText = "the horizon engine is not answering (the daemon is down or restarting); `horizon resume` starts it, then retry"

// InputError is bad input the core found (a path that is no repository, a
// goal its gate cannot run): 400 with its message.
type InputError = core.InputError

// status is the HTTP status of an error of the Core: unknown things 404,
// a verb the workflow refused (its validator, or because it ended) 409,
// bad input 400, an engine that does not answer 503, the rest 500.
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
		tnf   *core.TaskNotFoundError
		enf   *core.EntryNotFoundError
	)
	switch {
	case core.EngineUnavailable(err):
		return http.StatusServiceUnavailable
	case errors.As(err, &nf), errors.As(err, &snf), errors.As(err, &nr), errors.As(err, &sch), errors.As(err, &tnf), errors.As(err, &enf):
		return http.StatusNotFound
	case errors.As(err, &ref), errors.As(err, &ended):
		return http.StatusConflict
	case errors.As(err, &in), errors.As(err, &bid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
