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
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return err
	}
	dirs := a.specialistDirs()
	if _, err := core.TaskSpecialist(dirs, o.specialist, a.cfg.Specialists.TrustProject); err != nil {
		return taskError(err)
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		meta, err := h.StartTask(ctx, core.TaskRequest{
			Specialist: o.specialist, Prompt: o.prompt, Repo: info.Root, BaseCommit: info.Head, Dirs: dirs,
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
		return a.followTask(ctx, h.Tasks(), meta.ID, o.json, 0)
	})
}
