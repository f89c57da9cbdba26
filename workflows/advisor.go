package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// watchGrace is how long, beyond advisor.timeout, a worker's attempt
// waits for the watchdog's last review after the worker reported: the
// watchdog's polling and delivery.
const watchGrace = 15 * time.Second

// watch is a running watchdog (activities.AdvisorWatch) beside a worker
// session.
type watch struct {
	f       workflow.Future
	cancel  workflow.CancelFunc
	timeout time.Duration
}

// startWatch starts the advisor's watchdog beside attempt n's worker
// session when advisor.enabled; nil otherwise. Near a spend ceiling the
// watchdog uses the local model that ranks for review, or none: it goes
// off rather than pause a run.
func (l *changeLoop) startWatch(ctx workflow.Context, n int, prev *horizon.Attempt, workerModel string) *watch {
	s := l.limits.Advisor
	if !s.Enabled || workflow.GetVersion(ctx, changeAdvisor, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	g, why := l.advisorModel()
	model := g.model
	c := l.s.state.Current()
	if model == "" {
		c.Advice = append(c.Advice, horizon.AdviceRecord{ID: "r0", Verdict: horizon.AdviceFailed, Reason: why})
		return nil
	}
	in := activities.AdvisorInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		WorkerModel: workerModel, Model: model, Brief: l.job.task, Settings: s,
	}
	if prev != nil {
		in.Gate = prev.Gate
	}
	wctx, cancel := workflow.WithCancel(ctx)
	opts := l.bound(ctx, workflow.ActivityOptions{
		// The watchdog runs beside the session it reviews, on the run's
		// own queue, never the paid one (grant.start says why).
		StartToCloseTimeout: l.limits.SessionTimeout + s.Timeout + watchGrace,
		HeartbeatTimeout:    l.limits.HeartbeatTimeout,
		Summary:             fmt.Sprintf("advisor · %s · attempt %d · %s", l.job.id, n, model),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
	f := g.start(wctx, opts, a.AdvisorWatch, in)
	return &watch{f: f, cancel: cancel, timeout: s.Timeout}
}

// advisorModel is the watchdog's grant: advisor.watchdog_model, else the
// auditor's (the leaderboard's best analyze model), weighed by the spend
// authority without waiting (authority.beside): near a ceiling the local
// model that ranks for review, or none with why.
func (l *changeLoop) advisorModel() (g grant, why string) {
	model := l.limits.Advisor.Model
	if model == "" {
		model = l.setup.Models[horizon.RoleAuditor]
	}
	if model == "" {
		return g, "advisor off: no advisor.watchdog_model and no analyze model" // no grant: no call
	}
	g, why = l.authority().beside(horizon.RoleAuditor, model, l.spent())
	if why != "" {
		return g, "advisor off: " + why
	}
	return g, ""
}

// endWatch waits for the watchdog's last review once the worker's session
// is over, at most advisor.timeout and a grace, and records its notes on
// the attempt. The worker never waits longer for it: a watchdog that does
// not finish is cancelled and recorded as failed. woke reports a blocker
// that woke the worker after its report.
func (l *changeLoop) endWatch(ctx workflow.Context, w *watch, workerDone bool) (woke bool) {
	c := l.s.state.Current()
	failed := func(why string) {
		w.cancel()
		c.Advice = append(c.Advice, horizon.AdviceRecord{ID: fmt.Sprintf("r%d", len(c.Advice)+1), Verdict: horizon.AdviceFailed, Reason: why})
	}
	if !workerDone {
		failed("the watchdog was stopped: the worker's session ended without a result")
		return false
	}
	tctx, stopTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, w.timeout+watchGrace)
	var (
		out  activities.AdvisorOutput
		err  error
		done bool
	)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(w.f, func(f workflow.Future) { err, done = f.Get(ctx, &out), true })
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	stopTimer()
	if !done {
		failed(fmt.Sprintf("the watchdog did not finish within advisor.timeout (%s) after the worker's report", w.timeout))
		return false
	}
	c.Advice = append(c.Advice, out.Records...)
	c.Usage = c.Usage.Add(out.Usage)
	if err != nil {
		failed("the watchdog failed: " + err.Error())
		return false
	}
	return out.WokeAfterReport
}
