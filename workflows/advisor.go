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
// session or a loop's activation.
type watch struct {
	f       workflow.Future
	cancel  workflow.CancelFunc
	timeout time.Duration
	// session names what it watches in the records the workflow writes
	// of it (watchPlan.session), report that session's report.
	session, report string
}

// changeWatchOnHost runs the watchdog on the host queue of the worker
// that runs the session it reviews, and moves it with the session
// (watchPlan.follow); histories recorded before it ran it on the run's
// own queue, started before the session.
const changeWatchOnHost = "advisor-watch-on-session-host"

// watchPlan is a watchdog ready to start beside a session: its grant,
// input and options.
type watchPlan struct {
	g    grant
	in   activities.AdvisorInput
	opts workflow.ActivityOptions
	// session names the session watched ("the worker's session", a loop's
	// "the activation") and report its report, in the records the
	// workflow writes of the watch (a move, a watchdog that never started
	// or did not finish).
	session, report string
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
	opts := l.bound(ctx, watchOptions(l.limits, fmt.Sprintf("advisor · %s · attempt %d · %s", l.job.id, n, model)))
	return &watchPlan{g: g, in: in, opts: opts, session: "the worker's session", report: "the worker's report"}
}

// watchOptions are the watchdog's activity options beside a session of
// limits.SessionTimeout: it may outlive the session by its last review.
// It runs beside the session it reviews, where its OpenCode store is,
// never on the paid queue (grant.start says why).
func watchOptions(limits Limits, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: limits.SessionTimeout + limits.Advisor.Timeout + watchGrace,
		HeartbeatTimeout:    limits.HeartbeatTimeout,
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
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
	return &watch{f: f, cancel: cancel, timeout: p.in.Settings.Timeout, session: p.session, report: p.report}
}

// watchedCall runs a session activity with the advisor's watchdog p
// beside it (nil: unwatched) and returns the watchdog, for awaitWatch
// (nil: none). call runs the session as it was asked and waits for it;
// begin starts it told to say where each of its tries runs (Watched), its
// result into out. Histories recorded before change ran the watchdog on
// the workflow's own queue, started before the session; record receives
// the workflow's own records of the watch (follow).
func watchedCall(ctx workflow.Context, p *watchPlan, change string, call func() error, begin func() workflow.Future, out any, record func(horizon.AdviceRecord)) (*watch, error) {
	if p == nil {
		return nil, call()
	}
	if workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) < 1 {
		w := p.start(ctx, "")
		return w, call()
	}
	return p.follow(ctx, begin(), out, record)
}

// follow waits for session, a watched session activity, its result into
// out, with the planned watchdog beside it, and returns the watchdog (nil:
// none).
//
// The watchdog reads the session in the OpenCode store of the worker
// that runs it, which only that worker can read. So the session says
// where each of its tries runs (activities.SignalSessionHost) and the
// watchdog starts on that worker's host queue; when a retry runs the
// session on another worker (its worker died, or the retry was polled
// elsewhere), a fresh session starts there and the watchdog follows: the
// old one is cancelled (what it reviewed is not recorded, record says it
// moved) and a new one starts on the new host. A session that never said
// where it runs is not watched, and record says why.
func (p *watchPlan) follow(ctx workflow.Context, session workflow.Future, out any, record func(horizon.AdviceRecord)) (*watch, error) {
	hosts := workflow.GetSignalChannel(ctx, SignalSessionHost)
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
		case h.Feature != p.in.Feature || h.Attempt != p.in.Attempt || h.Queue == "" || h.Try < at.Try:
			return // another attempt's session, or an earlier try's late word
		case h.Queue == at.Queue:
			at.Try = h.Try // a retry on the same worker (its store, its session)
			return
		}
		if w != nil {
			w.cancel()
			record(horizon.AdviceRecord{ID: "r0", Verdict: horizon.AdviceFailed,
				Reason: fmt.Sprintf("the watchdog moved with %s from %s to %s; its reviews on %s are not recorded", p.session, at.Worker, h.Worker, at.Worker)})
		}
		at, w = h, p.start(ctx, h.Queue)
	})
	for !done {
		sel.Select(ctx)
	}
	activityReturned(ctx)
	if w == nil && err == nil {
		record(horizon.AdviceRecord{ID: "r0", Verdict: horizon.AdviceFailed,
			Reason: fmt.Sprintf("the watchdog never started: %s did not say which worker ran it", p.session)})
	}
	return w, err
}

// watchedSession runs attempt n's worker session (the grant g's call of
// AgentSession with opts and in, its result in out) with the advisor's
// watchdog beside it, on the host queue of the worker that runs it
// (watchPlan.follow), and returns the watchdog for endWatch (nil: none).
func (l *changeLoop) watchedSession(ctx workflow.Context, g grant, opts workflow.ActivityOptions, in activities.SessionInput, out *activities.SessionOutput, n int, prev *horizon.Attempt) (*watch, error) {
	watched := in
	watched.Watched = true
	return watchedCall(ctx, l.planWatch(ctx, n, prev, in.Model), changeWatchOnHost,
		func() error { return g.call(ctx, opts, a.AgentSession, in, out) },
		func() workflow.Future { return g.begin(ctx, opts, a.AgentSession, watched) },
		out, func(r horizon.AdviceRecord) {
			c := l.s.state.Current()
			c.Advice = append(c.Advice, r)
		})
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
// is over (awaitWatch), and records its notes on the attempt. The worker
// never waits longer for it: a watchdog that does not finish is cancelled
// and recorded as failed. woke reports a blocker that woke the worker
// after its report.
func (l *changeLoop) endWatch(ctx workflow.Context, w *watch, workerDone bool) (woke bool) {
	out, why := awaitWatch(ctx, w, workerDone)
	c := l.s.state.Current()
	c.Advice = append(c.Advice, out.Records...)
	c.Usage = c.Usage.Add(out.Usage)
	if why != "" {
		c.Advice = append(c.Advice, horizon.AdviceRecord{ID: fmt.Sprintf("r%d", len(c.Advice)+1), Verdict: horizon.AdviceFailed, Reason: why})
		return false
	}
	return out.WokeAfterReport
}

// awaitWatch waits for the watchdog's last review once the session it
// watches is over (done: with a result), at most advisor.timeout and a
// grace: the session never waits longer for it. why says why the watch
// gave up (the watchdog is then cancelled), "" when it finished; out holds
// what it did either way.
func awaitWatch(ctx workflow.Context, w *watch, done bool) (out activities.AdvisorOutput, why string) {
	if !done {
		w.cancel()
		return out, fmt.Sprintf("the watchdog was stopped: %s ended without a result", w.session)
	}
	tctx, stopTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, w.timeout+watchGrace)
	var (
		err      error
		finished bool
	)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(w.f, func(f workflow.Future) { err, finished = f.Get(ctx, &out), true })
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	stopTimer()
	switch {
	case !finished:
		w.cancel()
		return out, fmt.Sprintf("the watchdog did not finish within advisor.timeout (%s) after %s", w.timeout, w.report)
	case err != nil:
		w.cancel()
		return out, "the watchdog failed: " + err.Error()
	}
	return out, ""
}
