package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
)

// taskWorld mocks a task's three activities and records what they got.
type taskWorld struct {
	mu     sync.Mutex
	ends   []activities.TaskEnd
	queues map[string]string // activity type → task queue
	// onSession runs as the session activity starts.
	onSession func()
	session   func(ctx context.Context, in activities.TaskSessionInput) (activities.TaskSessionOutput, error)
	prepare   error
	// plan, when set, is PrepareTask's answer.
	plan *activities.TaskPlan
}

func (w *taskWorld) env(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	e.RegisterActivity(&activities.Activities{})
	w.queues = map[string]string{}
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.queues[info.ActivityType.Name] = info.TaskQueue
		if info.ActivityType.Name == "TaskSession" && w.onSession != nil {
			go w.onSession()
		}
	})
	e.OnActivity(a.PrepareTask, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.TaskInput) (activities.TaskPlan, error) {
		if w.prepare != nil {
			return activities.TaskPlan{}, w.prepare
		}
		if w.plan != nil {
			return *w.plan, nil
		}
		return activities.TaskPlan{Agent: "horizon-sp-" + in.Specialist, Model: "fake/m", Paid: true, Dir: in.Repo}, nil
	})
	e.OnActivity(a.TaskSession, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
		return w.session(ctx, in)
	})
	e.OnActivity(a.FinishTask, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.TaskEnd) (activities.TaskResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.ends = append(w.ends, in)
		return activities.TaskResult{ID: in.Task.ID, Status: in.Status, Session: in.Session.SessionID, Model: in.Plan.Model, Error: in.Error}, nil
	})
	return e
}

func taskIn() TaskInput {
	return TaskInput{Task: activities.TaskInput{ID: "t1", Specialist: "explorer", Prompt: "look", Repo: "/repo"}, PaidQueue: "horizon-paid"}
}

func TestTaskWorkflow(t *testing.T) {
	t.Run("completes", func(t *testing.T) {
		w := &taskWorld{session: func(_ context.Context, in activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
			require.Equal(t, "horizon-sp-explorer", in.Plan.Agent)
			require.Equal(t, "look", in.Task.Prompt)
			return activities.TaskSessionOutput{SessionID: "ses_1", Resumed: true}, nil
		}}
		e := w.env(t)
		e.ExecuteWorkflow(TaskWorkflowName, taskIn())
		require.True(t, e.IsWorkflowCompleted())
		require.NoError(t, e.GetWorkflowError())
		var res activities.TaskResult
		require.NoError(t, e.GetWorkflowResult(&res))
		require.Equal(t, activities.TaskResult{ID: "t1", Status: activities.TaskCompleted, Session: "ses_1", Model: "fake/m"}, res)
		require.Len(t, w.ends, 1)
		require.Equal(t, activities.TaskCompleted, w.ends[0].Status)
		require.True(t, w.ends[0].Session.Resumed)
		require.Equal(t, "horizon-paid", w.queues["TaskSession"], "a paid model's session waits on the paid queue")
	})

	t.Run("session fails", func(t *testing.T) {
		w := &taskWorld{session: func(context.Context, activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
			return activities.TaskSessionOutput{}, temporal.NewNonRetryableApplicationError("context overflow", activities.ErrTypeSessionFailed, nil)
		}}
		e := w.env(t)
		e.ExecuteWorkflow(TaskWorkflowName, taskIn())
		var app *temporal.ApplicationError
		require.ErrorAs(t, e.GetWorkflowError(), &app)
		require.Equal(t, FailureTaskFailed, app.Type())
		require.Len(t, w.ends, 1)
		require.Equal(t, activities.TaskFailed, w.ends[0].Status)
		require.Contains(t, w.ends[0].Error, "context overflow")
	})

	t.Run("bad specialist: no session, the end recorded", func(t *testing.T) {
		w := &taskWorld{prepare: temporal.NewNonRetryableApplicationError("no such specialist", activities.ErrTypeBadInput, nil),
			session: func(context.Context, activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
				t.Fatal("a session ran for a task that could not be prepared")
				return activities.TaskSessionOutput{}, nil
			}}
		e := w.env(t)
		e.ExecuteWorkflow(TaskWorkflowName, taskIn())
		require.Error(t, e.GetWorkflowError())
		require.Len(t, w.ends, 1)
		require.Equal(t, activities.TaskFailed, w.ends[0].Status)
		require.Contains(t, w.ends[0].Error, "no such specialist")
	})

	t.Run("stopped: the session is cancelled, the end still recorded", func(t *testing.T) {
		w := &taskWorld{session: func(ctx context.Context, _ activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
			// The session heartbeats (its ID) while it runs; RunSession
			// aborts the OpenCode session once the engine cancels it.
			for ctx.Err() == nil {
				activity.RecordHeartbeat(ctx, activities.SessionHeartbeat{SessionID: "ses_1"})
				time.Sleep(10 * time.Millisecond)
			}
			return activities.TaskSessionOutput{SessionID: "ses_1"}, ctx.Err()
		}}
		e := w.env(t)
		w.onSession = e.CancelWorkflow // `horizon task stop` while the session runs
		var cancelled []string
		e.SetOnActivityCanceledListener(func(info *activity.Info) { cancelled = append(cancelled, info.ActivityType.Name) })
		e.ExecuteWorkflow(TaskWorkflowName, taskIn())
		require.True(t, temporal.IsCanceledError(e.GetWorkflowError()), "%v", e.GetWorkflowError())
		require.Equal(t, []string{"TaskSession"}, cancelled, "the session activity was not cancelled")
		require.Len(t, w.ends, 1)
		require.Equal(t, activities.TaskCancelled, w.ends[0].Status)
		require.Equal(t, "stopped by `horizon task stop`", w.ends[0].Error)
	})
}
