package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// TaskInput is one background task (`horizon task run`).
type TaskInput struct {
	Task   activities.TaskInput
	Limits Limits
	// PaidQueue is the task queue of metered sessions: a task on a paid
	// model waits its turn there like a run's session.
	PaidQueue string
}

// FailureTaskFailed is the failure type of a task whose session failed;
// its details are the activities.TaskResult.
const FailureTaskFailed = "TaskFailed"

// TaskWorkflow runs one specialist's session to its end: PrepareTask
// (specialist, model, lane), TaskSession (the OpenCode session, continued
// after a crash), FinishTask (the lane committed on its branch, the
// stream's end, the metadata's status). Cancelling the workflow cancels
// the session activity, which aborts the session; FinishTask still runs.
func TaskWorkflow(ctx workflow.Context, in TaskInput) (activities.TaskResult, error) {
	limits := in.Limits.withDefaults()
	log := workflow.GetLogger(ctx)
	var (
		plan activities.TaskPlan
		sess activities.TaskSessionOutput
	)
	err := execute(ctx, gitOptions("prepare task "+in.Task.ID), a.PrepareTask, in.Task, &plan)
	if err == nil {
		queue := ""
		if plan.Paid {
			queue = in.PaidQueue
		}
		opts := sessionOptions(limits, "task "+in.Task.ID+" ("+in.Task.Specialist+")", queue)
		err = execute(ctx, opts, a.TaskSession, activities.TaskSessionInput{Task: in.Task, Plan: plan}, &sess)
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
