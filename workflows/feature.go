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
	Budget     *horizon.Budget
	// Decompose lets the feature ask the lead to split it once the
	// rotation reaches decomposition.
	Decompose bool
	Limits    Limits
	PaidQueue string
}

// FeatureOutcome is how a feature workflow ended.
type FeatureOutcome string

// Feature outcomes. There is no "failed": failures rotate the strategy.
const (
	FeatureOutcomeAccepted  FeatureOutcome = "accepted"  // committed onto the integration branch
	FeatureOutcomeBlocked   FeatureOutcome = "blocked"   // a typed blocker with evidence
	FeatureOutcomeDecompose FeatureOutcome = "decompose" // replace the feature by Parts
	FeatureOutcomeBudget    FeatureOutcome = "budget"    // the run's budget ran out
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

// SignalProgress is the signal a feature sends its run after each attempt
// (Progress), so the run's status shows attempts as they happen.
const SignalProgress = "feature-progress"

// Progress is one finished attempt of a running feature.
type Progress struct {
	Feature string
	Attempt horizon.Attempt
}

// FeatureWorkflow runs one feature through the verified-change loop with
// the routing ladder: lane (cut from the integration branch) → worker →
// gate → auditor → commit. A failed attempt feeds the next; every
// Interval attempts the recovery strategy rotates (focused correction →
// replan → research → decomposition). Failures never end it: it ends
// accepted, on a typed blocker, with a decomposition for the run to apply,
// or when the run's budget is spent.
func FeatureWorkflow(ctx workflow.Context, in FeatureInput) (*FeatureResult, error) {
	f := in.Feature
	r := &run{
		in: RunInput{
			RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseCommit: in.BaseCommit, Kind: string(f.Kind),
			ThrottleAt: in.ThrottleAt, PaidQueue: in.PaidQueue, Limits: in.Limits,
		},
		limits: in.Limits.withDefaults(), dayCeiling: in.Control.DayCeiling, indexed: horizon.StatusRunning,
		feature: f.ID, task: horizon.FeatureTask(in.Goal, f), title: f.Title, paths: f.Paths, prior: in.Prior, child: true,
		models: in.Setup.Models, paid: in.Setup.Paid, tiers: in.Setup.Tiers, localContext: in.Setup.LocalContext,
		unblockNote: in.Note, featureIn: f, setup: &in.Setup,
	}
	r.state = horizon.RunState{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseCommit: in.BaseCommit, Branch: horizon.IntegrationBranch(in.RunID),
		Feature: f.ID, Model: in.Setup.Models["worker"], Models: in.Setup.Models, Status: horizon.StatusRunning, Phase: horizon.PhaseLane,
		Baseline: in.Baseline, Ceiling: in.Control.Ceiling, DayCeiling: in.Control.DayCeiling, Paused: in.Control.Paused,
		Attempts: slices.Clone(f.Attempts), Budget: in.Budget, StartedAt: workflow.Now(ctx), UpdatedAt: workflow.Now(ctx),
	}
	if r.state.Attempts == nil {
		r.state.Attempts = []horizon.Attempt{}
	}
	r.state.Recount()
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (*horizon.RunState, error) { return &r.state, nil }); err != nil {
		return nil, fmt.Errorf("register status query: %w", err)
	}
	control := workflow.GetSignalChannel(ctx, SignalControl)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var c Control
			if !control.Receive(ctx, &c) {
				return
			}
			r.state.Paused, r.state.Ceiling, r.dayCeiling, r.state.DayCeiling = c.Paused, c.Ceiling, c.DayCeiling, c.DayCeiling
		}
	})

	res := &FeatureResult{}
	var lane activities.Lane
	if err := r.exec(ctx, gitOptions("lane "+f.ID), a.PrepareLane, activities.LaneInput{
		RunID: in.RunID, Feature: f.ID, Repo: in.Repo, BaseCommit: in.BaseCommit, FromIntegration: true,
	}, &lane); err != nil {
		return nil, err
	}
	if lane.Base != "" {
		r.in.BaseCommit, r.state.BaseCommit = lane.Base, lane.Base
	}
	r.state.Lane, r.state.LaneBranch = lane.Path, lane.Branch

	decomposeTried := false
	for {
		if err := r.holdIfPaused(ctx); err != nil {
			return nil, err
		}
		if err := r.underCeiling(ctx); err != nil {
			return nil, err
		}
		if why, over := in.Budget.Exceeded(workflow.Now(ctx), r.spent()); over {
			return r.featureResult(res, FeatureOutcomeBudget, why), nil
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			// Between attempts no agent activity runs: a fresh history
			// takes the feature with its attempts so far.
			next := in
			next.Feature = r.featureSoFar()
			next.Note, next.Control = r.unblockNote, Control{Paused: r.state.Paused, Ceiling: r.state.Ceiling, DayCeiling: r.dayCeiling}
			return nil, workflow.NewContinueAsNewError(ctx, FeatureWorkflowName, next)
		}
		count := countAttempts(r.state.Attempts)
		strategy := horizon.StrategyFor(count, in.Interval)
		if count > 0 && strategy != horizon.StrategyFor(count-1, in.Interval) {
			r.decide(ctx, res, fmt.Sprintf("recovery strategy for %s: %s", f.ID, strategy.Title()),
				fmt.Sprintf("%d attempts without an accepted change; every %d attempts the strategy changes", count, intervalOr(in.Interval)),
				receiptsOf(r.state.Attempts)...)
		}
		prev, guidance := r.previous()
		if strategy == horizon.StrategyDecomposition && in.Decompose && !decomposeTried {
			decomposeTried = true
			parts, err := r.decompose(ctx, res, count+1, lane, prev)
			if err != nil {
				return nil, err
			}
			if len(parts) > 0 {
				res.Parts = parts
				return r.featureResult(res, FeatureOutcomeDecompose, fmt.Sprintf("decomposed into %d parts", len(parts))), nil
			}
		}
		if r.unblockNote != "" {
			guidance = strings.TrimSpace(r.unblockNote + "\n\n" + guidance)
			r.unblockNote = ""
		}
		if count > 0 {
			guidance = strings.TrimSpace(horizon.StrategyGuidance(strategy) + "\n" + guidance)
		}
		n := count + 1
		attempted, done, err := r.step(ctx, n, lane, prev, guidance, strategy)
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == FailureRunBlocked && r.state.Blocker != nil {
			// No tier of the ladder can serve the feature: that is a
			// platform limit with the ladder's reason as evidence.
			r.blocked, err = r.state.Blocker, nil
		}
		if err != nil {
			return nil, err
		}
		if attempted {
			r.progress(ctx)
		}
		if r.blocked == nil && !done {
			r.blocked = protocolLimit(r.state.Attempts)
		}
		switch {
		case r.blocked != nil:
			res.Blocker = r.blocked
			return r.featureResult(res, FeatureOutcomeBlocked, fmt.Sprintf("blocked (%s): %s", r.blocked.Type, r.blocked.Evidence)), nil
		case done:
			res.Commit = r.state.Commit
			return r.featureResult(res, FeatureOutcomeAccepted, ""), nil
		}
		r.publish(ctx)
	}
}

