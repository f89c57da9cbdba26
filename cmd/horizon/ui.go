package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"

	"github.com/spf13/cobra"
)

type uiOptions struct {
	app   *app
	runID string // "": the list of all runs
}

func newUICmd(a *app, runF func(context.Context, *uiOptions) error) *cobra.Command {
	o := &uiOptions{app: a}
	return &cobra.Command{
		Use:   "ui [RUN]",
		Short: "Print the Temporal Web UI address (of a run, or of all runs)",
		Long: `Print the Web UI address. The UI shows every run live: its goal as the
summary, a Markdown progress table, each activity (worker, gate, auditor,
commit) with its retries and heartbeats.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				id, err := idArg("run", args[0])
				if err != nil {
					return err
				}
				o.runID = id
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return uiRun(cmd.Context(), o)
		},
	}
}

func uiRun(ctx context.Context, o *uiOptions) error {
	a := o.app
	if !a.cfg.Embedded() {
		return usagef("the engine is remote (%s): open its own Web UI", a.cfg.Temporal.Address)
	}
	if !a.cfg.UI.Enabled {
		return usagef("the Web UI is disabled (ui.enabled=false)")
	}
	if o.runID == "" {
		fmt.Fprintln(a.out, core.RunLink(a.cfg, ""))
		return nil
	}
	// A link to a run the engine does not have is a page of errors.
	return a.withRun(ctx, "ui", o.runID, false, func(h *core.App, id string) error {
		if err := h.Exists(ctx, id); err != nil {
			return err
		}
		fmt.Fprintln(a.out, core.RunLink(a.cfg, id))
		return nil
	})
}
