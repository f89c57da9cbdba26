package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// RunBase is what a run of either kind reads: a SingleRunInput and a
// PlannedRunInput embed it. Limits are captured here, at start, so that a
// configuration change on the daemon does not alter a run in flight.
type RunBase struct {
	RunID      string
	Goal       string
	Repo       string
	BaseRef    string
	BaseCommit string
	// Model, when set, serves every role; otherwise Preflight resolves
	// each role from the leaderboard (ModelsFile, or the bundled one).
	Model      string
	ModelsFile string
	Limits     Limits
	// Ceiling is the run's spend ceiling in USD (0: none); DayCeiling bounds
	// all runs' spend per UTC day (0: none); ThrottleAt is the fraction of a
	// ceiling from which only local tiers are used.
	Ceiling    float64
	DayCeiling float64
	ThrottleAt float64
	// LineCeiling is the most changed lines an attempt may produce before
	// the over_line_ceiling trigger fires (0: none; runs from before it).
	LineCeiling int
	// SearchAttributes says the namespace has HorizonRepo and HorizonStatus:
	// the run keeps HorizonStatus current.
	SearchAttributes bool
	// PaidQueue is the task queue of metered agent sessions; its pollers
	// run one activity at a time, so across all runs only one paid call is
	// in flight. Empty: sessions use the run's own queue.
	PaidQueue string
	// DropFailedLanes (run.keep_failed_lanes is 0) removes the lanes of a
	// run that did not complete at its end too; otherwise they are kept
	// for a look and `horizon gc` removes them later. A completed run's
	// lanes always go at its end.
	DropFailedLanes bool
	// Supervisor is the workflow ID of the supervisor that started the
	// run: the run tells it of each status change (SignalRunStatus).
	Supervisor string
}

// SingleRunInput starts a SingleRunWorkflow: the goal as one feature,
// through the verified-change loop up to MaxAttempts (singleRun).
type SingleRunInput struct {
	RunBase
	MaxAttempts int
	// Kind is the card's kind for the ladder: mechanical, bounded or open.
	Kind horizon.FeatureKind
}

// PlannedRunInput starts a PlannedRunWorkflow: the lead plans the goal
// into milestones and features, each run by a FeatureWorkflow child
// (plannedRun).
type PlannedRunInput struct {
	RunBase
	// Autonomy says where a planned run waits for `horizon approve`.
	Autonomy horizon.Autonomy
	// Interval is recovery_escalation_interval: attempts per recovery
	// strategy before the next one is tried (0: the default).
	Interval int
	// Stall is run.stall_backoff, run.stall_block_after and
	// supervisor.stall_attempts: how a stalled feature backs off and when
	// it blocks (zero values: the defaults). A supervisor's failing
	// decompositions back off the same way.
	Stall horizon.StallPolicy
	// Milestones is run.auto_approve_milestones and
	// run.decision_confidence_threshold: when a milestone's checkpoint
	// passes by rule (horizon.MilestoneRule).
	Milestones horizon.MilestoneRule `json:",omitzero"`
	// BudgetTime and BudgetSpend are the planned run's hard stop (0: none).
	BudgetTime  time.Duration
	BudgetSpend float64
	// FeaturesPerHistory, when positive, continues the run as new after
	// that many features in one history (besides when Temporal suggests
	// it); it keeps histories short and lets tests cross the boundary.
	FeaturesPerHistory int
	// Carry is the state carried across continue-as-new.
	Carry *Carry
	// Plan, when set, is the run's plan, made ahead by the lead (a
	// supervisor's decomposition of a roadmap item): the run skips its own
	// planning. PlanApproved says a person approved it already.
	Plan         *horizon.Plan
	PlanApproved bool
}

