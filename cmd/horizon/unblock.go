package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"strings"

	"github.com/spf13/cobra"
)

type unblockOptions struct {
	app     *app
	runID   string
	feature string // "": the run's one blocked feature
	note    string
}

func newUnblockCmd(a *app, runF func(context.Context, *unblockOptions) error) *cobra.Command {
	o := &unblockOptions{app: a}
	cmd := &cobra.Command{
		Use:   `unblock RUN [FEATURE] --note "<what changed>"`,
		Short: "Let a run blocked on a typed blocker (a missing credential, a service down) go on",
		Long: `A worker that cannot go on for a reason outside the repository (a missing
credential, an unavailable service, a platform limit) reports a typed blocker
with evidence. In a one-feature run the run then waits, blocked, costing
nothing; in a planned run that feature waits (and the features that depend on
it) while independent ones go on. Once you have dealt with it, unblock it;
the note (required) goes to the feature's next attempt.

FEATURE is the blocked feature's ID, as ` + "`horizon status RUN`" + ` shows it; a
planned run with several blocked features needs it.`,
		Example: `  horizon unblock run-20261130-021500-ab12cd f1 --note "STRIPE_KEY is now set in the daemon's environment"`,
		Args:    argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.note) == "" {
				return usagef("--note is required: say what changed, so the next attempt knows")
			}
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID = id
			if len(args) == 2 {
				o.feature = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return unblockRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.note, "note", "", "what changed (required); the next attempt reads it")
	return cmd
}

func unblockRun(ctx context.Context, o *unblockOptions) error {
	a := o.app
	return a.withRun(ctx, "unblock", o.runID, false, func(h *core.App, id string) error {
		u := core.UnblockRequest{Run: id, Feature: o.feature, Note: o.note}
		s, err := h.Unblock(ctx, u)
		if err != nil {
			return verbError(err)
		}
		what := "run " + s.RunID
		if u.Feature != "" {
			what += " feature " + u.Feature
		}
		fmt.Fprintf(a.out, "%s unblocked; it goes on (%s)\n", what, s.Status)
		return nil
	})
}
