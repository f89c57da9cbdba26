package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// changeLoopAdvisor runs the advisor's watchdog beside each activation of
// a loop (advisor.enabled); loops recorded before it ran unwatched.
const changeLoopAdvisor = "loop-advisor-watchdog"

// changeLoopWatchOnHost runs a loop's watchdog on the host queue of the
// worker that runs the activation it reviews, and moves it with the
// loop's session, as a run's (changeWatchOnHost); loops recorded before
// it ran it on the loop's own queue, started before the activation.
const changeLoopWatchOnHost = "loop-advisor-watch-on-session-host"

// planWatch plans the advisor's watchdog beside activation k of the loop
// when advisor.enabled (behind GetVersion loop-advisor-watchdog, so loops
// started before it replay unchanged); nil otherwise. As beside a run's
// worker, near a spend ceiling the watchdog uses the local model that
// ranks for review, or none: it goes off rather than pause the loop.
func (r *loopRun) planWatch(ctx workflow.Context, k int, workerModel string) *watchPlan {
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
		RunID: id, Feature: activities.LoopFeature, Attempt: k, Lane: r.plan.Dir, BaseCommit: r.plan.Base,
		WorkerModel: workerModel, Model: g.model, Brief: r.in.Loop.Prompt, Gate: r.gate, Settings: s,
		Loop: &activities.AdvisorLoop{Title: activities.LoopSessionTitle(id), Turn: horizon.LoopMarker(id, k, max),
			Activation: k, Max: max, Carry: r.carry},
	}
	opts := watchOptions(r.limits, fmt.Sprintf("advisor · %s · activation %d of %d · %s", id, k, max, g.model))
	return &watchPlan{g: g, in: in, opts: opts, session: "the activation", report: "the activation's report"}
}

// watchedActivation runs activation k (the grant g's call of
// LoopActivation with opts and in, its result in out) with the advisor's
// watchdog beside it, on the host queue of the worker that runs it, the
// one whose OpenCode store holds the loop's session, following the
// session when a retry moves it (watchPlan.follow, as for a run's
// worker). It returns the watchdog for endWatch (nil: none) and the
// workflow's own records of the watch (a move), which endWatch puts
// before the watchdog's; a watch that never started is recorded here.
func (r *loopRun) watchedActivation(ctx workflow.Context, g grant, opts workflow.ActivityOptions, in activities.LoopActivationInput, out *activities.LoopActivationOutput, k int, workerModel string) (*watch, []horizon.AdviceRecord, error) {
	watched := in
	watched.Watched = true
	var recs []horizon.AdviceRecord
	w, err := watchedCall(ctx, r.planWatch(ctx, k, workerModel), changeLoopWatchOnHost,
		func() error { return g.call(ctx, opts, a.LoopActivation, in, out) },
		func() workflow.Future { return g.begin(ctx, opts, a.LoopActivation, watched) },
		out, func(rec horizon.AdviceRecord) { recs = append(recs, rec) })
	if w == nil && recs != nil {
		r.addAdvice(k, "", recs)
	}
	return w, recs, err
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
// over (awaitWatch, as for a worker's attempt), adds the workflow's own
// records of the watch (moved) and the watchdog's notes to the loop's
// results, and its cost to the loop's spend. woke reports a blocker that
// woke the session after the activation's report.
func (r *loopRun) endWatch(ctx workflow.Context, w *watch, moved []horizon.AdviceRecord, k int, done bool) (woke bool) {
	out, why := awaitWatch(ctx, w, done)
	recs := append(moved, out.Records...)
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
