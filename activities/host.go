package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// SignalSessionHost is the signal a watched session (a worker's,
// SessionInput.Watched, or a loop's activation, LoopActivationInput.
// Watched) sends the workflow that scheduled it as each of its tries
// starts: a SessionHost. A session lives in the OpenCode store of the
// worker that runs it, which no other worker can read (each OpenCode
// listens on its own loopback, behind its own password), so the workflow
// runs the advisor's watchdog on that worker's host queue, and moves it
// when a retry runs the session elsewhere.
const SignalSessionHost = "session-host"

// SessionHost says which worker runs one try of a watched session.
type SessionHost struct {
	// Feature is the feature (LoopFeature for a loop) and Attempt the
	// feature's attempt (the loop's activation) the session belongs to;
	// Try is the activity's own attempt (1, then each retry), so a late
	// report of an earlier try never moves the watchdog back.
	Feature string
	Attempt int
	Try     int32
	// Queue is the worker's host queue (HostQueue), Worker its identity.
	Queue  string
	Worker string
}

// HostQueue is the task queue of the worker whose home is named id
// (app/daemon: the home's host.id): the run's task queue with the id,
// so engines shared by several task queues keep them apart. The id
// belongs to the home, not the process, because the OpenCode store does:
// a daemon restarted on the same home polls the same queue and finds the
// sessions, and a watchdog retried there, where they were.
func HostQueue(taskQueue, id string) string { return taskQueue + "@" + id }

// hostRetry is the longest wait between two tries of the host report:
// the engine may be down for a while, and the watchdog waits for it.
const hostRetry = 10 * time.Second

// tellHost tells the workflow of a watched session (attempt of feature
// in run runID) which worker runs this try of it (SignalSessionHost), in
// the background and until the engine took it or the try ended: the
// session must not wait on its own report.
func (a *Activities) tellHost(ctx context.Context, watched bool, runID, feature string, attempt int) {
	if !watched || a.Signals == nil || a.HostQueue == "" || !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	h := SessionHost{Feature: feature, Attempt: attempt, Try: info.Attempt, Queue: a.HostQueue, Worker: a.Identity}
	log := activity.GetLogger(ctx)
	go func() {
		wait := time.Second
		for {
			sctx, cancel := context.WithTimeout(ctx, signalTimeout)
			err := a.Signals.SignalWorkflow(sctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, SignalSessionHost, h)
			cancel()
			if err == nil || ctx.Err() != nil {
				return
			}
			log.Warn("the session's host not told to its workflow yet; the advisor's watchdog waits for it", "RunID", runID, "Feature", feature, "Attempt", attempt, "Error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, hostRetry)
		}
	}()
}
