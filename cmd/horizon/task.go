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
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/internal/core"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/workflows"
)

// newTaskCmd is `horizon task`: durable background tasks, one specialist's
// session each.
func newTaskCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task run|list|output|stop",
		Short: "Run a specialist as a durable background task, and follow or stop it",
		Long: `A task is one specialist's OpenCode session run by the engine: it survives a
crash of the daemon and continues, after ` + "`horizon resume`" + `, in the same session.
Its output goes to $HORIZON_HOME/tasks/<id>.ndjson (each event once), its
status, specialist, model and session to <id>.json.

A read-only specialist works in the repository itself; one that may edit works
in a lane (a git worktree) and leaves its change on branch horizon/task-<id>.`,
		Args: subcommandArgs("run, list, output or stop"),
	}
	cmd.AddCommand(newTaskRunCmd(a, nil), newTaskListCmd(a, nil), newTaskOutputCmd(a, nil), newTaskStopCmd(a, nil))
	return cmd
}

// tasks is core's task surface for this command's configuration.
func (a *app) tasks(c client.Client) core.Tasks {
	return core.Tasks{Client: c, Home: a.cfg.DataDir(), TaskQueue: a.cfg.Temporal.TaskQueue, PaidQueue: a.cfg.PaidQueue(), Spend: a.spendLimits()}
}

type taskRunOptions struct {
	app        *app
	specialist string
	prompt     string
	background bool
	json       bool
}

func newTaskRunCmd(a *app, runF func(context.Context, *taskRunOptions) error) *cobra.Command {
	o := &taskRunOptions{app: a}
	cmd := &cobra.Command{
		Use:   `run SPECIALIST [--repo DIR] [--background] "<prompt>"`,
		Short: "Start a specialist on a prompt; follow its output unless --background (Ctrl-C detaches)",
		Args:  minArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.specialist = args[0]
			o.prompt = strings.TrimSpace(strings.Join(args[1:], " "))
			if o.prompt == "" {
				return usagef("task run: %v", core.ErrEmptyPrompt)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.background, "background", "b", false, "start the task and print its ID; do not follow it")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the task's metadata as JSON once started (--background) or ended ({id, status, specialist, model, session, branch, ...})")
	return cmd
}

func taskRun(ctx context.Context, o *taskRunOptions) error {
	a := o.app
	info, err := inspectRepo(ctx, a.repoDir)
	if err != nil {
		return err
	}
	dirs := a.specialistDirs()
	if _, err := core.TaskSpecialist(dirs, o.specialist); err != nil {
		return taskError(err)
	}
	return a.withEngine(ctx, true, func(c client.Client) error {
		t := a.tasks(c)
		meta, err := t.Start(ctx, core.TaskRequest{
			Specialist: o.specialist, Prompt: o.prompt, Repo: info.Root, BaseCommit: info.Head,
			Model: a.cfg.Models.Default, ModelsFile: a.cfg.Models.File, Dirs: dirs,
			Limits: workflows.Limits{SessionTimeout: a.cfg.Agent.SessionTimeout, HeartbeatTimeout: a.cfg.Agent.HeartbeatTimeout},
		})
		if err != nil {
			return taskError(err)
		}
		if o.background {
			if o.json {
				return json.NewEncoder(a.out).Encode(meta)
			}
			fmt.Fprintln(a.out, meta.ID)
			fmt.Fprintf(a.errOut, "task %s started (%s); `horizon task output %s --follow` to watch, `horizon task stop %s` to stop it\n", meta.ID, meta.Specialist, meta.ID, meta.ID)
			return nil
		}
		fmt.Fprintf(a.errOut, "task %s started (%s); Ctrl-C stops following, the task goes on\n", meta.ID, meta.Specialist)
		return a.followTask(ctx, t, meta.ID, o.json)
	})
}

// followTask prints a task's output until it ends; Ctrl-C detaches.
func (a *app) followTask(ctx context.Context, t core.Tasks, id string, asJSON bool) error {
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := a.out
	if asJSON {
		progress = a.errOut
	}
	err := t.Output(fctx, id, true, func(ev activities.TaskEvent) error { return printTaskEvent(progress, ev) })
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
	if asJSON {
		if err := json.NewEncoder(a.out).Encode(meta); err != nil {
			return err
		}
	}
	if meta.Status != activities.TaskCompleted {
		return exitErr{code: ExitRunEnded}
	}
	return nil
}

// printTaskEvent writes one event for a person.
func printTaskEvent(w io.Writer, ev activities.TaskEvent) error {
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
		errors.Is(err, core.ErrTaskEnded), errors.Is(err, core.ErrEmptyPrompt), errors.Is(err, specialist.ErrNotFound):
		return usageError{err}
	}
	return err
}

type taskListOptions struct {
	app  *app
	json bool
}

func newTaskListCmd(a *app, runF func(context.Context, *taskListOptions) error) *cobra.Command {
	o := &taskListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List background tasks, newest first",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskList(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of {id, status, specialist, agent, model, session, repo, dir, branch, commit, prompt, cost, error, created_at, started_at, updated_at, ended_at}")
	return cmd
}

func taskList(o *taskListOptions) error {
	a := o.app
	ts, err := a.tasks(nil).List()
	if err != nil {
		return err
	}
	if o.json {
		if ts == nil {
			ts = []activities.TaskMeta{}
		}
		return json.NewEncoder(a.out).Encode(ts)
	}
	if len(ts) == 0 {
		fmt.Fprintln(a.out, "no tasks; `horizon task run SPECIALIST \"<prompt>\"` starts one")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tSPECIALIST\tMODEL\tSTARTED\tPROMPT")
	for _, m := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Status, m.Specialist, orDash(m.Model), m.CreatedAt.Local().Format(time.DateTime), oneLine(m.Prompt, 50))
	}
	return tw.Flush()
}

type taskOutputOptions struct {
	app    *app
	id     string
	follow bool
	json   bool
}

func newTaskOutputCmd(a *app, runF func(context.Context, *taskOutputOptions) error) *cobra.Command {
	o := &taskOutputOptions{app: a}
	cmd := &cobra.Command{
		Use:   "output ID [--follow] [--json]",
		Short: "Print a task's output (--follow waits for more until it ends; Ctrl-C detaches)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("task", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskOutput(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "wait for more output until the task ends")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the stream's events as they are stored, one JSON object a line ({time, id, message, role, type, text, tool, status, input, output})")
	return cmd
}

func taskOutput(ctx context.Context, o *taskOutputOptions) error {
	a := o.app
	emit := func(ev activities.TaskEvent) error { return printTaskEvent(a.out, ev) }
	if o.json {
		enc := json.NewEncoder(a.out)
		emit = func(ev activities.TaskEvent) error { return enc.Encode(ev) }
	}
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := a.tasks(nil).Output(fctx, o.id, o.follow, emit)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return exitErr{code: ExitInterrupted}
	}
	return taskError(err)
}

type taskStopOptions struct {
	app *app
	id  string
}

func newTaskStopCmd(a *app, runF func(context.Context, *taskStopOptions) error) *cobra.Command {
	o := &taskStopOptions{app: a}
	cmd := &cobra.Command{
		Use:   "stop ID",
		Short: "Stop a task: its session is aborted, its end recorded",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("task", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskStop(cmd.Context(), o)
		},
	}
	return cmd
}

func taskStop(ctx context.Context, o *taskStopOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(c client.Client) error {
		if err := a.tasks(c).Stop(ctx, o.id); err != nil {
			return taskError(err)
		}
		fmt.Fprintf(a.out, "stop requested for task %s; `horizon task list` shows when it has ended\n", o.id)
		return nil
	})
}
