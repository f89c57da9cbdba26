package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// changeLoopAdvisor runs the advisor's watchdog beside each activation of
// a loop (advisor.enabled); loops recorded before it ran unwatched.
const changeLoopAdvisor = "loop-advisor-watchdog"

// startWatch starts the advisor's watchdog beside activation k of the
// loop when advisor.enabled (behind GetVersion loop-advisor-watchdog, so
// loops started before it replay unchanged); nil otherwise. As beside a
// run's worker, near a spend ceiling the watchdog uses the local model
// that ranks for review, or none: it goes off rather than pause the loop.
func (r *loopRun) startWatch(ctx workflow.Context, k int, workerModel string) *watch {
	s := r.limits.Advisor
	if !s.Enabled || workflow.GetVersion(ctx, changeLoopAdvisor, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	g, why := r.advisorModel()
	if g.model == "" {
		r.addAdvice(k, "", []horizon.AdviceRecord{{ID: "r0", Verdict: horizon.AdviceFailed, Reason: why}})
		return nil
	}
	id, max := r.in.Loop.ID, r.in.Loop.Max
	in := activities.AdvisorInput{
		RunID: id, Feature: "loop", Attempt: k, Lane: r.plan.Dir, BaseCommit: r.plan.Base,
		WorkerModel: workerModel, Model: g.model, Brief: r.in.Loop.Prompt, Gate: r.gate, Settings: s,
		Loop: &activities.AdvisorLoop{Title: activities.LoopSessionTitle(id), Turn: horizon.LoopMarker(id, k, max),
			Activation: k, Max: max, Carry: r.carry},
	}
	wctx, cancel := workflow.WithCancel(ctx)
	opts := workflow.ActivityOptions{
		// Beside the activation it reviews, on the loop's own queue
		// (grant.start says why).
		StartToCloseTimeout: r.limits.SessionTimeout + s.Timeout + watchGrace,
		HeartbeatTimeout:    r.limits.HeartbeatTimeout,
		Summary:             fmt.Sprintf("advisor · %s · activation %d of %d · %s", id, k, max, g.model),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
	f := g.start(wctx, opts, a.AdvisorWatch, in)
	return &watch{f: f, cancel: cancel, timeout: s.Timeout}
}

// advisorModel is the watchdog's grant for the loop: advisor.watchdog_model,
// else the model that reviews for the auditor (LoopPlan.Review), weighed
// by the spend authority without waiting, against the loop's spend.
func (r *loopRun) advisorModel() (g grant, why string) {
	model := r.limits.Advisor.Model
	if model == "" {
		model = r.plan.Review
	}
	if model == "" {
		return g, "advisor off: no advisor.watchdog_model and no analyze model"
	}
	g, why = r.authority().beside(horizon.RoleAuditor, model, r.state.Cost)
	if why != "" {
		return g, "advisor off: " + why
	}
	return g, ""
}

// endWatch waits for the watchdog of activation k once the activation is
// over (at most advisor.timeout and a grace, like a worker's attempt),
// adds its notes to the loop's results and its cost to the loop's spend.
// woke reports a blocker that woke the session after the activation's
// report.
func (r *loopRun) endWatch(ctx workflow.Context, w *watch, k int, done bool) (woke bool) {
	out, why := awaitWatch(ctx, w, done)
	recs := out.Records
	if why != "" {
		recs = append(recs, horizon.AdviceRecord{ID: fmt.Sprintf("r%d", len(recs)+1), Verdict: horizon.AdviceFailed, Reason: why})
	}
	r.addAdvice(k, out.Transcript, recs)
	r.state.Cost += out.Usage.Cost
	if out.Carry != nil {
		r.carry = out.Carry
	}
	return why == "" && out.WokeAfterReport
}

// addAdvice records activation k's watch on the loop's results and
// counts every note so far.
func (r *loopRun) addAdvice(k int, file string, recs []horizon.AdviceRecord) {
	if recs == nil {
		recs = []horizon.AdviceRecord{}
	}
	r.state.Advice = append(r.state.Advice, activities.LoopAdvice{Activation: k, File: file, Records: recs})
	var all []horizon.AdviceRecord
	for _, a := range r.state.Advice {
		all = append(all, a.Records...)
	}
	n := horizon.CountAdvice(all)
	r.state.Notes = &n
}

// awaitWatch waits for the watchdog's last review once the session it
// watches is over (done: with a result), at most advisor.timeout and a
// grace, as changeLoop.endWatch does for a worker. why says why the watch
// gave up (the watchdog is then cancelled), "" when it finished; out holds
// what it did either way.
func awaitWatch(ctx workflow.Context, w *watch, done bool) (out activities.AdvisorOutput, why string) {
	if !done {
		w.cancel()
		return out, "the watchdog was stopped: the activation ended without a result"
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
		return out, fmt.Sprintf("the watchdog did not finish within advisor.timeout (%s) after the activation's report", w.timeout)
	case err != nil:
		w.cancel()
		return out, "the watchdog failed: " + err.Error()
	}
	return out, ""
}
