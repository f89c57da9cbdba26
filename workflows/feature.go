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
)

// FeatureInput starts one feature of a planned run. The feature carries
// its earlier attempts (before an unblock, or before continue-as-new), so
// the recovery rotation and the next brief pick up where they were.
type FeatureInput struct {
	RunID      string
	Goal       string
	Repo       string
	BaseCommit string // the run's base: where the integration branch starts
	Milestone  string
	Feature    horizon.Feature
	Setup      Setup
	Baseline   *horizon.GateRun
	// Interval is recovery_escalation_interval (0: the default).
	Interval int
	// Note is a person's unblock note for the next attempt.
	Note string
	// Prior is what the run spent before this feature; ceilings and the
	// budget are the run's, not the feature's.
	Prior      float64
	Control    Control
	ThrottleAt float64
	// LineCeiling is the run's line ceiling for the feature's card.
	LineCeiling int
	Budget      *horizon.Budget
	// Decompose lets the feature ask the lead to split it once the
	// rotation reaches decomposition.
	Decompose bool
	Limits    Limits
	PaidQueue string
	// Stall is run.stall_backoff and run.stall_block_after: a stalled
	// feature backs off between attempts, then blocks (stall.go).
	Stall horizon.StallPolicy
	// StallSince is the run's last progress for this feature (an
	// accepted sibling, a person's unblock): attempts that started before
	// it do not count toward a stall.
	StallSince time.Time
}

// FeatureOutcome is how a feature workflow ended.
type FeatureOutcome string

// Feature outcomes. There is no "failed": failures rotate the strategy.
const (
	FeatureOutcomeAccepted  FeatureOutcome = "accepted"  // committed onto the integration branch
	FeatureOutcomeBlocked   FeatureOutcome = "blocked"   // a typed blocker with evidence
	FeatureOutcomeDecompose FeatureOutcome = "decompose" // replace the feature by Parts
	FeatureOutcomeBudget    FeatureOutcome = "budget"    // the run's budget ran out
	// FeatureOutcomeSkipped: a person skipped the feature while it ran,
	// and the run cancelled it (SignalSkipFeature).
	FeatureOutcomeSkipped FeatureOutcome = "skipped"
)

// FeatureResult is what the run applies to its plan.
type FeatureResult struct {
	Feature   horizon.Feature // with every attempt so far and its receipts
	Outcome   FeatureOutcome
	Commit    string
	Blocker   *horizon.Blocker
	Parts     []horizon.Feature
	Reason    string
	Decisions []horizon.Decision // strategy switches, decompositions (no Seq: the run numbers them)
	Planning  horizon.Usage      // the lead's decomposition sessions
}

// Progress is one finished attempt of a running feature (SignalProgress),
// or (Attempt.N 0) the start or end of its backoff.
type Progress struct {
	Feature string
	Attempt horizon.Attempt
	// Backoff is the backoff the feature waits in now (nil: none).
	Backoff *horizon.Backoff
}

// FeatureWorkflow runs one feature through the verified-change loop with
// the routing ladder: lane (cut from the integration branch) → worker →
// gate → auditor → commit. A failed attempt feeds the next; every
// Interval attempts the recovery strategy rotates (focused correction →
// replan → research → decomposition). Failures never end it: it ends
// accepted, on a typed blocker, with a decomposition for the run to apply,
// or when the run's budget is spent.
func FeatureWorkflow(ctx workflow.Context, in FeatureInput) (*FeatureResult, error) {
	f, err := newFeatureRun(ctx, in)
	if err != nil {
		return nil, err
	}
	res, err := f.run(withStatus(ctx, f.s))
	var sk Skip
	if err != nil && temporal.IsCanceledError(err) && workflow.GetSignalChannel(ctx, SignalSkipFeature).ReceiveAsync(&sk) {
		// Cancelled because a person skipped the feature: what it
		// decided so far goes to the run with the skip.
		return f.result(FeatureOutcomeSkipped, sk.Note), nil
	}
	return res, err
}

// featureRun is one FeatureWorkflow: a loop, the recovery rotation around
// it, and the result it hands its run.
type featureRun struct {
	s          *runStatus
	in         FeatureInput
	changeLoop *changeLoop
	res        FeatureResult
	// note is a person's unblock note, for the next attempt.
	note string
	// blocked is the typed blocker that ends the feature.
	blocked        *horizon.Blocker
	decomposeTried bool
	// stall is the stall policy's state (stall.go).
	stall stallState
}