// RunInput is a run of either kind as `horizon start` and a supervisor
// build it, Planned saying which: Start gives the workflow type and input
// it starts with. It is also the input of RunWorkflow, the one type every
// run had before each kind got its own, kept for the histories recorded
// then. Its fields are RunBase's, SingleRunInput's and PlannedRunInput's,
// under the same names (the same JSON).
type RunInput struct {
	// RunBase's fields.
	RunID            string
	Goal             string
	Repo             string
	BaseRef          string
	BaseCommit       string
	Model            string
	ModelsFile       string
	Limits           Limits
	Ceiling          float64
	DayCeiling       float64
	ThrottleAt       float64
	LineCeiling      int
	SearchAttributes bool
	PaidQueue        string
	DropFailedLanes  bool
	Supervisor       string

	// SingleRunInput's.
	MaxAttempts int
	Kind        horizon.FeatureKind

	// Planned says the run is a planned run (PlannedRunInput's fields);
	// otherwise the goal is one feature (SingleRunInput's).
	Planned            bool
	Autonomy           horizon.Autonomy
	Interval           int
	Stall              horizon.StallPolicy
	Milestones         horizon.MilestoneRule `json:",omitzero"`
	BudgetTime         time.Duration
	BudgetSpend        float64
	FeaturesPerHistory int
	Carry              *Carry
	Plan               *horizon.Plan
	PlanApproved       bool
}

// Start is the workflow type a run of in starts as, with its input: a
// PlannedRunWorkflow with a PlannedRunInput when in.Planned, else a
// SingleRunWorkflow with a SingleRunInput.
func (in RunInput) Start() (workflowType string, input any) {
	if in.Planned {
		return PlannedRunWorkflowName, in.planned()
	}
	return SingleRunWorkflowName, in.single()
}

func (in RunInput) base() RunBase {
	return RunBase{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseRef: in.BaseRef, BaseCommit: in.BaseCommit,
		Model: in.Model, ModelsFile: in.ModelsFile, Limits: in.Limits,
		Ceiling: in.Ceiling, DayCeiling: in.DayCeiling, ThrottleAt: in.ThrottleAt, LineCeiling: in.LineCeiling,
		SearchAttributes: in.SearchAttributes, PaidQueue: in.PaidQueue, DropFailedLanes: in.DropFailedLanes, Supervisor: in.Supervisor,
	}
}

func (in RunInput) single() SingleRunInput {
	return SingleRunInput{RunBase: in.base(), MaxAttempts: in.MaxAttempts, Kind: in.Kind}
}

func (in RunInput) planned() PlannedRunInput {
	return PlannedRunInput{
		RunBase: in.base(), Autonomy: in.Autonomy, Interval: in.Interval, Stall: in.Stall, Milestones: in.Milestones,
		BudgetTime: in.BudgetTime, BudgetSpend: in.BudgetSpend, FeaturesPerHistory: in.FeaturesPerHistory,
		Carry: in.Carry, Plan: in.Plan, PlanApproved: in.PlanApproved,
	}
}

// runInput is in as a RunWorkflow's input, for a planned run recorded as a
// RunWorkflow to continue as one. MaxAttempts and Kind stay zero: a
// planned run reads neither.
func (in PlannedRunInput) runInput() RunInput {
	b := in.RunBase
	return RunInput{
		RunID: b.RunID, Goal: b.Goal, Repo: b.Repo, BaseRef: b.BaseRef, BaseCommit: b.BaseCommit,
		Model: b.Model, ModelsFile: b.ModelsFile, Limits: b.Limits,
		Ceiling: b.Ceiling, DayCeiling: b.DayCeiling, ThrottleAt: b.ThrottleAt, LineCeiling: b.LineCeiling,
		SearchAttributes: b.SearchAttributes, PaidQueue: b.PaidQueue, DropFailedLanes: b.DropFailedLanes, Supervisor: b.Supervisor,
		Planned: true, Autonomy: in.Autonomy, Interval: in.Interval, Stall: in.Stall, Milestones: in.Milestones,
		BudgetTime: in.BudgetTime, BudgetSpend: in.BudgetSpend, FeaturesPerHistory: in.FeaturesPerHistory,
		Carry: in.Carry, Plan: in.Plan, PlanApproved: in.PlanApproved,
	}
}

