package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// TaskInput is one background task (`horizon task run`).
type TaskInput struct {
	Task   activities.TaskInput
	Limits Limits
	// PaidQueue is the task queue of metered sessions: a task on a paid
	// model waits its turn there like a run's session.
	PaidQueue string
	// Spend is the ceilings the task observes: the spend authority weighs
	// its session against them.
	Spend SpendLimits
}

// FailureTaskFailed is the failure type of a task whose session failed;
// its details are the activities.TaskResult.
const FailureTaskFailed = "TaskFailed"

// TaskWorkflow runs one specialist's session to its end: PrepareTask
// (specialist, model, lane), TaskSession (the OpenCode session, continued
// after a crash), FinishTask (the lane committed on its branch, the
// stream's end, the metadata's status). Cancelling the workflow cancels
// the session activity, which aborts the session; FinishTask still runs.
// A follow-up (`horizon task resume`) is the same workflow again under the
// same ID, its TaskInput naming the turn and the session to continue: the
// activities tell the turns apart, the workflow's steps are the same.
func TaskWorkflow(ctx workflow.Context, in TaskInput) (activities.TaskResult, error) {
	limits := in.Limits.withDefaults()
	log := workflow.GetLogger(ctx)
	var (
		plan activities.TaskPlan
		sess activities.TaskSessionOutput
	)
	id := TaskWorkflowID(in.Task.ID)
	s := &runStatus{state: horizon.RunState{RunID: id, Goal: in.Task.Prompt, Repo: in.Task.Repo, Status: horizon.StatusRunning,
		Phase: horizon.PhaseWorking, Ceiling: in.Spend.Ceiling, DayCeiling: in.Spend.DayCeiling, StartedAt: workflow.Now(ctx)}}
	if err := registerCeilings(ctx, s); err != nil {
		return activities.TaskResult{}, err
	}
	err := execute(ctx, gitOptions("prepare task "+in.Task.ID), a.PrepareTask, in.Task, &plan)
	if err == nil {
		var g grant
		if g, err = taskGrant(ctx, s, in, &plan); err == nil {
			opts := sessionOptions(limits, "task "+in.Task.ID+" ("+in.Task.Specialist+")", g.queue)
			err = g.call(ctx, opts, a.TaskSession, activities.TaskSessionInput{Task: in.Task, Plan: plan}, &sess)
		}
	}
	end := activities.TaskEnd{Task: in.Task, Plan: plan, Session: sess, Status: activities.TaskCompleted}
	var canceled *temporal.CanceledError
	switch {
	case err == nil:
	case errors.As(err, &canceled) || ctx.Err() != nil:
		end.Status, end.Error = activities.TaskCancelled, "stopped by `horizon task stop`"
	default:
		end.Status, end.Error = activities.TaskFailed, rootMessage(err)
	}
	// The end is recorded even when the task was stopped.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	var res activities.TaskResult
	if ferr := execute(dctx, gitOptions("finish task "+in.Task.ID), a.FinishTask, end, &res); ferr != nil {
		log.Error("task end not recorded", "Task", in.Task.ID, "Error", ferr)
		res = activities.TaskResult{ID: in.Task.ID, Status: end.Status, Session: sess.SessionID, Model: plan.Model, Branch: plan.Branch, Error: end.Error}
	}
	log.Info("task ended", "Task", in.Task.ID, "Status", res.Status, "Session", res.Session)
	switch end.Status {
	case activities.TaskCancelled:
		return res, temporal.NewCanceledError(res)
	case activities.TaskFailed:
		return res, temporal.NewNonRetryableApplicationError(end.Error, FailureTaskFailed, err, res)
	}
	return res, nil
}

// taskGrant is the spend authority's grant for a task's session: its
// model on the paid queue when metered; near a ceiling (spend.day_ceiling
// above all) the local model of its role, which plan then names; at one
// with none, a pause (phase paused, in the Temporal UI) until `horizon
// set-ceiling --day` raises it. Histories from before the authority
// replay as they ran.
func taskGrant(ctx workflow.Context, s *runStatus, in TaskInput, plan *activities.TaskPlan) (grant, error) {
	queue := ""
	if plan.Paid {
		queue = in.PaidQueue
	}
	metered := session{model: plan.Model, queue: queue}
	if workflow.GetVersion(ctx, changeSpendAuthority, workflow.DefaultVersion, 1) < 1 {
		return unchecked(metered), nil
	}
	au := authority{s: s, local: map[horizon.Role]string{horizon.RoleWorker: plan.Local}, throttleAt: in.Spend.ThrottleAt, subject: "task " + in.Task.ID,
		spend: func(ctx workflow.Context) (ladder.Spend, error) {
			return spendOf(ctx, &s.state, 0, in.Spend.ThrottleAt, time.Time{})
		}}
	g, err := au.grant(ctx, horizon.RoleWorker, metered, plan.Paid)
	if g.throttled {
		plan.Model, plan.Paid = g.model, false
	}
	return g, err
}
