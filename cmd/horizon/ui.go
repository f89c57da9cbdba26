package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/config"
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
				o.runID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return uiRun(cmd.Context(), o)
		},
	}
}

func uiRun(_ context.Context, o *uiOptions) error {
	a := o.app
	if !a.cfg.Embedded() {
		return usagef("the engine is remote (%s): open its own Web UI", a.cfg.Temporal.Address)
	}
	if !a.cfg.UI.Enabled {
		return usagef("the Web UI is disabled (ui.enabled=false)")
	}
	fmt.Fprintln(a.out, runURL(a.cfg, o.runID))
	return nil
}

func runURL(cfg *config.Config, id string) string {
	base := cfg.UIURL()
	if base == "" {
		return ""
	}
	if id == "" {
		return base
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s", base, cfg.Temporal.Namespace, id)
}
