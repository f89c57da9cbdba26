package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// maxIntegrationTries bounds the repair features added when the gate fails
// on the integration branch after every feature was accepted.
const maxIntegrationTries = 2

// planner is the part of a run that executes a plan.
type planner struct {
	carry Carry
	// active is the feature workflow running now, if any: pauses and
	// ceilings are forwarded to it.
	active workflow.ChildWorkflowFuture
	// inHistory counts features finished in this history.
	inHistory int
	// pending are decisions not yet written to decisions.jsonl.
	pending []horizon.Decision
	// changed counts approvals and unblocks, to wake a waiting run.
	changed int
}

// planned drives a planned run: preflight and the baseline gate, the
// lead's plan, then features one at a time (milestones in order; blocked
// features step aside for independent ones), the final integration gate
// and the handoff. Pauses, checkpoints and blockers wait for a person; the
// run's budget is its one hard stop.
func (r *run) planned(ctx workflow.Context) (*horizon.RunState, error) {
	p := r.pl
	st := &r.state
	progress := workflow.GetSignalChannel(ctx, SignalProgress)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var pr Progress
			if !progress.Receive(ctx, &pr) {
				return
			}
			r.recordProgress(ctx, pr)
		}
	})
	if c := r.in.Carry; c != nil {
		// A fresh history: the state comes with it, nothing is redone.
		p.carry = *c
		p.carry.State = horizon.RunState{}
		r.state = c.State
		st.Histories++
		setup := c.Setup
		r.setup = &setup
		r.models, r.paid, r.tiers, r.localContext = setup.Models, setup.Paid, setup.Tiers, setup.LocalContext
		r.dayCeiling = st.DayCeiling
		r.indexed = "" // the new history's search attribute is set afresh
		r.publish(ctx)
	} else if done, res, err := r.prepare(ctx); done {
		return res, err
	}
	for {
		if err := r.holdIfPaused(ctx); err != nil {
			return r.fail(ctx, err)
		}
		if why, over := st.Budget.Exceeded(workflow.Now(ctx), st.Usage.Cost); over {
			return r.stopBudget(ctx, why)
		}
		if r.needsApproval(horizon.CheckpointPlan, "plan") {
			if err := r.awaitApproval(ctx, horizon.CheckpointPlan, "plan",
				fmt.Sprintf("the plan (ambiguity %s): %d milestones, %d features", st.Plan.Ambiguity, len(st.Plan.Milestones), st.Plan.Counts().Work())); err != nil {
				return r.fail(ctx, err)
			}
			continue
		}
		mi, fi, ok := st.Plan.Next()
		if ok && (workflow.GetInfo(ctx).GetContinueAsNewSuggested() || (r.in.FeaturesPerHistory > 0 && p.inHistory >= r.in.FeaturesPerHistory)) {
			// Only with a feature to go on with: the end of the run is
			// written by the history that ends it.
			return nil, r.continueAsNew(ctx)
		}
		if !ok {
			if st.Plan.Done() {
				passed, err := r.integrate(ctx)
				if err != nil {
					return r.fail(ctx, err)
				}
				if passed {
					return r.finish(ctx)
				}
				if st.Status.Terminal() {
					return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
				}
				continue
			}
			if err := r.awaitUnblock(ctx); err != nil {
				return r.fail(ctx, err)
			}
			continue
		}
		m := st.Plan.Milestones[mi]
		f := m.Features[fi]
		if mi > 0 && m.Status == horizon.MilestonePending && r.needsApproval(horizon.CheckpointMilestone, m.ID) {
			if err := r.awaitApproval(ctx, horizon.CheckpointMilestone, m.ID, fmt.Sprintf("milestone %s (%s): %d features", m.ID, m.Title, len(m.Features))); err != nil {
				return r.fail(ctx, err)
			}
			continue
		}
		if f.Status != horizon.FeatureRunning && len(f.Attempts) == 0 && r.needsApproval(horizon.CheckpointFeature, f.ID) {
			if err := r.awaitApproval(ctx, horizon.CheckpointFeature, f.ID, fmt.Sprintf("feature %s: %s", f.ID, f.Title)); err != nil {
				return r.fail(ctx, err)
			}
			continue
		}
		res, err := r.runFeature(ctx, m.ID, f)
		if err != nil {
			return r.fail(ctx, err)
		}
		if res.Outcome == FeatureOutcomeBudget {
			r.applyFeature(ctx, res)
			return r.stopBudget(ctx, res.Reason)
		}
		r.applyFeature(ctx, res)
		if err := r.save(ctx); err != nil {
			return r.fail(ctx, err)
		}
	}
}

