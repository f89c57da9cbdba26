package core

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/workflows"
)

func eventLine(t *testing.T, id, typ string) string {
	b, err := json.Marshal(activities.TaskEvent{Part: agent.Part{ID: id, Type: typ, Text: id}})
	require.NoError(t, err)
	return string(b) + "\n"
}

// Following a running task gives each whole line once, waits on a line
// still being written, and stops at the end event.
func TestTaskOutputFollows(t *testing.T) {
	home := t.TempDir()
	tasks := Tasks{Home: home}
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskRunning}))
	path := activities.TaskOutputPath(home, "t1")
	second := eventLine(t, "p2", "text")
	require.NoError(t, os.WriteFile(path, []byte(eventLine(t, "p1", "text")+second[:10]), 0o600))

	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- tasks.Output(context.Background(), "t1", true, func(ev activities.TaskEvent) error { got <- ev.ID; return nil })
	}()
	require.Equal(t, "p1", <-got)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(second[10:] + eventLine(t, "end", "end"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "p2", <-got)
	require.Equal(t, "end", <-got)
	// FinishTask writes the end event, then the metadata's status.
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskCompleted}))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop at the end event")
	}

	// Without --follow it reads what is there; Ctrl-C (ctx) ends a follow.
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t2", Status: activities.TaskRunning}))
	require.NoError(t, os.WriteFile(activities.TaskOutputPath(home, "t2"), []byte(eventLine(t, "p1", "text")), 0o600))
	var n int
	require.NoError(t, tasks.Output(context.Background(), "t2", false, func(activities.TaskEvent) error { n++; return nil }))
	require.Equal(t, 1, n)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, tasks.Output(ctx, "t2", true, func(activities.TaskEvent) error { return nil }), context.DeadlineExceeded)

	var nf *TaskNotFoundError
	require.True(t, errors.As(tasks.Output(context.Background(), "nope", false, nil), &nf))
}

// Stop refuses a task that has ended, before asking the engine.
func TestTaskStopEnded(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskCompleted}))
	err := Tasks{Home: home}.Stop(context.Background(), "t1")
	require.ErrorIs(t, err, ErrTaskEnded)
	var nf *TaskNotFoundError
	require.ErrorAs(t, Tasks{Home: home}.Stop(context.Background(), "t9"), &nf)
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(strings.Join(lines, ""))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// A resumed task's stream holds two turns, each with its end: following
// it does not stop at the first turn's end (a follow-up comes after it),
// only at the last event once the task has ended; a plain read gives both
// turns.
func TestTaskOutputFollowsEveryTurn(t *testing.T) {
	home := t.TempDir()
	tasks := Tasks{Home: home}
	path := activities.TaskOutputPath(home, "t1")
	// The first turn has ended; the follow-up is pending.
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskPending, Turns: 2}))
	appendLines(t, path, eventLine(t, "p1", "text"), eventLine(t, "end", "end"))

	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- tasks.Output(context.Background(), "t1", true, func(ev activities.TaskEvent) error { got <- ev.ID; return nil })
	}()
	require.Equal(t, "p1", <-got)
	require.Equal(t, "end", <-got)
	select {
	case err := <-done:
		t.Fatalf("follow stopped at the first turn's end: %v", err)
	case <-time.After(3 * followEvery):
	}

	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskRunning, Turns: 2}))
	appendLines(t, path, eventLine(t, "turn-2", "turn"), eventLine(t, "p2", "text"), eventLine(t, "end-2", "end"))
	require.Equal(t, "turn-2", <-got)
	require.Equal(t, "p2", <-got)
	require.Equal(t, "end-2", <-got)
	select {
	case err := <-done:
		t.Fatalf("follow stopped before the task's metadata said it ended: %v", err)
	case <-time.After(3 * followEvery):
	}
	require.NoError(t, activities.WriteTaskMeta(home, activities.TaskMeta{ID: "t1", Status: activities.TaskCompleted, Turns: 2}))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop at the second turn's end")
	}
	require.Empty(t, got)

	var ids []string
	require.NoError(t, tasks.Output(context.Background(), "t1", false, func(ev activities.TaskEvent) error { ids = append(ids, ev.ID); return nil }))
	require.Equal(t, []string{"p1", "end", "turn-2", "p2", "end-2"}, ids)
}

