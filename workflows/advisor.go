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

// changeWatchOnHost runs the watchdog on the host queue of the worker
// that runs the session it reviews, and moves it with the session
// (watchedSession); histories recorded before it ran it on the run's own
// queue, started before the session.
const changeWatchOnHost = "advisor-watch-on-session-host"

// watchPlan is a watchdog ready to start beside attempt n's worker
// session: its grant, input and options.
type watchPlan struct {
	g    grant
	in   activities.AdvisorInput
	opts workflow.ActivityOptions
}

// planWatch plans the advisor's watchdog beside attempt n's worker
// session when advisor.enabled; nil otherwise. Near a spend ceiling the
// watchdog uses the local model that ranks for review, or none: it goes
// off rather than pause a run.
func (l *changeLoop) planWatch(ctx workflow.Context, n int, prev *horizon.Attempt, workerModel string) *watchPlan {
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
	opts := l.bound(ctx, workflow.ActivityOptions{
		// The watchdog runs beside the session it reviews, where its
		// OpenCode store is, never on the paid queue (grant.start says
		// why).
		StartToCloseTimeout: l.limits.SessionTimeout + s.Timeout + watchGrace,
		HeartbeatTimeout:    l.limits.HeartbeatTimeout,
		Summary:             fmt.Sprintf("advisor · %s · attempt %d · %s", l.job.id, n, model),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
	return &watchPlan{g: g, in: in, opts: opts}
}

// start starts the planned watchdog on queue ("": the workflow's own).
func (p *watchPlan) start(ctx workflow.Context, queue string) *watch {
	wctx, cancel := workflow.WithCancel(ctx)
	var f workflow.Future
	if queue == "" {
		f = p.g.start(wctx, p.opts, a.AdvisorWatch, p.in)
	} else {
		f = p.g.startOn(wctx, p.opts, a.AdvisorWatch, p.in, queue)
	}
	return &watch{f: f, cancel: cancel, timeout: p.in.Settings.Timeout}
}

// watchedSession runs attempt n's worker session (the grant g's call of
// AgentSession with opts and in, its result in out) with the advisor's
// watchdog beside it, and returns the watchdog for endWatch (nil: none).
//
// The watchdog reads the session in the OpenCode store of the worker
// that runs it, which only that worker can read. So the session says
// where each of its tries runs (activities.SignalSessionHost) and the
// watchdog starts on that worker's host queue; when a retry runs the
// session on another worker (its worker died, or the retry was polled
// elsewhere), a fresh session starts there and the watchdog follows: the
// old one is cancelled (what it reviewed is not recorded) and a new one
// starts on the new host. A session that never said where it runs is not
// watched, and its attempt records why.
func (l *changeLoop) watchedSession(ctx workflow.Context, g grant, opts workflow.ActivityOptions, in activities.SessionInput, out *activities.SessionOutput, n int, prev *horizon.Attempt) (*watch, error) {
	p := l.planWatch(ctx, n, prev, in.Model)
	if p == nil {
		return nil, g.call(ctx, opts, a.AgentSession, in, out)
	}
	if workflow.GetVersion(ctx, changeWatchOnHost, workflow.DefaultVersion, 1) < 1 {
		w := p.start(ctx, "")
		return w, g.call(ctx, opts, a.AgentSession, in, out)
	}
	in.Watched = true
	hosts := workflow.GetSignalChannel(ctx, SignalSessionHost)
	session := g.begin(ctx, opts, a.AgentSession, in)
	var (
		w    *watch
		at   activities.SessionHost // where the watchdog runs
		err  error
		done bool
	)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(session, func(f workflow.Future) { err, done = f.Get(ctx, out), true })
	sel.AddReceive(hosts, func(ch workflow.ReceiveChannel, _ bool) {
		var h activities.SessionHost
		ch.Receive(ctx, &h)
		switch {
		case h.Feature != l.job.id || h.Attempt != n || h.Queue == "" || h.Try < at.Try:
			return // another attempt's session, or an earlier try's late word
		case h.Queue == at.Queue:
			at.Try = h.Try // a retry on the same worker (its store, its session)
			return
		}
		if w != nil {
			w.cancel()
			c := l.s.state.Current()
			c.Advice = append(c.Advice, horizon.AdviceRecord{ID: "r0", Verdict: horizon.AdviceFailed,
				Reason: fmt.Sprintf("the watchdog moved with the worker's session from %s to %s; its reviews on %s are not recorded", at.Worker, h.Worker, at.Worker)})
		}
		at, w = h, p.start(ctx, h.Queue)
	})
	for !done {
		sel.Select(ctx)
	}
	activityReturned(ctx)
	if w == nil && err == nil {
		c := l.s.state.Current()
		c.Advice = append(c.Advice, horizon.AdviceRecord{ID: "r0", Verdict: horizon.AdviceFailed,
			Reason: "the watchdog never started: the worker's session did not say which worker ran it"})
	}
	return w, err
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