// newFeatureRun builds the feature's state and loop from its input, and
// registers the status query and the run's control signal.
func newFeatureRun(ctx workflow.Context, in FeatureInput) (*featureRun, error) {
	feat := in.Feature
	s := &runStatus{indexed: horizon.StatusRunning, state: horizon.RunState{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseCommit: in.BaseCommit, Branch: horizon.IntegrationBranch(in.RunID),
		Feature: feat.ID, Model: in.Setup.Models[horizon.RoleWorker], Models: in.Setup.Models, Status: horizon.StatusRunning, Phase: horizon.PhaseLane,
		Baseline: in.Baseline, Ceiling: in.Control.Ceiling, DayCeiling: in.Control.DayCeiling, Paused: in.Control.Paused,
		Attempts: slices.Clone(feat.Attempts), Budget: in.Budget, StartedAt: workflow.Now(ctx), UpdatedAt: workflow.Now(ctx),
	}}
	if s.state.Attempts == nil {
		s.state.Attempts = []horizon.Attempt{}
	}
	s.state.Recount()
	s.takeLocalSteps(ctx)
	f := &featureRun{s: s, in: in, note: in.Note, stall: stallState{since: in.StallSince}}
	id := feat.ID
	if id == "" {
		id = DefaultFeature
	}
	f.changeLoop = &changeLoop{
		s: s, runID: in.RunID, goal: in.Goal, repo: in.Repo, baseCommit: in.BaseCommit,
		job:   job{id: id, task: horizon.FeatureTask(in.Goal, feat), title: feat.Title, kind: feat.Kind, paths: feat.Paths, acceptance: feat.Acceptance, lineCeiling: in.LineCeiling},
		setup: in.Setup, limits: in.Limits.withDefaults(), paidQueue: in.PaidQueue, throttleAt: in.ThrottleAt,
		prior: in.Prior, onBlocker: f.handOver, onDecide: f.decide,
	}
	if in.Budget != nil {
		f.changeLoop.deadline = in.Budget.Deadline
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, f.status); err != nil {
		return nil, fmt.Errorf("register status query: %w", err)
	}
	workflow.Go(ctx, f.receiveControl)
	return f, nil
}

func (f *featureRun) status() (*horizon.RunState, error) { return &f.s.state, nil }

// receiveControl applies the run's pause and ceilings as they change.
func (f *featureRun) receiveControl(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, SignalControl)
	for {
		var c Control
		if !ch.Receive(ctx, &c) {
			return
		}
		f.s.state.Paused, f.s.state.Ceiling, f.s.state.DayCeiling = c.Paused, c.Ceiling, c.DayCeiling
		f.unblocked(ctx, c)
	}
}

func (f *featureRun) run(ctx workflow.Context) (*FeatureResult, error) {
	st, in := &f.s.state, f.in
	l := f.changeLoop
	if err := step(ctx, l.bound(ctx, gitOptions("lane "+in.Feature.ID)), a.PrepareLane, activities.LaneInput{
		RunID: in.RunID, Feature: in.Feature.ID, Repo: in.Repo, BaseCommit: in.BaseCommit, FromIntegration: true,
		Project: l.project(),
	}, &l.lane); err != nil {
		if overBudget(ctx, l.deadline, err) {
			return f.result(FeatureOutcomeBudget, f.budgetReason(ctx, err)), nil
		}
		return nil, err
	}
	if l.lane.Base != "" {
		l.baseCommit, st.BaseCommit = l.lane.Base, l.lane.Base
	}
	st.Lane, st.LaneBranch = l.lane.Path, l.lane.Branch
	for {
		if err := l.ready(ctx); err != nil {
			return nil, err
		}
		if why, over := in.Budget.Exceeded(workflow.Now(ctx), l.spent()); over {
			return f.result(FeatureOutcomeBudget, why+f.budgetContext(nil)), nil
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return nil, f.continueAsNew(ctx)
		}
		waited, res, err := f.backOff(ctx)
		if res != nil || err != nil {
			return res, err
		}
		if waited {
			continue // a pause, the budget or a ceiling may have come meanwhile
		}
		if res, err := f.next(ctx); res != nil || err != nil {
			return res, err
		}
		f.s.publish(ctx)
	}
}

