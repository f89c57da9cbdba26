package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"

	"github.com/spf13/cobra"
)

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
	return a.withEngine(ctx, false, func(h *core.App) error {
		if err := h.Tasks().Stop(ctx, o.id); err != nil {
			return taskError(err)
		}
		fmt.Fprintf(a.out, "stop requested for task %s; `horizon task list` shows when it has ended\n", o.id)
		return nil
	})
}