// What cannot be resumed is refused before the engine is asked (these
// Tasks have no client): an empty follow-up, an unknown task, one still
// running or pending, one that never had a session.
func TestTaskResumeRefuses(t *testing.T) {
	home := t.TempDir()
	tasks := Tasks{Home: home}
	for _, m := range []activities.TaskMeta{
		{ID: "run1", Status: activities.TaskRunning, Session: "ses_1"},
		{ID: "pend1", Status: activities.TaskPending, Session: "ses_1"},
		{ID: "nosess1", Status: activities.TaskFailed, Error: "no model"},
		{ID: "done1", Status: activities.TaskCompleted, Session: "ses_1"},
	} {
		require.NoError(t, activities.WriteTaskMeta(home, m))
	}
	ctx := context.Background()
	_, err := tasks.Resume(ctx, TaskResumeRequest{ID: "done1", Prompt: "  "})
	require.ErrorIs(t, err, ErrEmptyPrompt)
	var nf *TaskNotFoundError
	_, err = tasks.Resume(ctx, TaskResumeRequest{ID: "nope", Prompt: "more"})
	require.ErrorAs(t, err, &nf)
	_, err = tasks.Resume(ctx, TaskResumeRequest{ID: "../server", Prompt: "more"})
	var bad *BadIDError
	require.ErrorAs(t, err, &bad)
	for _, id := range []string{"run1", "pend1"} {
		_, err = tasks.Resume(ctx, TaskResumeRequest{ID: id, Prompt: "more"})
		require.ErrorIs(t, err, ErrTaskRunning, id)
		require.ErrorContains(t, err, "horizon task stop")
	}
	_, err = tasks.Resume(ctx, TaskResumeRequest{ID: "nosess1", Prompt: "more"})
	require.ErrorIs(t, err, ErrTaskNoSession)

	// Refusals change nothing.
	m, err := tasks.Get("run1")
	require.NoError(t, err)
	require.Equal(t, activities.TaskRunning, m.Status)
	require.Zero(t, m.Turns)
}

// A follow-up marks the task pending with its turn and prompt, and starts
// a TaskWorkflow under the task's own workflow ID (a closed one's ID
// reused, a running one never joined) whose input names the turn, the
// session and what it cost so far. A start that fails puts the metadata
// back; one that finds a workflow running says the task is running.
func TestTaskResumeStarts(t *testing.T) {
	home := t.TempDir()
	ended := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	first := activities.TaskMeta{ID: "t1", Status: activities.TaskFailed, Specialist: "worker", Session: "ses_1", Repo: "/repo",
		Branch: "horizon/task-t1", Commit: "abc", Prompt: "fix it", Turns: 1, Cost: 0.25, Error: "model said no", EndedAt: &ended}
	require.NoError(t, activities.WriteTaskMeta(home, first))

	c := mocks.NewClient(t)
	closed := &mocks.WorkflowRun{}
	closed.On("Get", mock.Anything, mock.Anything).Return(nil)
	c.On("GetWorkflow", mock.Anything, "task-t1", "").Return(closed)
	var (
		opts client.StartWorkflowOptions
		in   workflows.TaskInput
	)
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.TaskWorkflowName, mock.Anything).Run(func(args mock.Arguments) {
		opts, in = args.Get(1).(client.StartWorkflowOptions), args.Get(3).(workflows.TaskInput)
	}).Return(&mocks.WorkflowRun{}, nil).Once()
	tasks := Tasks{Client: c, Home: home, TaskQueue: "q", PaidQueue: "q-paid"}

	m, err := tasks.Resume(context.Background(), TaskResumeRequest{ID: "t1", Prompt: "now the tests", BaseCommit: "head1", Model: "fake/m"})
	require.NoError(t, err)
	require.Equal(t, activities.TaskPending, m.Status)
	require.Equal(t, 2, m.Turns)
	require.Equal(t, []string{"now the tests"}, m.FollowUps)
	require.Nil(t, m.EndedAt)
	require.Empty(t, m.Error)
	require.Equal(t, "fix it", m.Prompt, "the task's prompt stays the first one")
	onDisk, err := tasks.Get("t1")
	require.NoError(t, err)
	require.Equal(t, m.Status, onDisk.Status)
	require.Equal(t, m.FollowUps, onDisk.FollowUps)

	require.Equal(t, "task-t1", opts.ID)
	require.Equal(t, "q", opts.TaskQueue)
	require.Equal(t, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, opts.WorkflowIDReusePolicy)
	require.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL, opts.WorkflowIDConflictPolicy)
	require.True(t, opts.WorkflowExecutionErrorWhenAlreadyStarted)
	require.Equal(t, activities.TaskInput{ID: "t1", Specialist: "worker", Prompt: "now the tests", Repo: "/repo", BaseCommit: "head1",
		Model: "fake/m", Turn: 2, Session: "ses_1", Prior: horizon.Usage{Cost: 0.25}}, in.Task)
	require.Equal(t, "q-paid", in.PaidQueue)

	// The follow-up ended; the next start fails: the metadata is put back.
	require.NoError(t, activities.WriteTaskMeta(home, func() activities.TaskMeta { m.Status = activities.TaskCompleted; return m }()))
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.TaskWorkflowName, mock.Anything).Return(nil, errors.New("engine down")).Once()
	_, err = tasks.Resume(context.Background(), TaskResumeRequest{ID: "t1", Prompt: "and the docs"})
	require.ErrorContains(t, err, "engine down")
	back, err := tasks.Get("t1")
	require.NoError(t, err)
	require.Equal(t, activities.TaskCompleted, back.Status)
	require.Equal(t, 2, back.Turns)
	require.Equal(t, []string{"now the tests"}, back.FollowUps)

	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.TaskWorkflowName, mock.Anything).
		Return(nil, serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "")).Once()
	_, err = tasks.Resume(context.Background(), TaskResumeRequest{ID: "t1", Prompt: "and the docs"})
	require.ErrorIs(t, err, ErrTaskRunning)
}