// next runs the next step under the recovery strategy: the lead's
// decomposition once the rotation reaches it, else a loop step. It returns
// a result once the feature ends.
func (f *featureRun) next(ctx workflow.Context) (*FeatureResult, error) {
	st := &f.s.state
	f.stall.waiting = nil
	count := countAttempts(st.Attempts)
	strategy := f.rotate(ctx, count)
	prev, guidance := previous(st.Attempts)
	if strategy == horizon.StrategyDecomposition && f.in.Decompose && !f.decomposeTried {
		f.decomposeTried = true
		parts, err := f.decompose(ctx, count+1, prev)
		if overBudget(ctx, f.changeLoop.deadline, err) {
			return f.result(FeatureOutcomeBudget, f.budgetReason(ctx, err)), nil
		}
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 {
			f.res.Parts = parts
			return f.result(FeatureOutcomeDecompose, fmt.Sprintf("decomposed into %d parts", len(parts))), nil
		}
	}
	if f.note != "" {
		guidance = strings.TrimSpace(f.note + "\n\n" + guidance)
		f.note = ""
	}
	if count > 0 {
		guidance = strings.TrimSpace(horizon.StrategyGuidance(strategy) + "\n" + guidance)
	}
	attempted, done, err := f.changeLoop.step(ctx, count+1, prev, guidance, strategy)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == FailureRunBlocked && st.Blocker != nil {
		// No tier of the ladder can serve the feature: that is a
		// platform limit with the ladder's reason as evidence.
		f.blocked, err = st.Blocker, nil
	}
	if overBudget(ctx, f.changeLoop.deadline, err) {
		// An outage outlasted the budget: the one hard stop, not a failure.
		return f.result(FeatureOutcomeBudget, f.budgetReason(ctx, err)), nil
	}
	if err != nil {
		return nil, err
	}
	if f.blocked == nil && !done {
		f.blocked = protocolLimit(st.Attempts)
	}
	if attempted && !(f.s.steps && (done || f.blocked != nil)) {
		// The attempt that ends the feature reaches the run with its
		// result; a signal beside it would cost both histories events.
		f.progress(ctx)
	}
	switch {
	case f.blocked != nil:
		f.res.Blocker = f.blocked
		return f.result(FeatureOutcomeBlocked, fmt.Sprintf("blocked (%s): %s", f.blocked.Type, f.blocked.Evidence)), nil
	case done:
		f.res.Commit = st.Commit
		return f.result(FeatureOutcomeAccepted, ""), nil
	}
	return nil, nil
}

// budgetReason says why an activity cut off by the budget ended the
// feature: the budget, and what the feature was doing then, as recorded
// (budgetContext).
func (f *featureRun) budgetReason(ctx workflow.Context, err error) string {
	why, over := f.in.Budget.Exceeded(workflow.Now(ctx), f.changeLoop.spent())
	if !over && f.in.Budget != nil {
		// The next try would fall after the deadline: the budget is spent.
		why = fmt.Sprintf("run budget: time limit %s reached at %s", f.in.Budget.Time, f.in.Budget.Deadline.UTC().Format(time.RFC3339))
	}
	return why + f.budgetContext(err)
}

// rotate is the recovery strategy after count attempts; a change of
// strategy is a decision, with the receipts that led to it.
func (f *featureRun) rotate(ctx workflow.Context, count int) horizon.Strategy {
	strategy := horizon.StrategyFor(count, f.in.Interval)
	if count > 0 && strategy != horizon.StrategyFor(count-1, f.in.Interval) {
		f.decide(ctx, fmt.Sprintf("recovery strategy for %s: %s", f.in.Feature.ID, strategy.Title()),
			fmt.Sprintf("%d attempts without an accepted change; every %d attempts the strategy changes", count, intervalOr(f.in.Interval)),
			receiptsOf(f.s.state.Attempts)...)
	}
	return strategy
}

// handOver is the loop's onBlocker: a planned run's feature hands a typed
// blocker to its run, which goes on with the features that do not depend
// on it.
func (f *featureRun) handOver(_ workflow.Context, b horizon.Blocker) (bool, error) {
	f.blocked = &b
	return true, nil
}

// continueAsNew hands the feature to a fresh history with its attempts so
// far; it runs between attempts, when no agent activity runs.
func (f *featureRun) continueAsNew(ctx workflow.Context) error {
	st := &f.s.state
	next := f.in
	next.Feature = f.soFar()
	next.Note, next.Control = f.note, Control{Paused: st.Paused, Ceiling: st.Ceiling, DayCeiling: st.DayCeiling, Unblocks: f.stall.unblocks}
	next.StallSince = f.stall.since
	return workflow.NewContinueAsNewError(ctx, FeatureWorkflowName, next)
}

