package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// maxIntegrationTries bounds the repair features added when the gate fails
// on the integration branch after every feature was accepted.
const maxIntegrationTries = 2

// plannedRun is a PlannedRunWorkflow (or a RunWorkflow with Planned):
// preflight and the baseline gate, the lead's plan, then features one at
// a time, each a FeatureWorkflow child (milestones in order; blocked
// features step aside for independent ones), the final integration gate
// and the handoff. Pauses, checkpoints and blockers wait for a person
// (checkpoints.go); the run's budget is its one hard stop.
type plannedRun struct {
	s     *runStatus
	in    PlannedRunInput
	setup Setup
	carry Carry
	rec   *record
	// people are the checkpoints and blockers a person resolves.
	people *checkpoints
	// active is the feature workflow running now, if any: pauses and
	// ceilings are forwarded to it; cancelActive cancels it (a skip).
	active       workflow.ChildWorkflowFuture
	cancelActive workflow.CancelFunc
	// skipping is a person's skip of the running feature, applied once
	// the feature has stopped.
	skipping *Skip
	// inHistory counts features finished in this history.
	inHistory int
}

// newPlannedRun registers the run's handlers: the controls (forwarded to
// the running feature), approve and unblock.
func newPlannedRun(ctx workflow.Context, in PlannedRunInput, s *runStatus) (*plannedRun, error) {
	s.takeLocalSteps(ctx)
	p := &plannedRun{s: s, in: in, rec: &record{s: s}}
	p.people = &checkpoints{s: s, rec: p.rec, carry: &p.carry, unblockRunning: p.unblockRunning, rule: in.Milestones}
	if err := registerControls(ctx, s, p.forward); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateUnblock, p.people.unblock,
		workflow.UpdateHandlerOptions{Validator: p.people.validateUnblock}); err != nil {
		return nil, fmt.Errorf("register unblock update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSkip, p.skip,
		workflow.UpdateHandlerOptions{Validator: p.validateSkip}); err != nil {
		return nil, fmt.Errorf("register skip update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove, p.people.approve,
		workflow.UpdateHandlerOptions{Validator: p.people.validateApprove}); err != nil {
		return nil, fmt.Errorf("register approve update: %w", err)
	}
	s.publish(ctx)
	return p, nil
}

func (p *plannedRun) run(ctx workflow.Context) (*horizon.RunState, error) {
	st := &p.s.state
	workflow.Go(ctx, p.receiveProgress)
	if c := p.in.Carry; c != nil {
		p.resume(ctx, c)
	} else if err := p.prepare(ctx); err != nil {
		var np noPlanError
		if errors.As(err, &np) {
			return p.s.end(ctx, horizon.ReasonError, np.Error())
		}
		return p.s.fail(ctx, err)
	}
	for {
		if err := p.s.holdIfPaused(ctx); err != nil {
			return p.s.fail(ctx, err)
		}
		if why, over := st.Budget.Exceeded(workflow.Now(ctx), st.Usage.Cost); over {
			return p.stopBudget(ctx, why)
		}
		waited, err := p.people.approvePlan(ctx)
		if err != nil {
			return p.s.fail(ctx, err)
		}
		if waited {
			continue
		}
		mi, fi, ok := st.Plan.Next()
		if !ok {
			if end, res, err := p.idle(ctx); end {
				return res, err
			}
			continue
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() || (p.in.FeaturesPerHistory > 0 && p.inHistory >= p.in.FeaturesPerHistory) {
			// Only with a feature to go on with: the end of the run is
			// written by the history that ends it.
			return nil, p.continueAsNew(ctx)
		}
		if end, res, err := p.feature(ctx, mi, fi); end {
			return res, err
		}
	}
}

// resume takes over the state carried from the history before: nothing
// is redone.
func (p *plannedRun) resume(ctx workflow.Context, c *Carry) {
	p.carry = *c
	p.carry.State = horizon.RunState{}
	p.s.state = c.State
	p.s.state.Histories++
	p.setup = c.Setup
	p.s.indexed = "" // the new history's search attribute is set afresh
	p.s.publish(ctx)
}

// feature runs the next feature, after its checkpoints, and applies its
// result. end says the run ended (with res, err).
func (p *plannedRun) feature(ctx workflow.Context, mi, fi int) (end bool, res *horizon.RunState, err error) {
	m := p.s.state.Plan.Milestones[mi]
	f := m.Features[fi]
	waited, err := p.people.approveWork(ctx, mi, m, f)
	if err != nil {
		res, err = p.s.fail(ctx, err)
		return true, res, err
	}
	if waited {
		return false, nil, nil
	}
	out, err := p.runFeature(ctx, m.ID, f)
	if err != nil {
		res, err = p.s.fail(ctx, err)
		return true, res, err
	}
	p.applyFeature(ctx, out)
	if out.Outcome == FeatureOutcomeBudget {
		res, err = p.stopBudget(ctx, out.Reason)
		return true, res, err
	}
	if err := p.rec.save(ctx); err != nil {
		res, err = p.s.fail(ctx, err)
		return true, res, err
	}
	return false, nil, nil
}

// idle handles a plan with nothing runnable: with every feature accepted
// the integration gate decides the end; otherwise what is left is blocked
// and the run waits for an unblock.
func (p *plannedRun) idle(ctx workflow.Context) (end bool, res *horizon.RunState, err error) {
	st := &p.s.state
	if !st.Plan.Done() {
		if err := p.people.awaitUnblock(ctx); err != nil {
			res, err = p.s.fail(ctx, err)
			return true, res, err
		}
		return false, nil, nil
	}
	passed, err := p.integrate(ctx)
	switch {
	case err != nil:
		res, err = p.s.fail(ctx, err)
		return true, res, err
	case passed:
		res, err = p.s.finish(ctx)
		return true, res, err
	case st.Status.Terminal():
		return true, nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
	}
	return false, nil, nil
}

// prepare runs everything before the first feature: preflight, the
// baseline gate on the base commit, and planning.
func (p *plannedRun) prepare(ctx workflow.Context) error {
	st, in := &p.s.state, p.in
	st.Autonomy = in.Autonomy
	if !st.Autonomy.Valid() {
		st.Autonomy = horizon.DefaultAutonomy
	}
	if in.BudgetTime > 0 || in.BudgetSpend > 0 {
		st.Budget = &horizon.Budget{Time: in.BudgetTime, Spend: in.BudgetSpend}
		if in.BudgetTime > 0 {
			st.Budget.Deadline = st.StartedAt.Add(in.BudgetTime)
		}
	}
	st.MaxAttempts = 0 // features are not capped; the budget is the stop
	st.Feature = ""
	var pre activities.PreflightOutput
	if err := execute(ctx, gitOptions("preflight: repo, gate, models"), a.Preflight, activities.PreflightInput{
		RunID: in.RunID, Repo: in.Repo, BaseCommit: in.BaseCommit, Model: in.Model, ModelsFile: in.ModelsFile,
		GateCommands: in.Limits.GateCommands,
	}, &pre); err != nil {
		return err
	}
	p.setup = Setup{Models: pre.Models, Paid: pre.Paid, Tiers: pre.Tiers, LocalContext: pre.LocalContext, Local: pre.Local, Gate: pre.GateRecord}
	st.Gate = pre.GateRecord
	p.setup.Lead, p.setup.LeadPaid = pre.Models[horizon.RoleWorker], pre.Paid[horizon.RoleWorker]
	if in.Model == "" && pre.Tiers[ladder.T4].Available {
		// Planning is the lead's role: the metered T4 rung when connected.
		p.setup.Lead, p.setup.LeadPaid = pre.Tiers[ladder.T4].Model, true
	}
	st.Models, st.Model = p.setup.Models, p.setup.Models[horizon.RoleWorker]

	// The baseline and the lead's reading both use a lane at the base
	// commit; features get lanes of their own, cut from the integration
	// branch as it grows.
	p.s.phase(ctx, horizon.PhaseBaseline)
	var lane activities.Lane
	if err := step(ctx, gitOptions("lane · baseline and planning"), a.PrepareLane, activities.LaneInput{
		RunID: in.RunID, Feature: "plan", Repo: in.Repo, BaseCommit: in.BaseCommit,
	}, &lane); err != nil {
		return err
	}
	limits := in.Limits.withDefaults()
	var baseline horizon.GateRun
	if err := execute(ctx, gateOptions(limits, "baseline gate · base commit"), a.RunGate, judged(ctx, activities.GateInput{
		RunID: in.RunID, Feature: "baseline", Attempt: 0, Repo: in.Repo, Lane: lane.Path, BaseCommit: in.BaseCommit, Timeout: limits.GateTimeout,
	}, pre.GateRecord, limits, nil), &baseline); err != nil {
		return err
	}
	st.Baseline = &baseline
	return p.plan(ctx, lane.Path)
}

// given takes the plan the run was started with (a supervisor's
// decomposition of a roadmap item) instead of planning: the lead already
// read the repository at this base, and a person approved the plan where
// the autonomy asked for it.
func (p *plannedRun) given(ctx workflow.Context) error {
	st := &p.s.state
	plan := *p.in.Plan
	plan.Refresh()
	st.Plan = &plan
	if p.in.PlanApproved {
		p.carry.Approved = append(p.carry.Approved, "plan")
	}
	p.rec.decide(ctx, "", fmt.Sprintf("took the supervisor's plan: %s, %s (ambiguity %s)", horizon.Plural(len(plan.Milestones), "milestone"), horizon.Plural(plan.Counts().Work(), "feature"), plan.Ambiguity),
		"the lead decomposed this roadmap item before the run started")
	p.s.phase(ctx, horizon.PhaseFeatures)
	return p.rec.save(ctx)
}

// noPlanError ends a run whose lead gave no valid plan: a failed run, not
// an activity error.
type noPlanError string

func (e noPlanError) Error() string { return string(e) }

// plan has the lead plan the goal and records the plan, its assumptions
// and the decisions they are.
func (p *plannedRun) plan(ctx workflow.Context, lanePath string) error {
	st := &p.s.state
	if p.in.Plan != nil {
		return p.given(ctx)
	}
	p.s.phase(ctx, horizon.PhasePlanning)
	ld := lead{runID: p.in.RunID, baseCommit: p.in.BaseCommit, model: p.setup.Lead, queue: p.setup.leadQueue(p.in.PaidQueue), limits: p.in.Limits.withDefaults(),
		throttle: p.throttleLead}
	planned, problem, err := ld.plan(ctx, lanePath, p.in.Goal)
	if planned != nil {
		st.Planning = st.Planning.Add(planned.Usage)
		recount(st)
	}
	if err != nil {
		return err
	}
	if planned.Plan.Milestones == nil {
		return noPlanError(fmt.Sprintf("no valid plan after %d tries; last problem: %s", planned.Tries, problem))
	}
	plan := planned.Plan
	st.Plan = &plan
	p.rec.decide(ctx, "", fmt.Sprintf("planned %s, %s (ambiguity %s)", horizon.Plural(len(plan.Milestones), "milestone"), horizon.Plural(plan.Counts().Work(), "feature"), plan.Ambiguity),
		fmt.Sprintf("the lead's plan was accepted after %d tries", planned.Tries), planned.Rejected...)
	for _, as := range plan.Assumptions {
		p.rec.decide(ctx, "", "assumed: "+as, fmt.Sprintf("the goal does not say; the lead assumed it (ambiguity %s)", plan.Ambiguity))
	}
	p.s.phase(ctx, horizon.PhaseFeatures)
	return p.rec.save(ctx)
}

// throttleLead weighs a planning session of a metered lead like the
// auditor's (changeLoop.throttled): near a ceiling (today's spend against the
// daily one, mostly: the run has spent little yet) the lead plans on the
// local model that ranks for it, or the run pauses before the metered
// call until a ceiling is raised.
func (p *plannedRun) throttleLead(ctx workflow.Context, metered session, spent float64) (grant, error) {
	if !p.setup.LeadPaid || version(ctx, changeThrottleLead, 1) < 1 {
		return unchecked(metered), nil
	}
	st := &p.s.state
	var deadline time.Time
	if st.Budget != nil {
		deadline = st.Budget.Deadline
	}
	spend := func(ctx workflow.Context) (ladder.Spend, error) {
		return spendOf(ctx, st, st.Usage.Cost+spent, p.in.ThrottleAt, deadline)
	}
	return authority{s: p.s, local: p.setup.Local, throttleAt: p.in.ThrottleAt, subject: "plan", spend: spend}.grant(ctx, horizon.RoleLead, metered, true)
}

// runFeature runs one feature as a child workflow and returns its result.
func (p *plannedRun) runFeature(ctx workflow.Context, milestone string, f horizon.Feature) (*FeatureResult, error) {
	st := &p.s.state
	if err := st.Plan.Start(f.ID); err != nil {
		return nil, err
	}
	st.Feature, st.Phase = f.ID, horizon.PhaseFeatures
	p.s.publish(ctx)
	p.carry.ChildSeq++
	note := p.carry.Notes[f.ID]
	if note != "" {
		note = fmt.Sprintf("A person unblocked this feature. Their note: %s", note)
	}
	cur, _ := st.Plan.Feature(f.ID)
	in := FeatureInput{
		RunID: p.in.RunID, Goal: p.in.Goal, Repo: p.in.Repo, BaseCommit: p.in.BaseCommit, Milestone: milestone,
		Feature: *cur, Setup: p.setup, Baseline: st.Baseline, Interval: p.in.Interval, Note: note,
		Prior: st.Usage.Cost - usageOf(*cur).Cost, Control: p.control(), ThrottleAt: p.in.ThrottleAt, LineCeiling: p.in.LineCeiling, Budget: st.Budget,
		Decompose: f.Parent == "" && !slices.Contains(p.carry.NoDecompose, f.ID),
		Limits:    p.in.Limits, PaidQueue: p.in.PaidQueue,
		Stall: p.in.Stall, StallSince: p.stallSince(f.ID),
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          fmt.Sprintf("%s.%s.%d", p.in.RunID, f.ID, p.carry.ChildSeq),
		StaticSummary:       fmt.Sprintf("%s · %s", f.ID, f.Title),
		WaitForCancellation: true,
	})
	cctx, p.cancelActive = workflow.WithCancel(cctx)
	p.active = workflow.ExecuteChildWorkflow(cctx, FeatureWorkflowName, in)
	var res FeatureResult
	err := p.active.Get(ctx, &res)
	p.active, p.cancelActive = nil, nil
	if sk := p.skipping; sk != nil && sk.Feature == f.ID {
		// A person skipped the feature while it ran: it stopped, and
		// what it had done stays in its lane, uncommitted. It answers
		// with its result; one cancelled before it heard the skip
		// answers with the cancellation.
		p.skipping = nil
		if err != nil && temporal.IsCanceledError(err) {
			cur, _ := st.Plan.Feature(f.ID)
			return &FeatureResult{Feature: *cur, Outcome: FeatureOutcomeSkipped, Reason: sk.Note}, nil
		}
		if err == nil && res.Outcome != FeatureOutcomeSkipped {
			// It ended on its own before the skip reached it: the skip
			// still stands, after its result.
			p.applyFeature(ctx, &res)
			res = FeatureResult{Feature: res.Feature, Outcome: FeatureOutcomeSkipped, Reason: sk.Note}
		}
	}
	st.Outage = nil // what the feature's activities waited out is over
	p.showBackoff(ctx, nil)
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
func (p *plannedRun) applyFeature(ctx workflow.Context, res *FeatureResult) {
	st := &p.s.state
	id := res.Feature.ID
	f, ok := st.Plan.Feature(id)
	if !ok {
		return
	}
	f.Attempts, f.ReceiptIDs = res.Feature.Attempts, res.Feature.ReceiptIDs
	f.Strategy = horizon.StrategyFor(f.AttemptCount(), p.in.Interval)
	st.Planning = st.Planning.Add(res.Planning)
	for _, d := range res.Decisions {
		p.rec.add(d)
	}
	switch res.Outcome {
	case FeatureOutcomeAccepted:
		if err := st.Plan.Accept(id, res.Commit); err != nil {
			// Only the receipts can make a feature accepted; a result that
			// does not show them is kept running and said so.
			p.rec.decide(ctx, id, "kept "+id+" open", err.Error())
			break
		}
		p.carry.Features++
		p.inHistory++
	case FeatureOutcomeBlocked:
		if err := st.Plan.Block(id, *res.Blocker); err != nil {
			p.rec.decide(ctx, id, "kept "+id+" running", "its blocker was not accepted: "+err.Error())
			break
		}
		p.rec.decide(ctx, id, fmt.Sprintf("paused %s on a %s blocker; features that do not depend on it go on", id, res.Blocker.Type), res.Blocker.Evidence, receiptsOf(f.Attempts)...)
		p.s.notifyBlocked(ctx, id, f.AttemptCount(), *res.Blocker)
		p.inHistory++
	case FeatureOutcomeSkipped:
		p.applySkip(ctx, Skip{Feature: id, Note: res.Reason})
	case FeatureOutcomeDecompose:
		if err := st.Plan.Decompose(id, res.Parts); err != nil {
			p.carry.NoDecompose = append(p.carry.NoDecompose, id)
			p.rec.decide(ctx, id, id+" is not decomposed; its next attempt shrinks it itself", "the proposed parts were not valid: "+err.Error())
			break
		}
		var ids []string
		for _, part := range res.Parts {
			ids = append(ids, part.ID)
		}
		p.rec.decide(ctx, id, fmt.Sprintf("decomposed %s into %s", id, strings.Join(ids, ", ")),
			fmt.Sprintf("%d attempts through correction, replanning and research did not converge", f.AttemptCount()), receiptsOf(f.Attempts)...)
		p.inHistory++
	}
	st.Feature = ""
	recount(st)
	p.s.publish(ctx)
}

// validateSkip wants a note and a feature of the plan that can still be
// left out (not accepted, decomposed or skipped already).
func (p *plannedRun) validateSkip(sk Skip) error {
	st := &p.s.state
	if strings.TrimSpace(sk.Note) == "" {
		return errNoNote
	}
	if st.Plan == nil {
		return fmt.Errorf("run %s has no plan yet, so there is no feature to skip", st.RunID)
	}
	f, ok := st.Plan.Feature(strings.TrimSpace(sk.Feature))
	if !ok {
		return fmt.Errorf("run %s has no feature %q; `horizon status %s` lists them", st.RunID, sk.Feature, st.RunID)
	}
	switch f.Status {
	case horizon.FeatureAccepted, horizon.FeatureDecomposed, horizon.FeatureSkipped:
		return fmt.Errorf("feature %s is %s already; only a feature not yet done can be skipped", f.ID, f.Status)
	}
	if p.skipping != nil {
		return fmt.Errorf("feature %s is being skipped; wait until it has stopped", p.skipping.Feature)
	}
	return nil
}

// skip leaves a feature out as a person's decision: at once when it does
// not run, else once its workflow, cancelled here, has stopped
// (runFeature).
func (p *plannedRun) skip(ctx workflow.Context, sk Skip) (*horizon.RunState, error) {
	st := &p.s.state
	sk.Feature, sk.Note = strings.TrimSpace(sk.Feature), strings.TrimSpace(sk.Note)
	if st.Feature == sk.Feature && p.cancelActive != nil {
		p.skipping = &sk
		p.active.SignalChildWorkflow(ctx, SignalSkipFeature, sk)
		p.cancelActive()
		return st, nil
	}
	p.applySkip(ctx, sk)
	p.people.changed++ // a run waiting on a blocker looks again
	p.s.publish(ctx)
	return st, nil
}

// applySkip marks a feature skipped in the plan, and records the decision.
func (p *plannedRun) applySkip(ctx workflow.Context, sk Skip) {
	st := &p.s.state
	if err := st.Plan.Skip(sk.Feature, sk.Note); err != nil {
		p.rec.decide(ctx, sk.Feature, "kept "+sk.Feature, "a skip was not applied: "+err.Error())
		return
	}
	why := "a person's note: " + sk.Note
	if held := st.Plan.DependentsOf(sk.Feature); len(held) > 0 {
		why += fmt.Sprintf("; %s that depend on it stay blocked unless they are skipped too", strings.Join(held, ", "))
	}
	p.rec.decide(ctx, sk.Feature, "skipped "+sk.Feature, why)
	recount(st)
}

// receiveProgress shows a running feature's finished attempts in the plan
// as their progress signals arrive.
func (p *plannedRun) receiveProgress(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, SignalProgress)
	for {
		var pr Progress
		if !ch.Receive(ctx, &pr) {
			return
		}
		st := &p.s.state
		if st.Plan == nil {
			continue
		}
		if f, ok := st.Plan.Feature(pr.Feature); !ok || f.Status != horizon.FeatureRunning {
			continue
		}
		if pr.Attempt.N == 0 {
			if p.active != nil { // a late signal never outlives its feature
				p.showBackoff(ctx, pr.Backoff)
			}
			continue
		}
		if err := st.Plan.RecordAttempt(pr.Feature, pr.Attempt, p.in.Interval); err == nil {
			recount(st)
			p.s.publish(ctx)
		}
	}
}

// integrate runs the gate on the integration branch once every feature is
// accepted. A failing gate adds a repair feature (features can interact
// in ways no single feature's gate saw), up to maxIntegrationTries; then
// the run fails with the gate's evidence.
func (p *plannedRun) integrate(ctx workflow.Context) (bool, error) {
	st, limits := &p.s.state, p.in.Limits.withDefaults()
	p.s.phase(ctx, horizon.PhaseFinalGate)
	var lane activities.Lane
	if err := step(ctx, gitOptions("integration worktree · "+st.Branch), a.PrepareIntegration, activities.IntegrationInput{RunID: p.in.RunID, Repo: p.in.Repo}, &lane); err != nil {
		return false, err
	}
	var g horizon.GateRun
	if err := execute(ctx, gateOptions(limits, "integration gate · "+st.Branch), a.RunGate, judged(ctx, activities.GateInput{
		RunID: p.in.RunID, Feature: "integration", Attempt: p.carry.IntegrationTries + 1, Repo: p.in.Repo, Lane: lane.Path, BaseCommit: p.in.BaseCommit, Timeout: limits.GateTimeout,
	}, p.setup.Gate, limits, st.Baseline), &g); err != nil {
		return false, err
	}
	st.Integration = &g
	if g.Passed() {
		p.rec.decide(ctx, "", "the integration gate passed on "+st.Branch, "every feature was accepted; the gate ran on the branch's tip", g.ReceiptID)
		return true, p.rec.save(ctx)
	}
	p.carry.IntegrationTries++
	if p.carry.IntegrationTries > maxIntegrationTries {
		st.End(horizon.StatusFailed, horizon.ReasonIntegration,
			fmt.Sprintf("the gate fails on %s after %d repair features (receipt %s); failing: %s", st.Branch, maxIntegrationTries, g.ReceiptID, strings.Join(g.Failing, ", ")), workflow.Now(ctx))
		_ = p.rec.save(ctx)
		p.s.handoff(ctx)
		p.s.publish(ctx)
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
	p.rec.decide(ctx, id, "added feature "+id+" to repair the integration branch",
		fmt.Sprintf("every feature was accepted but the gate fails on %s (verdict %s)", st.Branch, g.Verdict), g.ReceiptID)
	return false, p.rec.save(ctx)
}

// stopBudget ends the run at its budget: the one hard stop, reported as
// such, with the handoff of what was done.
func (p *plannedRun) stopBudget(ctx workflow.Context, why string) (*horizon.RunState, error) {
	st := &p.s.state
	st.Waiting = nil
	st.End(horizon.StatusFailed, horizon.ReasonBudget, why, workflow.Now(ctx))
	p.rec.decide(ctx, st.Feature, "stopped the run", why)
	_ = p.rec.save(ctx)
	p.s.handoff(ctx)
	p.s.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
}

// continueAsNew hands the run to a fresh history between features (no
// agent activity runs then), carrying its compact state. The run goes on
// as the type it runs as: a run recorded as a RunWorkflow (started before
// each kind had its own type) as a RunWorkflow with its RunInput.
func (p *plannedRun) continueAsNew(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if err := p.rec.save(ctx); err != nil {
		return err
	}
	carry := p.carry
	carry.State, carry.Setup = p.s.state, p.setup
	next := p.in
	next.Carry = &carry
	if workflow.GetInfo(ctx).WorkflowType.Name == RunWorkflowName {
		return workflow.NewContinueAsNewError(ctx, RunWorkflowName, next.runInput())
	}
	return workflow.NewContinueAsNewError(ctx, PlannedRunWorkflowName, next)
}

// stallSince is where feature id's stall is judged from: the plan's last
// accepted feature, or a person's unblock of it, whichever came last.
func (p *plannedRun) stallSince(id string) time.Time {
	since := p.s.state.Plan.LastAccepted()
	if t := p.carry.Unblocked[id]; t.After(since) {
		since = t
	}
	return since
}

// showBackoff shows the running feature's backoff (nil: none) in the run's
// status: its reason says it while it lasts.
func (p *plannedRun) showBackoff(ctx workflow.Context, bo *horizon.Backoff) {
	st := &p.s.state
	if st.Backoff == nil && bo == nil {
		return
	}
	if bo != nil && st.Status != horizon.StatusRunning {
		return // a blocked or paused-for-approval run has no feature backing off
	}
	if st.Backoff != nil && st.Reason == st.Backoff.Line() {
		st.Reason = ""
	}
	st.Backoff = bo
	if bo != nil {
		st.Reason = bo.Line()
	}
	p.s.publish(ctx)
}

// unblockRunning lets a person's unblock of the running feature, backing
// off stalled, reach it: the control counts unblocks.
func (p *plannedRun) unblockRunning(ctx workflow.Context, note string) {
	p.carry.Unblocks++
	p.carry.UnblockNote = note
	p.forward(ctx)
}

// control is what the running feature must know of pause and ceilings.
func (p *plannedRun) control() Control {
	st := &p.s.state
	return Control{Paused: st.Paused, Ceiling: st.Ceiling, DayCeiling: st.DayCeiling, Unblocks: p.carry.Unblocks, Note: p.carry.UnblockNote}
}

// forward sends the current control to the running feature, if any.
func (p *plannedRun) forward(ctx workflow.Context) {
	if p.active != nil {
		p.active.SignalChildWorkflow(ctx, SignalControl, p.control())
	}
}
