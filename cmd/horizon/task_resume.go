package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/internal/repo"
)

type taskResumeOptions struct {
	app        *app
	id         string
	prompt     string
	background bool
	json       bool
}

func newTaskResumeCmd(a *app, runF func(context.Context, *taskResumeOptions) error) *cobra.Command {
	o := &taskResumeOptions{app: a}
	cmd := &cobra.Command{
		Use:   `resume ID [--background] [--json] "<follow-up>"`,
		Short: "Give a task that has ended a follow-up in the same session; follow it unless --background (Ctrl-C detaches)",
		Args:  minArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("task", args[0])
			if err != nil {
				return err
			}
			o.id = id
			o.prompt = strings.TrimSpace(strings.Join(args[1:], " "))
			if o.prompt == "" {
				return usagef("task resume: %v", core.ErrEmptyPrompt)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskResume(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.background, "background", "b", false, "start the follow-up and print the task's ID; do not follow it")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the task's metadata as JSON once started (--background) or ended")
	return cmd
}

func taskResume(ctx context.Context, o *taskResumeOptions) error {
	a := o.app
	// What cannot be resumed is refused before a daemon is started for it.
	meta, err := core.TaskRecords(a.cfg).CanResume(o.id, o.prompt)
	if err != nil {
		return taskError(err)
	}
	head := ""
	if meta.Branch != "" {
		// An editing task's lane is cut at its branch's tip; the
		// repository's HEAD only if the branch was deleted.
		info, err := repo.Inspect(meta.Repo)
		if err != nil {
			return err
		}
		head = info.Head
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		meta, err := h.ResumeTask(ctx, core.TaskResumeRequest{ID: o.id, Prompt: o.prompt, BaseCommit: head, Dirs: a.specialistDirs()})
		if err != nil {
			return taskError(err)
		}
		if o.background {
			if o.json {
				return json.NewEncoder(a.out).Encode(meta)
			}
			fmt.Fprintln(a.out, meta.ID)
			fmt.Fprintf(a.errOut, "task %s resumed (%s, turn %d); `horizon task output %s --follow` to watch, `horizon task stop %s` to stop it\n", meta.ID, meta.Specialist, meta.Turns, meta.ID, meta.ID)
			return nil
		}
		fmt.Fprintf(a.errOut, "task %s resumed (%s, turn %d); Ctrl-C stops following, the task goes on\n", meta.ID, meta.Specialist, meta.Turns)
		// Following shows the follow-up's turn, not the turns before it.
		return a.followTask(ctx, h.Tasks(), meta.ID, o.json, meta.Turns)
	})
}
