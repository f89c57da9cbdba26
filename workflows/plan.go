package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// planTries bounds how often an invalid plan goes back to the lead.
const planTries = 3

// PlanInput asks for a plan of a goal.
type PlanInput struct {
	RunID      string
	Goal       string
	Repo       string
	BaseCommit string
	Model      string
	ModelsFile string
	Limits     Limits
	// PaidQueue is the task queue of metered sessions; Spend the ceilings
	// the lead's sessions observe (the spend authority weighs each).
	PaidQueue string
	Spend     SpendLimits
	// Foreground says a person waits on the plan (`horizon plan`): at a
	// ceiling it fails (FailureSpendCeiling) rather than wait for a raise,
	// as a supervisor's decomposition does.
	Foreground bool
}

// PlanResult is a validated plan and what it took.
type PlanResult struct {
	Plan     horizon.Plan
	Tries    int
	Rejected []string // why earlier plans were rejected
	Usage    horizon.Usage
}

// PlanWorkflow has the lead (a read-only agent) plan a goal into
// milestones and atomic features. A plan that does not validate goes back
// to the lead with every problem named, up to planTries times; the
// accepted plan is returned (and the run that executes it comes next).
func PlanWorkflow(ctx workflow.Context, in PlanInput) (*PlanResult, error) {
	// The plan's status and ceilings: where a pause at a ceiling shows,
	// and what `horizon set-ceiling [--day] PLAN USD` raises.
	s := &runStatus{state: horizon.RunState{RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, Status: horizon.StatusRunning,
		Phase: horizon.PhasePlanning, Ceiling: in.Spend.Ceiling, DayCeiling: in.Spend.DayCeiling, StartedAt: workflow.Now(ctx)}}
	if err := registerCeilings(ctx, s); err != nil {
		return nil, err
	}
	var pre activities.PreflightOutput
	if err := execute(ctx, gitOptions("preflight: repo, gate, models"), a.Preflight, activities.PreflightInput{
		RunID: in.RunID, Repo: in.Repo, BaseCommit: in.BaseCommit, Model: in.Model, ModelsFile: in.ModelsFile,
		GateCommands: in.Limits.GateCommands,
	}, &pre); err != nil {
		return nil, err
	}
	model, paid := pre.Models[horizon.RoleWorker], pre.Paid[horizon.RoleWorker]
	if in.Model == "" {
		// Planning is the lead's role; the leaderboard's lead choice is the
		// metered T4 rung when one is connected.
		if r := pre.Tiers; r != nil && r[ladder.T4].Available {
			model, paid = r[ladder.T4].Model, true
		}
	}
	var lane activities.Lane
	if err := execute(ctx, gitOptions("planning lane"), a.PrepareLane, activities.LaneInput{
		RunID: in.RunID, Feature: "plan", Repo: in.Repo, BaseCommit: in.BaseCommit,
	}, &lane); err != nil {
		return nil, err
	}
	ld := lead{runID: in.RunID, baseCommit: in.BaseCommit, model: model, limits: in.Limits.withDefaults()}
	if workflow.GetVersion(ctx, changeSpendAuthority, workflow.DefaultVersion, 1) >= 1 {
		if paid {
			ld.queue = in.PaidQueue
		}
		au := authority{s: s, local: pre.Local, throttleAt: in.Spend.ThrottleAt, subject: "plan", foreground: in.Foreground}
		ld.throttle = func(ctx workflow.Context, metered session, spent float64) (grant, error) {
			au.spend = func(ctx workflow.Context) (ladder.Spend, error) {
				return spendOf(ctx, &s.state, spent, in.Spend.ThrottleAt, time.Time{})
			}
			return au.grant(ctx, horizon.RoleLead, metered, paid)
		}
	}
	res, problem, err := ld.plan(ctx, lane.Path, in.Goal)
	// The planning lane served the lead only: whatever the outcome, it and
	// its branch go now rather than wait for gc (a supervisor plans every
	// night).
	if workflow.GetVersion(ctx, changePlanLane, workflow.DefaultVersion, 1) >= 1 {
		removeLanes(ctx, in.RunID, in.Repo)
	}
	if err != nil {
		return nil, err
	}
	if res.Plan.Milestones != nil {
		return res, nil
	}
	return nil, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("no valid plan after %d tries; last problem: %s", planTries, problem), FailureRunFailed, nil, *res)
}

// lead is the role that plans a goal: its model, the queue of its
// sessions, and the run they are for.
type lead struct {
	runID, baseCommit string
	model, queue      string
	limits            Limits
	// throttle, when set, weighs each planning session against the spend
	// ceilings (the lead has spent spent on this plan so far) and says
	// what it runs on.
	throttle func(ctx workflow.Context, metered session, spent float64) (grant, error)
}

// plan has the lead plan the goal, handing an invalid plan back with its
// problems, up to planTries times. Without a valid plan the result's Plan
// is zero and problem is the last reason.
func (l lead) plan(ctx workflow.Context, lanePath, goal string) (res *PlanResult, problem string, err error) {
	res = &PlanResult{}
	for try := 1; try <= planTries; try++ {
		res.Tries = try
		ses := unchecked(session{model: l.model, queue: l.queue})
		if l.throttle != nil {
			if ses, err = l.throttle(ctx, ses.session, res.Usage.Cost); err != nil {
				return res, problem, err
			}
		}
		var out activities.SessionOutput
		if err := ses.call(ctx, sessionOptions(l.limits, fmt.Sprintf("lead · plan · try %d", try), ses.queue), a.AgentSession, activities.SessionInput{
			RunID: l.runID, Feature: "plan", Attempt: try, Role: horizon.RoleLead, Goal: goal, Lane: lanePath, BaseCommit: l.baseCommit,
			Model: ses.model, Prompt: horizon.PlanBrief(goal, problem),
		}, &out); err != nil {
			return res, problem, err
		}
		res.Usage = res.Usage.Add(out.Usage)
		if out.Plan != nil && out.ProtocolError == "" {
			res.Plan = *out.Plan
			return res, "", nil
		}
		problem = out.ProtocolError
		res.Rejected = append(res.Rejected, problem)
	}
	return res, problem, nil
}