// prepare runs everything before the first feature: preflight, the
// baseline gate on the base commit, and planning. done is true when the
// run ended here (its result and error are returned).
func (r *run) prepare(ctx workflow.Context) (done bool, res *horizon.RunState, err error) {
	st := &r.state
	st.Autonomy = r.in.Autonomy
	if !st.Autonomy.Valid() {
		st.Autonomy = horizon.DefaultAutonomy
	}
	if r.in.BudgetTime > 0 || r.in.BudgetSpend > 0 {
		st.Budget = &horizon.Budget{Time: r.in.BudgetTime, Spend: r.in.BudgetSpend}
		if r.in.BudgetTime > 0 {
			st.Budget.Deadline = st.StartedAt.Add(r.in.BudgetTime)
		}
	}
	st.MaxAttempts = 0 // features are not capped; the budget is the stop
	st.Feature = ""
	var pre activities.PreflightOutput
	if err := r.exec(ctx, gitOptions("preflight: repo, gate, models"), a.Preflight, activities.PreflightInput{
		RunID: r.in.RunID, Repo: r.in.Repo, BaseCommit: r.in.BaseCommit, Model: r.in.Model, ModelsFile: r.in.ModelsFile,
	}, &pre); err != nil {
		res, err := r.fail(ctx, err)
		return true, res, err
	}
	setup := Setup{Models: pre.Models, Paid: pre.Paid, Tiers: pre.Tiers, LocalContext: pre.LocalContext}
	setup.Lead, setup.LeadPaid = pre.Models["worker"], pre.Paid["worker"]
	if r.in.Model == "" && pre.Tiers[ladder.T4].Available {
		// Planning is the lead's role: the metered T4 rung when connected.
		setup.Lead, setup.LeadPaid = pre.Tiers[ladder.T4].Model, true
	}
	r.setup = &setup
	r.models, r.paid, r.tiers, r.localContext = setup.Models, setup.Paid, setup.Tiers, setup.LocalContext
	st.Models, st.Model = r.models, r.models["worker"]

	// The baseline and the lead's reading both use a lane at the base
	// commit; features get lanes of their own, cut from the integration
	// branch as it grows.
	r.phase(ctx, horizon.PhaseBaseline)
	var lane activities.Lane
	if err := r.exec(ctx, gitOptions("lane · baseline and planning"), a.PrepareLane, activities.LaneInput{
		RunID: r.in.RunID, Feature: "plan", Repo: r.in.Repo, BaseCommit: r.in.BaseCommit,
	}, &lane); err != nil {
		res, err := r.fail(ctx, err)
		return true, res, err
	}
	var baseline horizon.GateRun
	if err := r.exec(ctx, gateOptions(r.limits, "baseline gate · base commit"), a.RunGate, activities.GateInput{
		RunID: r.in.RunID, Feature: "baseline", Attempt: 0, Repo: r.in.Repo, Lane: lane.Path, BaseCommit: r.in.BaseCommit, Timeout: r.limits.GateTimeout,
	}, &baseline); err != nil {
		res, err := r.fail(ctx, err)
		return true, res, err
	}
	st.Baseline = &baseline

	r.phase(ctx, horizon.PhasePlanning)
	planned, problem, err := r.planWithLead(ctx, setup.Lead, setup.leadQueue(r.in.PaidQueue), lane.Path, r.in.Goal)
	if planned != nil {
		st.Planning = st.Planning.Add(planned.Usage)
		r.recount()
	}
	if err != nil {
		res, err := r.fail(ctx, err)
		return true, res, err
	}
	if planned.Plan.Milestones == nil {
		st.End(horizon.StatusFailed, horizon.ReasonError, fmt.Sprintf("no valid plan after %d tries; last problem: %s", planned.Tries, problem), workflow.Now(ctx))
		r.handoff(ctx)
		r.publish(ctx)
		return true, nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
	}
	plan := planned.Plan
	st.Plan = &plan
	r.decideRun(ctx, "", fmt.Sprintf("planned %d milestones, %d features (ambiguity %s)", len(plan.Milestones), plan.Counts().Work(), plan.Ambiguity),
		fmt.Sprintf("the lead's plan was accepted after %d tries", planned.Tries), planned.Rejected...)
	for _, as := range plan.Assumptions {
		r.decideRun(ctx, "", "assumed: "+as, fmt.Sprintf("the goal does not say; the lead assumed it (ambiguity %s)", plan.Ambiguity))
	}
	r.phase(ctx, horizon.PhaseFeatures)
	if err := r.save(ctx); err != nil {
		res, err := r.fail(ctx, err)
		return true, res, err
	}
	return false, nil, nil
}

