package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"

	"github.com/spf13/cobra"
)

type pauseOptions struct {
	app   *app
	runID string
}

func newPauseCmd(a *app, runF func(context.Context, *pauseOptions) error) *cobra.Command {
	o := &pauseOptions{app: a}
	return &cobra.Command{
		Use:   "pause RUN",
		Short: "Hold a run before its next attempt (the step in flight finishes); `horizon resume RUN` lets it go on",
		Long: `Hold RUN before its next attempt. The step in flight (an agent session, a
gate run) finishes and is recorded; nothing new starts, and nothing is paid
for, until ` + "`horizon resume RUN`" + `.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return pauseRun(cmd.Context(), o)
		},
	}
}

func pauseRun(ctx context.Context, o *pauseOptions) error {
	a := o.app
	return a.withRun(ctx, "pause", o.runID, false, func(h *core.App, id string) error {
		s, err := h.Pause(ctx, id)
		if err != nil {
			return verbError(err)
		}
		fmt.Fprintf(a.out, "run %s paused (it holds before its next attempt; now: %s)\n", s.RunID, s.Phase)
		return nil
	})
}
