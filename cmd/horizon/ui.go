package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/engine"
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
		fmt.Fprintln(a.out, runLink(a.cfg, ""))
		return nil
	}
	// A link to a run the engine does not have is a page of errors.
	return a.withRun(ctx, "ui", o.runID, false, func(c client.Client, id string) error {
		if _, err := c.DescribeWorkflowExecution(ctx, id, ""); err != nil {
			return err
		}
		fmt.Fprintln(a.out, runLink(a.cfg, id))
		return nil
	})
}

// runURL is the Web UI page of run id (all runs for ""), without the
// token: for pages that are themselves shown to others.
func runURL(cfg *config.Config, id string) string {
	return engine.UILink(cfg.UIURL(), uiPath(cfg, id), "")
}

// runLink is runURL with the UI's token, which a browser trades for a
// cookie on first use: printed only to the person who owns the home. The
// daemon makes the token; before it has, the link is the bare address.
func runLink(cfg *config.Config, id string) string {
	tok, _ := engine.ReadToken(filepath.Join(cfg.Home, engine.UITokenFile))
	return engine.UILink(cfg.UIURL(), uiPath(cfg, id), tok)
}

func uiPath(cfg *config.Config, id string) string {
	if id == "" {
		return "/"
	}
	return fmt.Sprintf("/namespaces/%s/workflows/%s", url.PathEscape(cfg.Temporal.Namespace), url.PathEscape(id))
}