// runFeature runs one feature as a child workflow and returns its result.
func (r *run) runFeature(ctx workflow.Context, milestone string, f horizon.Feature) (*FeatureResult, error) {
	p, st := r.pl, &r.state
	if err := st.Plan.Start(f.ID); err != nil {
		return nil, err
	}
	st.Feature, st.Phase = f.ID, horizon.PhaseFeatures
	r.publish(ctx)
	p.carry.ChildSeq++
	note := p.carry.Notes[f.ID]
	if note != "" {
		note = fmt.Sprintf("A person unblocked this feature. Their note: %s", note)
	}
	cur, _ := st.Plan.Feature(f.ID)
	in := FeatureInput{
		RunID: r.in.RunID, Goal: r.in.Goal, Repo: r.in.Repo, BaseCommit: r.in.BaseCommit, Milestone: milestone,
		Feature: *cur, Setup: *r.setup, Baseline: st.Baseline, Interval: r.in.Interval, Note: note,
		Prior: st.Usage.Cost - usageOf(*cur).Cost, Control: r.control(), ThrottleAt: r.in.ThrottleAt, Budget: st.Budget,
		Decompose: f.Parent == "" && !slices.Contains(p.carry.NoDecompose, f.ID),
		Limits:    r.in.Limits, PaidQueue: r.in.PaidQueue,
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          fmt.Sprintf("%s.%s.%d", r.in.RunID, f.ID, p.carry.ChildSeq),
		StaticSummary:       fmt.Sprintf("%s · %s", f.ID, f.Title),
		WaitForCancellation: true,
	})
	p.active = workflow.ExecuteChildWorkflow(cctx, FeatureWorkflowName, in)
	var res FeatureResult
	err := p.active.Get(ctx, &res)
	p.active = nil
	if err != nil {
		return nil, err
	}
	if note != "" {
		delete(p.carry.Notes, f.ID)
	}
	return &res, nil
}

// applyFeature puts a feature's result into the plan and records what was
// decided.
func (r *run) applyFeature(ctx workflow.Context, res *FeatureResult) {
	p, st := r.pl, &r.state
	id := res.Feature.ID
	f, ok := st.Plan.Feature(id)
	if !ok {
		return
	}
	f.Attempts, f.ReceiptIDs = res.Feature.Attempts, res.Feature.ReceiptIDs
	f.Strategy = horizon.StrategyFor(f.AttemptCount(), r.in.Interval)
	st.Planning = st.Planning.Add(res.Planning)
	for _, d := range res.Decisions {
		r.record(d)
	}
	switch res.Outcome {
	case FeatureOutcomeAccepted:
		if err := st.Plan.Accept(id, res.Commit); err != nil {
			// Only the receipts can make a feature accepted; a result that
			// does not show them is kept running and said so.
			r.decideRun(ctx, id, "kept "+id+" open", err.Error())
			break
		}
		p.carry.Features++
		p.inHistory++
	case FeatureOutcomeBlocked:
		if err := st.Plan.Block(id, *res.Blocker); err != nil {
			r.decideRun(ctx, id, "kept "+id+" running", "its blocker was not accepted: "+err.Error())
			break
		}
		r.decideRun(ctx, id, fmt.Sprintf("paused %s on a %s blocker; features that do not depend on it go on", id, res.Blocker.Type), res.Blocker.Evidence, receiptsOf(f.Attempts)...)
		p.inHistory++
	case FeatureOutcomeDecompose:
		if err := st.Plan.Decompose(id, res.Parts); err != nil {
			p.carry.NoDecompose = append(p.carry.NoDecompose, id)
			r.decideRun(ctx, id, id+" is not decomposed; its next attempt shrinks it itself", "the proposed parts were not valid: "+err.Error())
			break
		}
		var ids []string
		for _, part := range res.Parts {
			ids = append(ids, part.ID)
		}
		r.decideRun(ctx, id, fmt.Sprintf("decomposed %s into %s", id, strings.Join(ids, ", ")),
			fmt.Sprintf("%d attempts through correction, replanning and research did not converge", f.AttemptCount()), receiptsOf(f.Attempts)...)
		p.inHistory++
	}
	st.Feature = ""
	r.recount()
	r.publish(ctx)
}

