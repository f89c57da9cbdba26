package main

import (
	"errors"

	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/internal/core"
)

// runs is the core's verbs on runs, in this command's namespace and task
// queue: every command that changes a run goes through it.
func (a *app) runs(c client.Client) core.Runs {
	ns, tq := a.engineNames()
	return core.Runs{Client: c, Namespace: ns, TaskQueue: tq}
}

// supervisors is the core's verbs on supervisors.
func (a *app) supervisors(c client.Client) core.Supervisors {
	ns, tq := a.engineNames()
	return core.Supervisors{Client: c, Namespace: ns, TaskQueue: tq}
}

// engineNames are the namespace and task queue of the resolved config;
// tests that hand in a client of their own may have none.
func (a *app) engineNames() (namespace, taskQueue string) {
	if a.cfg == nil {
		return "", ""
	}
	return a.cfg.Temporal.Namespace, a.cfg.Temporal.TaskQueue
}

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
