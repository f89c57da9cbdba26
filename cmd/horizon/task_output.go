package main

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/horizon/horizon/app/core"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

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
	emit := func(ev core.TaskEvent) error { return printTaskEvent(a.out, ev) }
	if o.json {
		enc := json.NewEncoder(a.out)
		emit = func(ev core.TaskEvent) error { return enc.Encode(ev) }
	}
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := core.TaskRecords(a.cfg).Output(fctx, o.id, o.follow, emit)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return exitErr{code: ExitInterrupted}
	}
	return taskError(err)
}