// decompose asks the lead to split the feature. A reply without a valid
// plan, or with fewer than two parts, is no decomposition: the caller goes
// on with a worker attempt under the decomposition strategy instead.
func (f *featureRun) decompose(ctx workflow.Context, n int, prev *horizon.Attempt) ([]horizon.Feature, error) {
	feat, l := f.soFar(), f.changeLoop
	model, queue, paid := l.setup.Models[horizon.RoleWorker], l.setup.queue(horizon.RoleWorker, l.paidQueue), l.setup.Paid[horizon.RoleWorker]
	if s := l.setup; s.Lead != "" {
		model, queue, paid = s.Lead, s.leadQueue(l.paidQueue), s.LeadPaid
	}
	ses, err := l.throttled(ctx, horizon.RoleLead, session{model: model, queue: queue}, paid)
	if err != nil {
		return nil, err
	}
	model, queue = ses.model, ses.queue
	var out activities.SessionOutput
	if err := ses.call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("lead · decompose %s · after attempt %d", feat.ID, n-1), queue)), a.AgentSession, activities.SessionInput{
		RunID: l.runID, Feature: feat.ID, Attempt: n, Role: horizon.RoleLead, Goal: l.goal, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		Model: model, Prompt: horizon.DecomposeBrief(l.goal, feat, prev), Title: l.goal,
	}, &out); err != nil {
		return nil, err
	}
	f.res.Planning = f.res.Planning.Add(out.Usage)
	l.prior += out.Usage.Cost
	notDecomposed := fmt.Sprintf("%s is not decomposed; the next attempt shrinks it itself", feat.ID)
	if out.Plan == nil || out.ProtocolError != "" {
		f.decide(ctx, notDecomposed, "the lead's decomposition was not a valid plan: "+out.ProtocolError)
		return nil, nil
	}
	parts := horizon.PartsOf(feat, *out.Plan)
	if len(parts) < 2 {
		f.decide(ctx, notDecomposed, fmt.Sprintf("the lead proposed %d part(s); a decomposition needs at least two", len(parts)))
		return nil, nil
	}
	return parts, nil
}

// progress tells the parent run about the attempt that just ended.
func (f *featureRun) progress(ctx workflow.Context) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	c := f.s.state.Current()
	if parent == nil || c == nil {
		return
	}
	// Not waited for: a lost progress signal costs only a stale status
	// line; the feature's result carries every attempt anyway.
	workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalProgress, Progress{Feature: f.changeLoop.job.id, Attempt: *c})
}

// decide records a decision of the feature for the run to number and write.
func (f *featureRun) decide(ctx workflow.Context, what, why string, evidence ...string) {
	if d, ok := newDecision(ctx, f.changeLoop.job.id, what, why, evidence...); ok {
		f.res.Decisions = append(f.res.Decisions, d)
	}
}

// soFar is the feature with the attempts made so far.
func (f *featureRun) soFar() horizon.Feature {
	feat := f.in.Feature
	feat.Attempts = slices.Clone(f.s.state.Attempts)
	feat.ReceiptIDs = receiptsOf(feat.Attempts)
	return feat
}

// result is the feature's result, ending with outcome o.
func (f *featureRun) result(o FeatureOutcome, reason string) *FeatureResult {
	f.res.Feature, f.res.Outcome, f.res.Reason = f.soFar(), o, reason
	return &f.res
}

// countAttempts counts change attempts (retrieval steps change nothing).
func countAttempts(as []horizon.Attempt) int {
	return horizon.Feature{Attempts: as}.AttemptCount()
}

func receiptsOf(as []horizon.Attempt) []string {
	var ids []string
	for _, a := range as {
		if a.Gate != nil && a.Gate.ReceiptID != "" {
			ids = append(ids, a.Gate.ReceiptID)
		}
	}
	return ids
}

func intervalOr(n int) int {
	if n < 1 {
		return horizon.DefaultRecoveryEscalationInterval
	}
	return n
}

// maxProtocolErrors is how many attempts in a row may end without a valid
// report before the feature is blocked: a model that cannot follow the
// report protocol will not start to by being asked again, and every ask
// costs a session.
const maxProtocolErrors = 5

// protocolLimit blocks the feature (platform_limit, with the errors as
// evidence) once its last maxProtocolErrors attempts were protocol errors.
func protocolLimit(as []horizon.Attempt) *horizon.Blocker {
	var last []string
	for i := len(as) - 1; i >= 0 && len(last) < maxProtocolErrors; i-- {
		if as[i].Action != "" {
			continue
		}
		if as[i].Outcome != horizon.OutcomeProtocolError {
			return nil
		}
		last = append(last, fmt.Sprintf("attempt %d (%s): %s", as[i].N, as[i].Model, as[i].ProtocolError))
	}
	if len(last) < maxProtocolErrors {
		return nil
	}
	b, err := horizon.NewBlocker(horizon.BlockerPlatformLimit, fmt.Sprintf("the last %d attempts ended without a valid horizon-report block: %s", maxProtocolErrors, strings.Join(last, "; ")))
	if err != nil {
		return nil
	}
	return &b
}