// recordProgress shows a running feature's finished attempt in the plan.
func (r *run) recordProgress(ctx workflow.Context, pr Progress) {
	st := &r.state
	if st.Plan == nil {
		return
	}
	if f, ok := st.Plan.Feature(pr.Feature); !ok || f.Status != horizon.FeatureRunning {
		return
	}
	if err := st.Plan.RecordAttempt(pr.Feature, pr.Attempt, r.in.Interval); err == nil {
		r.recount()
		r.publish(ctx)
	}
}

// integrate runs the gate on the integration branch once every feature is
// accepted. A failing gate adds a repair feature (features can interact
// in ways no single feature's gate saw), up to maxIntegrationTries; then
// the run fails with the gate's evidence.
func (r *run) integrate(ctx workflow.Context) (bool, error) {
	p, st := r.pl, &r.state
	r.phase(ctx, horizon.PhaseFinalGate)
	var lane activities.Lane
	if err := r.exec(ctx, gitOptions("integration worktree · "+st.Branch), a.PrepareIntegration, activities.IntegrationInput{RunID: r.in.RunID, Repo: r.in.Repo}, &lane); err != nil {
		return false, err
	}
	var g horizon.GateRun
	if err := r.exec(ctx, gateOptions(r.limits, "integration gate · "+st.Branch), a.RunGate, activities.GateInput{
		RunID: r.in.RunID, Feature: "integration", Attempt: p.carry.IntegrationTries + 1, Repo: r.in.Repo, Lane: lane.Path, BaseCommit: r.in.BaseCommit, Timeout: r.limits.GateTimeout,
	}, &g); err != nil {
		return false, err
	}
	st.Integration = &g
	if g.Passed() {
		r.decideRun(ctx, "", "the integration gate passed on "+st.Branch, "every feature was accepted; the gate ran on the branch's tip", g.ReceiptID)
		return true, r.save(ctx)
	}
	p.carry.IntegrationTries++
	if p.carry.IntegrationTries > maxIntegrationTries {
		st.End(horizon.StatusFailed, horizon.ReasonIntegration,
			fmt.Sprintf("the gate fails on %s after %d repair features (receipt %s); failing: %s", st.Branch, maxIntegrationTries, g.ReceiptID, strings.Join(g.Failing, ", ")), workflow.Now(ctx))
		_ = r.save(ctx)
		r.handoff(ctx)
		r.publish(ctx)
		return false, nil
	}
	id := fmt.Sprintf("integration-%d", p.carry.IntegrationTries)
	acceptance := []string{"the repository's gate passes on the integration branch with every accepted feature in it"}
	if len(g.Failing) > 0 {
		acceptance = append(acceptance, "these checks pass again: "+strings.Join(g.Failing, ", "))
	}
	st.Plan.Milestones = append(st.Plan.Milestones, horizon.Milestone{
		ID: id, Title: "repair the integration branch",
		Features: []horizon.Feature{{ID: id, Title: "make the gate pass on the integration branch", Kind: horizon.KindBounded, Acceptance: acceptance, Status: horizon.FeaturePending}},
	})
	st.Plan.Revision++
	st.Plan.Refresh()
	r.decideRun(ctx, id, "added feature "+id+" to repair the integration branch",
		fmt.Sprintf("every feature was accepted but the gate fails on %s (verdict %s)", st.Branch, g.Verdict), g.ReceiptID)
	return false, r.save(ctx)
}

