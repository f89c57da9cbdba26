package core

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/internal/agent"
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
