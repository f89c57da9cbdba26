package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// RunInput starts a run. Limits are captured here, at start, so that a
// configuration change on the daemon does not alter a run in flight.
type RunInput struct {
	RunID      string
	Goal       string
	Repo       string
	BaseRef    string
	BaseCommit string
	// Model, when set, serves every role; otherwise Preflight resolves
	// each role from the leaderboard (ModelsFile, or the bundled one).
	Model       string
	ModelsFile  string
	MaxAttempts int
	Limits      Limits
	// Ceiling is the run's spend ceiling in USD (0: none); DayCeiling bounds
	// all runs' spend per UTC day (0: none); ThrottleAt is the fraction of a
	// ceiling from which only local tiers are used.
	Ceiling    float64
	DayCeiling float64
	ThrottleAt float64
	// Kind is the card's kind for the ladder: mechanical, bounded or open.
	Kind horizon.FeatureKind
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

	// Planned makes the lead plan the goal into milestones and features,
	// each run by a FeatureWorkflow child (plannedRun); otherwise the goal
	// is one feature, through the verified-change loop up to MaxAttempts
	// (singleRun).
	Planned bool
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
	// BudgetTime and BudgetSpend are the planned run's hard stop (0: none).
	BudgetTime  time.Duration
	BudgetSpend float64
	// FeaturesPerHistory, when positive, continues the run as new after
	// that many features in one history (besides when Temporal suggests
	// it); it keeps histories short and lets tests cross the boundary.
	FeaturesPerHistory int
	// Carry is the state carried across continue-as-new.
	Carry *Carry
	// DropFailedLanes (run.keep_failed_lanes is 0) removes the lanes of a
	// run that did not complete at its end too; otherwise they are kept
	// for a look and `horizon gc` removes them later. A completed run's
	// lanes always go at its end.
	DropFailedLanes bool

	// Plan, when set, is the run's plan, made ahead by the lead (a
	// supervisor's decomposition of a roadmap item): the run skips its own
	// planning. PlanApproved says a person approved it already.
	Plan         *horizon.Plan
	PlanApproved bool
	// Supervisor is the workflow ID of the supervisor that started the
	// run: the run tells it of each status change (SignalRunStatus).
	Supervisor string
}

// RunWorkflow runs one `horizon start`: a plannedRun when the goal is to
// be planned into milestones and features (planned.go), else a singleRun,
// the goal as one feature through the verified-change loop (single.go).
func RunWorkflow(ctx workflow.Context, in RunInput) (*horizon.RunState, error) {
	s := &runStatus{state: newRunState(ctx, in), index: in.SearchAttributes, indexed: horizon.StatusRunning, supervisor: in.Supervisor, told: horizon.StatusRunning}
	ctx = withStatus(ctx, s)
	var res *horizon.RunState
	var err error
	if in.Planned {
		p, perr := newPlannedRun(ctx, in, s)
		if perr != nil {
			return nil, perr
		}
		res, err = p.run(ctx)
	} else {
		r, rerr := newSingleRun(ctx, in, s)
		if rerr != nil {
			return nil, rerr
		}
		res, err = r.run(ctx)
	}
	if in.DropFailedLanes && !workflow.IsContinueAsNewError(err) && s.state.Status != horizon.StatusCompleted {
		s.dropLanes(ctx)
	}
	return res, err
}

// newRunState is a run's state at its start.
func newRunState(ctx workflow.Context, in RunInput) horizon.RunState {
	st := horizon.RunState{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseRef: in.BaseRef, BaseCommit: in.BaseCommit,
		Branch: horizon.IntegrationBranch(in.RunID), Feature: DefaultFeature, Model: in.Model,
		MaxAttempts: in.MaxAttempts, Status: horizon.StatusRunning, Phase: horizon.PhasePreflight,
		StartedAt: workflow.Now(ctx), UpdatedAt: workflow.Now(ctx), Attempts: []horizon.Attempt{},
	}
	if st.MaxAttempts < 1 {
		st.MaxAttempts = 1
	}
	st.Ceiling, st.DayCeiling = in.Ceiling, in.DayCeiling
	return st
}