// awaitUnblock waits while nothing is runnable: what is left is blocked
// or depends on something blocked. The run reads blocked meanwhile and a
// handoff says who must do what.
func (r *run) awaitUnblock(ctx workflow.Context) error {
	p, st := r.pl, &r.state
	var first *horizon.Blocker
	var ids []string
	for _, m := range st.Plan.Milestones {
		for _, f := range m.Features {
			if f.Status == horizon.FeatureBlocked {
				ids = append(ids, fmt.Sprintf("%s (%s: %s)", f.ID, f.Blocker.Type, f.Blocker.Evidence))
				if first == nil {
					first = f.Blocker
				}
			}
		}
	}
	st.Blocker, st.Status, st.ReasonKind, st.Phase = first, horizon.StatusBlocked, horizon.ReasonBlocked, horizon.PhaseBlocked
	st.Reason = fmt.Sprintf("nothing runnable: blocked %s; `horizon unblock %s FEATURE --note \"...\"` lets a feature go on", strings.Join(ids, "; "), st.RunID)
	if err := r.save(ctx); err != nil {
		return err
	}
	r.handoff(ctx)
	r.publish(ctx)
	seen := p.changed
	if err := r.awaitOrDeadline(ctx, func() bool { return p.changed != seen }); err != nil {
		return err
	}
	st.Blocker, st.Status, st.ReasonKind, st.Reason, st.Phase = nil, horizon.StatusRunning, "", "", horizon.PhaseFeatures
	r.publish(ctx)
	return nil
}

// needsApproval: the autonomy level wants a person at this checkpoint and
// nobody approved it yet.
func (r *run) needsApproval(kind horizon.CheckpointKind, subject string) bool {
	st := &r.state
	return st.Autonomy.NeedsApproval(kind, *st.Plan) && !slices.Contains(r.pl.carry.Approved, subject)
}

// awaitApproval waits at a checkpoint for `horizon approve` (or the
// budget's deadline, which the caller's next check turns into the stop).
func (r *run) awaitApproval(ctx workflow.Context, kind horizon.CheckpointKind, subject, summary string) error {
	st := &r.state
	st.Waiting = &horizon.Checkpoint{Kind: kind, Subject: subject, Summary: summary, Since: workflow.Now(ctx)}
	phase := st.Phase
	st.Phase, st.Reason = horizon.PhaseApproval, fmt.Sprintf("waiting for approval of %s (autonomy %s); `horizon approve %s` lets it go on", summary, st.Autonomy, st.RunID)
	r.publish(ctx)
	if err := r.awaitOrDeadline(ctx, func() bool { return st.Waiting == nil }); err != nil {
		return err
	}
	st.Phase, st.Reason = phase, ""
	r.publish(ctx)
	return nil
}

// awaitOrDeadline waits for cond, or until the budget's deadline passes.
func (r *run) awaitOrDeadline(ctx workflow.Context, cond func() bool) error {
	b := r.state.Budget
	if b == nil || b.Deadline.IsZero() {
		return workflow.Await(ctx, cond)
	}
	left := b.Deadline.Sub(workflow.Now(ctx))
	if left <= 0 {
		return nil
	}
	_, err := workflow.AwaitWithTimeout(ctx, left, cond)
	return err
}

// stopBudget ends the run at its budget: the one hard stop, reported as
// such, with the handoff of what was done.
func (r *run) stopBudget(ctx workflow.Context, why string) (*horizon.RunState, error) {
	st := &r.state
	st.Waiting = nil
	st.End(horizon.StatusFailed, horizon.ReasonBudget, why, workflow.Now(ctx))
	r.decideRun(ctx, st.Feature, "stopped the run", why)
	_ = r.save(ctx)
	r.handoff(ctx)
	r.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
}

// continueAsNew hands the run to a fresh history between features (no
// agent activity runs then), carrying its compact state.
func (r *run) continueAsNew(ctx workflow.Context) error {
	p := r.pl
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if err := r.save(ctx); err != nil {
		return err
	}
	carry := p.carry
	carry.State, carry.Setup = r.state, *r.setup
	next := r.in
	next.Carry = &carry
	return workflow.NewContinueAsNewError(ctx, RunWorkflowName, next)
}

// control is what the running feature must know of pause and ceilings.
func (r *run) control() Control {
	return Control{Paused: r.state.Paused, Ceiling: r.state.Ceiling, DayCeiling: r.dayCeiling}
}

// forward sends the current control to the running feature, if any.
func (r *run) forward(ctx workflow.Context) {
	if r.pl == nil || r.pl.active == nil {
		return
	}
	r.pl.active.SignalChildWorkflow(ctx, SignalControl, r.control())
}