// decompose asks the lead to split the feature. A reply without a valid
// plan, or with fewer than two parts, is no decomposition: the caller goes
// on with a worker attempt under the decomposition strategy instead.
func (r *run) decompose(ctx workflow.Context, res *FeatureResult, n int, lane activities.Lane, prev *horizon.Attempt) ([]horizon.Feature, error) {
	f := r.featureSoFar()
	model, queue := r.models["worker"], r.queue("worker")
	if s := r.leadSetup(); s.Lead != "" {
		model, queue = s.Lead, s.leadQueue(r.in.PaidQueue)
	}
	var out activities.SessionOutput
	if err := r.exec(ctx, sessionOptions(r.limits, fmt.Sprintf("lead · decompose %s · after attempt %d", f.ID, n-1), queue), a.AgentSession, activities.SessionInput{
		RunID: r.in.RunID, Feature: f.ID, Attempt: n, Role: "lead", Goal: r.in.Goal, Lane: lane.Path, BaseCommit: r.in.BaseCommit,
		Model: model, Prompt: horizon.DecomposeBrief(r.in.Goal, f, prev),
	}, &out); err != nil {
		return nil, err
	}
	res.Planning = res.Planning.Add(out.Usage)
	r.prior += out.Usage.Cost
	if out.Plan == nil || out.ProtocolError != "" {
		r.decide(ctx, res, fmt.Sprintf("%s is not decomposed; the next attempt shrinks it itself", f.ID),
			"the lead's decomposition was not a valid plan: "+out.ProtocolError)
		return nil, nil
	}
	parts := horizon.PartsOf(f, *out.Plan)
	if len(parts) < 2 {
		r.decide(ctx, res, fmt.Sprintf("%s is not decomposed; the next attempt shrinks it itself", f.ID),
			fmt.Sprintf("the lead proposed %d part(s); a decomposition needs at least two", len(parts)))
		return nil, nil
	}
	return parts, nil
}

// leadSetup is the run's Setup as far as the feature knows it.
func (r *run) leadSetup() Setup {
	if r.setup != nil {
		return *r.setup
	}
	return Setup{}
}

// leadQueue is the task queue of the lead's sessions.
func (s Setup) leadQueue(paidQueue string) string {
	if s.LeadPaid {
		return paidQueue
	}
	return ""
}

// progress tells the parent run about the attempt that just ended.
func (r *run) progress(ctx workflow.Context) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	c := r.state.Current()
	if parent == nil || c == nil {
		return
	}
	// Not waited for: a lost progress signal costs only a stale status
	// line; the feature's result carries every attempt anyway.
	workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalProgress, Progress{Feature: r.fid(), Attempt: *c})
}

// decide records a decision of the feature for the run to number and write.
func (r *run) decide(ctx workflow.Context, res *FeatureResult, what, why string, evidence ...string) {
	if d, ok := newDecision(ctx, r.fid(), what, why, evidence...); ok {
		res.Decisions = append(res.Decisions, d)
	}
}

// newDecision builds a decision at workflow time; one that does not
// validate (no what or why) is logged and dropped, never fatal.
func newDecision(ctx workflow.Context, feature, what, why string, evidence ...string) (horizon.Decision, bool) {
	d, err := horizon.NewDecision(workflow.Now(ctx), feature, what, why, evidence...)
	if err != nil {
		workflow.GetLogger(ctx).Warn("decision not recorded", "Error", err)
		return d, false
	}
	return d, true
}

// featureSoFar is the feature with the attempts made so far.
func (r *run) featureSoFar() horizon.Feature {
	f := r.featureIn
	f.Attempts = slices.Clone(r.state.Attempts)
	f.ReceiptIDs = receiptsOf(f.Attempts)
	return f
}

func (r *run) featureResult(res *FeatureResult, o FeatureOutcome, reason string) *FeatureResult {
	res.Feature, res.Outcome, res.Reason = r.featureSoFar(), o, reason
	return res
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
