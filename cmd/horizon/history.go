package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"

	"github.com/spf13/cobra"
)

type historyOptions struct {
	app   *app
	runID string
}

// newHistoryCmd exports a run's event history as JSON: for bug reports, and
// for the workflows' replay tests (testdata/*.json), which fail the build
// when a code change would break determinism for runs in flight.
func newHistoryCmd(a *app, runF func(context.Context, *historyOptions) error) *cobra.Command {
	o := &historyOptions{app: a}
	return &cobra.Command{
		Use:    "history RUN",
		Short:  "Print a run's Temporal event history as JSON",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return historyRun(cmd.Context(), o)
		},
	}
}

func historyRun(ctx context.Context, o *historyOptions) error {
	a := o.app
	return a.withRun(ctx, "history", o.runID, false, func(h *core.App, id string) error {
		b, err := h.History(ctx, id)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.out, string(b))
		return err
	})
}
