package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/internal/specialist"
)

// newTaskCmd is `horizon task`: durable background tasks, one specialist's
// session each.
func newTaskCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task run|resume|list|output|stop",
		Short: "Run a specialist as a durable background task, and follow or stop it",
		Long: `A task is one specialist's OpenCode session run by the engine: it survives a
crash of the daemon and continues, after ` + "`horizon resume`" + `, in the same session.
Its output goes to $HORIZON_HOME/tasks/<id>.ndjson (each event once), its
status, specialist, model and session to <id>.json.

A read-only specialist works in the repository itself; one that may edit works
in a lane (a git worktree) and leaves its change on branch horizon/task-<id>.

A task that has ended takes follow-ups: ` + "`horizon task resume ID \"<follow-up>\"`" + ` prompts
its session again, as durably as the first time; the output stream goes on
with the new turn.`,
		Args: subcommandArgs("run, resume, list, output or stop"),
	}
	cmd.AddCommand(newTaskRunCmd(a, nil), newTaskResumeCmd(a, nil), newTaskListCmd(a, nil), newTaskOutputCmd(a, nil), newTaskStopCmd(a, nil))
	return cmd
}

// followTask prints a task's output until it ends; Ctrl-C detaches. With
// turn > 1 (a follow-up) it starts at that turn's first event: its turn
// event, or its end when the turn failed before its session.
func (a *app) followTask(ctx context.Context, t core.Tasks, id string, asJSON bool, turn int) error {
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := a.out
	if asJSON {
		progress = a.errOut
	}
	ended := "" // the stream's own last word: the task's file may lag it
	err := t.Output(fctx, id, true, func(ev core.TaskEvent) error {
		if turn > 1 {
			if ev.ID != core.TaskTurnEventID(turn) && ev.ID != core.TaskEndEventID(turn) {
				return nil // an earlier turn's
			}
			turn = 0
		}
		if ev.Type == "end" {
			ended = ev.Status
		}
		return printTaskEvent(progress, ev)
	})
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			fmt.Fprintf(a.errOut, "\nstopped following; task %s goes on. `horizon task output %s --follow` to look again, `horizon task stop %s` to stop it.\n", id, id, id)
			return exitErr{code: ExitInterrupted}
		}
		return taskError(err)
	}
	meta, err := t.Get(id)
	if err != nil {
		return err
	}
	// The end event is written just before the task's file: give the file
	// a moment to say the same, and say what the stream said if it lags.
	for deadline := time.Now().Add(10 * time.Second); ended != "" && !core.TaskTerminal(meta.Status) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if meta, err = t.Get(id); err != nil {
			return err
		}
	}
	if ended != "" && !core.TaskTerminal(meta.Status) {
		meta.Status = ended
	}
	if asJSON {
		if err := json.NewEncoder(a.out).Encode(meta); err != nil {
			return err
		}
	}
	if meta.Status != core.TaskCompleted && ended != core.TaskCompleted {
		return exitErr{code: ExitRunEnded}
	}
	return nil
}

// printTaskEvent writes one event for a person.
func printTaskEvent(w io.Writer, ev core.TaskEvent) error {
	var err error
	switch ev.Type {
	case "text":
		who := "assistant"
		if ev.Role == "user" {
			who = "prompt"
		}
		_, err = fmt.Fprintf(w, "[%s] %s\n", who, strings.TrimRight(ev.Text, "\n"))
	case "reasoning":
		_, err = fmt.Fprintf(w, "[thinking] %s\n", strings.TrimRight(ev.Text, "\n"))
	case "tool":
		_, err = fmt.Fprintf(w, "[tool] %s %s %s\n", ev.Tool, ev.Status, oneLine(string(ev.Input), 160))
	case "turn":
		_, err = fmt.Fprintf(w, "── follow-up (turn %s): %s\n", strings.TrimPrefix(ev.ID, "turn-"), oneLine(ev.Text, 400))
	case "end":
		_, err = fmt.Fprintf(w, "[end] %s %s\n", ev.Status, ev.Text)
	}
	return err
}

// taskError says core's refusals as bad input (exit 2).
func taskError(err error) error {
	var nf *core.TaskNotFoundError
	var ps *core.ProjectSpecialistError
	var me *specialist.ManifestError
	switch {
	case errors.As(err, &nf), errors.As(err, &ps), errors.As(err, &me),
		errors.Is(err, core.ErrTaskEnded), errors.Is(err, core.ErrEmptyPrompt), errors.Is(err, specialist.ErrNotFound),
		errors.Is(err, core.ErrTaskRunning), errors.Is(err, core.ErrTaskNoSession):
		return usageError{err}
	}
	return err
}
