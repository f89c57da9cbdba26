package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
)

// SignalOutage is the signal a retrying activity sends the workflow that
// scheduled it (and, for a planned run's feature, the run): an
// OutageReport. Workflows never see their activities' retries otherwise,
// so without it their Markdown (the Temporal Web UI) could not say what
// a run waits on.
const SignalOutage = "outage"

// OutageReport is what a retrying activity says: the outage it waits out,
// or nil once it no longer waits.
type OutageReport struct {
	Outage *horizon.Outage `json:",omitempty"`
}

// Signaler reaches workflows: the engine's client satisfies it.
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// signalTimeout bounds one outage signal: the engine may be what is down,
// and an activity must not wait on its own report.
const signalTimeout = 5 * time.Second

// outageTeller tells the workflows about one attempt of an activity:
// each report goes out in the background, in order (a report superseded
// before it went out is not sent), and done clears what was told.
type outageTeller struct {
	sig      Signaler
	activity string // the Temporal activity type
	feature  string
	// workflowID, runID: the workflow that scheduled the activity; run,
	// when it is another workflow (a planned run's feature child), the
	// run's workflow ID, told too.
	workflowID, runID, run string
	attempt                int32

	mu     sync.Mutex
	seq    int  // the latest report's number
	told   bool // an outage went out (or a retry follows one): done clears it
	sendMu sync.Mutex
}

// tellOutages is the outage teller of the running activity of the run
// runID, about feature; outside an activity, or without a Signaler, it
// tells nobody.
func (a *Activities) tellOutages(ctx context.Context, runID, feature string) *outageTeller {
	if a.Signals == nil || !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	t := &outageTeller{
		sig: a.Signals, activity: info.ActivityType.Name, feature: feature, attempt: info.Attempt,
		workflowID: info.WorkflowExecution.ID, runID: info.WorkflowExecution.RunID,
		// A retried attempt follows a failed one that reported: its end
		// clears the report even if it tells nothing itself.
		told: info.Attempt > 1,
	}
	if runID != "" && runID != t.workflowID {
		t.run = runID
	}
	return t
}

// tell reports the outage o (its On named from its activity and last
// error when empty), without waiting: a session's progress callback must
// never wait.
func (t *outageTeller) tell(o horizon.Outage) {
	if t == nil {
		return
	}
	r := t.named(o)
	if seq, ok := t.number(r); ok {
		go t.send(seq, r)
	}
}

// named fills in what the teller knows of o.
func (t *outageTeller) named(o horizon.Outage) *horizon.Outage {
	if o.On == "" {
		o.On = horizon.OutageKind(t.activity, o.LastError)
	}
	if o.Activity == "" {
		o.Activity = t.activity
	}
	return &o
}

// finish ends the attempt, which returns err: a retryable error reports
// the wait (o, or since the activity was first scheduled with the
// attempts failed so far), anything else clears what was told. It waits
// (a bounded time) until the report went out, so the workflow hears it
// before the retry, or before it goes on. An attempt cut off (its
// timeout, a cancellation) reports nothing: the next attempt, or the
// workflow, says what follows.
func (t *outageTeller) finish(ctx context.Context, err error, o *horizon.Outage) {
	switch {
	case t == nil || ctx.Err() != nil:
	case err != nil && retryable(err):
		if o == nil {
			o = &horizon.Outage{Since: activity.GetInfo(ctx).ScheduledTime, Tries: int(t.attempt), LastError: err.Error()}
		}
		t.report(t.named(*o))
	default:
		t.report(nil)
	}
}

// report numbers the report o (nil: the wait is over) and sends it.
func (t *outageTeller) report(o *horizon.Outage) {
	if seq, ok := t.number(o); ok {
		t.send(seq, o)
	}
}

// number gives report o the next number, in the order reports are made
// (not sent); ok is false for a clear when nothing was told.
func (t *outageTeller) number(o *horizon.Outage) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o == nil && !t.told {
		return 0, false
	}
	t.told = t.told || o != nil
	t.seq++
	return t.seq, true
}

// send signals report number seq unless a later one superseded it.
func (t *outageTeller) send(seq int, o *horizon.Outage) {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	t.mu.Lock()
	latest := t.seq
	t.mu.Unlock()
	if seq != latest {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
	defer cancel()
	// The workflow that scheduled the activity; a closed one (cancelled,
	// continued as new) refuses, which changes nothing.
	_ = t.sig.SignalWorkflow(ctx, t.workflowID, t.runID, SignalOutage, OutageReport{Outage: o})
	if t.run != "" {
		var fo *horizon.Outage
		if o != nil {
			c := *o
			c.Feature = t.feature
			fo = &c
		}
		_ = t.sig.SignalWorkflow(ctx, t.run, "", SignalOutage, OutageReport{Outage: fo})
	}
}

// over clears what was told without waiting: the wait ended inside the
// attempt (the model answered again).
func (t *outageTeller) over() {
	if t == nil {
		return
	}
	if seq, ok := t.number(nil); ok {
		go t.send(seq, nil)
	}
}

// watchOutage reports an activity of the run runID (about feature) that
// waits out an outage: deferred with the activity's error, an attempt
// that fails retryably tells its workflow it waits, and one that returns
// otherwise after a failed one clears it. Used by the gate and the git
// activities; the agent session tells more (AgentSession).
func (a *Activities) watchOutage(ctx context.Context, runID, feature string) func(*error) {
	t := a.tellOutages(ctx, runID, feature)
	return func(err *error) { t.finish(ctx, *err, nil) }
}