// SingleRunWorkflow runs one `horizon start` of a goal as one feature: a
// singleRun, through the verified-change loop (single.go).
func SingleRunWorkflow(ctx workflow.Context, in SingleRunInput) (*horizon.RunState, error) {
	return runKind(ctx, in.RunBase, in.MaxAttempts, func(ctx workflow.Context, s *runStatus) (runner, error) {
		return newSingleRun(ctx, in, s)
	})
}

// PlannedRunWorkflow runs one planned `horizon start` (or a supervisor's
// run of a roadmap item): a plannedRun, which plans the goal into
// milestones and features and runs each as a FeatureWorkflow child
// (planned.go). It continues as new as a PlannedRunWorkflow.
func PlannedRunWorkflow(ctx workflow.Context, in PlannedRunInput) (*horizon.RunState, error) {
	return runKind(ctx, in.RunBase, 0, func(ctx workflow.Context, s *runStatus) (runner, error) {
		return newPlannedRun(ctx, in, s)
	})
}

// RunWorkflow is the type every run had before each kind got its own, kept
// registered for the histories recorded then (runs in flight across an
// upgrade, a supervisor's runs started before it): it takes its RunInput
// to the kind's input and runs exactly what PlannedRunWorkflow or
// SingleRunWorkflow runs, issuing the same commands as it always did. A
// planned run recorded as a RunWorkflow continues as new as one
// (plannedRun.continueAsNew). New runs start as the kind's own type
// (RunInput.Start).
func RunWorkflow(ctx workflow.Context, in RunInput) (*horizon.RunState, error) {
	if in.Planned {
		return PlannedRunWorkflow(ctx, in.planned())
	}
	return SingleRunWorkflow(ctx, in.single())
}

// runner is a run of one kind, its handlers registered: a singleRun or a
// plannedRun.
type runner interface {
	run(ctx workflow.Context) (*horizon.RunState, error)
}

// runKind is what every run does around its kind's own run: its state and
// status, the kind built by start (which registers its handlers), and at
// an end other than completed, its lanes dropped with DropFailedLanes.
// maxAttempts caps a one-feature run's attempts (a planned run's features
// are not capped).
func runKind(ctx workflow.Context, b RunBase, maxAttempts int, start func(workflow.Context, *runStatus) (runner, error)) (*horizon.RunState, error) {
	s := &runStatus{state: newRunState(ctx, b, maxAttempts), index: b.SearchAttributes, indexed: horizon.StatusRunning, supervisor: b.Supervisor, told: horizon.StatusRunning}
	ctx = withStatus(ctx, s)
	r, err := start(ctx, s)
	if err != nil {
		return nil, err
	}
	res, err := r.run(ctx)
	if b.DropFailedLanes && !workflow.IsContinueAsNewError(err) && s.state.Status != horizon.StatusCompleted {
		s.dropLanes(ctx)
	}
	return res, err
}

// newRunState is a run's state at its start.
func newRunState(ctx workflow.Context, in RunBase, maxAttempts int) horizon.RunState {
	st := horizon.RunState{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseRef: in.BaseRef, BaseCommit: in.BaseCommit,
		Branch: horizon.IntegrationBranch(in.RunID), Feature: DefaultFeature, Model: in.Model,
		MaxAttempts: maxAttempts, Status: horizon.StatusRunning, Phase: horizon.PhasePreflight,
		StartedAt: workflow.Now(ctx), UpdatedAt: workflow.Now(ctx), Attempts: []horizon.Attempt{},
	}
	if st.MaxAttempts < 1 {
		st.MaxAttempts = 1
	}
	st.Ceiling, st.DayCeiling = in.Ceiling, in.DayCeiling
	return st
}
