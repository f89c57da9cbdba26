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
		return fmt.Sprintf("no daily report yet in %s; `horizon supervisor trigger daily` makes one", e.Dir)
	}
	return fmt.Sprintf("no daily report of %s in %s", e.Date, e.Dir)
}