// decideRun records a decision of the run itself.
func (r *run) decideRun(ctx workflow.Context, feature, what, why string, evidence ...string) {
	if d, ok := newDecision(ctx, feature, what, why, evidence...); ok {
		r.record(d)
	}
}

// record numbers a decision and queues it for decisions.jsonl.
func (r *run) record(d horizon.Decision) {
	r.state.Decisions++
	d.Seq = r.state.Decisions
	r.pl.pending = append(r.pl.pending, d)
}

// save writes plan.json and the pending decisions (idempotently).
func (r *run) save(ctx workflow.Context) error {
	p := r.pl
	var out activities.PlanArtifactsOutput
	if err := r.exec(ctx, gitOptions("plan.json, decisions.jsonl"), a.SavePlan, activities.PlanArtifacts{
		RunID: r.in.RunID, Plan: *r.state.Plan, Decisions: p.pending,
	}, &out); err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	p.pending = nil
	return nil
}

// recount sums the run's usage: planning plus every feature's attempts.
func (r *run) recount() {
	st := &r.state
	u := st.Planning
	if st.Plan != nil {
		for _, m := range st.Plan.Milestones {
			for _, f := range m.Features {
				u = u.Add(usageOf(f))
			}
		}
	}
	st.Usage = u
}

func usageOf(f horizon.Feature) horizon.Usage {
	var u horizon.Usage
	for _, a := range f.Attempts {
		u = u.Add(a.Usage)
	}
	return u
}

// unblockFeature resolves which feature an unblock names.
func (r *run) unblockFeature(u Unblock) (string, error) {
	if r.state.Plan == nil {
		return "", fmt.Errorf("run %s has no plan yet, so nothing is blocked", r.state.RunID)
	}
	var blocked []string
	for _, m := range r.state.Plan.Milestones {
		for _, f := range m.Features {
			if f.Status == horizon.FeatureBlocked {
				blocked = append(blocked, f.ID)
			}
		}
	}
	switch {
	case len(blocked) == 0:
		return "", fmt.Errorf("run %s has no blocked feature", r.state.RunID)
	case u.Feature != "" && !slices.Contains(blocked, u.Feature):
		return "", fmt.Errorf("feature %q is not blocked; blocked: %s", u.Feature, strings.Join(blocked, ", "))
	case u.Feature != "":
		return u.Feature, nil
	case len(blocked) > 1:
		return "", fmt.Errorf("several features are blocked (%s): name one", strings.Join(blocked, ", "))
	}
	return blocked[0], nil
}

// errNotWaiting is the approve validator's answer when nothing waits.
var errNotWaiting = errors.New("not waiting for approval")

// approveCheck validates an approval against the checkpoint waited at.
func (r *run) approveCheck(ap Approve) error {
	w := r.state.Waiting
	if w == nil {
		return fmt.Errorf("run %s is %s (%s): %w", r.state.RunID, r.state.Status, r.state.Phase, errNotWaiting)
	}
	if ap.Subject != "" && ap.Subject != w.Subject {
		return fmt.Errorf("run %s waits at %s %q, not %q", r.state.RunID, w.Kind, w.Subject, ap.Subject)
	}
	return nil
}

// approve records a person's approval of the checkpoint waited at.
func (r *run) approve(ctx workflow.Context, ap Approve) {
	st, p := &r.state, r.pl
	w := st.Waiting
	p.carry.Approved = append(p.carry.Approved, w.Subject)
	why := "approved by a person"
	if n := strings.TrimSpace(ap.Note); n != "" {
		why += ": " + n
	}
	r.decideRun(ctx, "", fmt.Sprintf("approved %s %s", w.Kind, w.Subject), why)
	st.Waiting = nil
	p.changed++
}

// unblockPlanned puts a blocked feature back in line with the person's
// note, which its next attempt receives.
func (r *run) unblockPlanned(ctx workflow.Context, u Unblock) {
	st, p := &r.state, r.pl
	id, err := r.unblockFeature(u)
	if err != nil {
		return // the validator said so already
	}
	if err := st.Plan.Unblock(id, u.Note); err != nil {
		return
	}
	if p.carry.Notes == nil {
		p.carry.Notes = map[string]string{}
	}
	p.carry.Notes[id] = strings.TrimSpace(u.Note)
	r.decideRun(ctx, id, "unblocked "+id, "a person's note: "+strings.TrimSpace(u.Note))
	p.changed++
}
