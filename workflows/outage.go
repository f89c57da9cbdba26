package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// Outages in the run's Markdown. The engine retries an activity that
// fails on infrastructure without the workflow seeing it; the activity
// itself says it waits (activities.SignalOutage, to the workflow that
// scheduled it and, from a feature, to its run). The workflow only keeps
// what it hears in its state and shows it: no command, so histories
// recorded before replay unchanged.

// statusKey finds a workflow's runStatus in its context, so execute can
// clear the outage an activity waited out once it returns.
type statusKey struct{}

// withStatus makes s the runStatus of ctx's workflow: it hears its
// activities' outage reports, and every activity that returns clears
// the outage shown.
func withStatus(ctx workflow.Context, s *runStatus) workflow.Context {
	workflow.Go(ctx, s.receiveOutages)
	return workflow.WithValue(ctx, statusKey{}, s)
}

// receiveOutages keeps the outage the run's activities report (nil: the
// wait is over) and shows it.
func (s *runStatus) receiveOutages(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, SignalOutage)
	for {
		var r activities.OutageReport
		if !ch.Receive(ctx, &r) {
			return
		}
		if s.state.Status.Terminal() {
			continue // an ended run waits on nothing
		}
		s.state.Outage = r.Outage
		s.show(ctx)
	}
}

// activityReturned clears the outage shown once an activity of ctx's
// workflow returned: whatever it waited out is over, whichever way it
// ended (a report that comes later is superseded by the next).
func activityReturned(ctx workflow.Context) {
	s, ok := ctx.Value(statusKey{}).(*runStatus)
	if !ok {
		return
	}
	s.waitedOut = s.state.Outage
	if s.state.Outage == nil {
		return
	}
	s.state.Outage = nil
	s.show(ctx)
}

// show refreshes the run's Markdown only: unlike publish, it issues no
// command (no search attribute, no signal to a supervisor).
func (s *runStatus) show(ctx workflow.Context) {
	s.state.UpdatedAt = workflow.Now(ctx)
	workflow.SetCurrentDetails(ctx, s.state.Markdown())
}
