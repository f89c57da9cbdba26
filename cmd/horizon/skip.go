package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

type skipOptions struct {
	app     *app
	runID   string
	feature string
	note    string
	json    bool
}

func newSkipCmd(a *app, runF func(context.Context, *skipOptions) error) *cobra.Command {
	o := &skipOptions{app: a}
	cmd := &cobra.Command{
		Use:   `skip RUN FEATURE --note "<why it is left out>"`,
		Short: "Leave a planned run's feature out, as your decision with a note",
		Long: `A feature that cannot be accepted (an acceptance criterion that stays unmet,
a decision you would rather take later) can be left out. The run records the
skip as your decision, with the note (required), and the handoff lists the
feature under "Skipped" with the criteria it left unmet. A feature that is
running is stopped first; what it changed stays in its lane, uncommitted.

Features that depend on a skipped feature stay blocked unless you skip them
too. An accepted, decomposed or already skipped feature cannot be skipped.

FEATURE is the feature's ID, as ` + "`horizon status RUN`" + ` shows it.`,
		Example: `  horizon skip run-20261130-021500-ab12cd f3 --note "the CSV export waits for the new schema; planned for next week"`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(o.note) == "" {
				return usagef("--note is required: say why the feature is left out, for the handoff")
			}
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID, o.feature = id, strings.TrimSpace(args[1])
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return skipFeature(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.note, "note", "", "why the feature is left out (required); the handoff shows it")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the run's state as JSON")
	return cmd
}

func skipFeature(ctx context.Context, o *skipOptions) error {
	a := o.app
	return a.withRun(ctx, "skip", o.runID, false, func(h *core.App, id string) error {
		s, err := h.Skip(ctx, core.SkipRequest{Run: id, Feature: o.feature, Note: o.note})
		if err != nil {
			return verbError(err)
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(s)
		}
		if f, ok := s.Plan.Feature(o.feature); ok && f.Status == horizon.FeatureSkipped {
			fmt.Fprintf(a.out, "run %s feature %s skipped; the run goes on (%s)\n", s.RunID, o.feature, s.Status)
		} else {
			fmt.Fprintf(a.out, "run %s feature %s is being stopped; it is skipped once it has (`horizon status %s`)\n", s.RunID, o.feature, s.RunID)
		}
		if held := s.Plan.DependentsOf(o.feature); len(held) > 0 {
			fmt.Fprintf(a.out, "still blocked on it: %s (skip them too, or they wait)\n", strings.Join(held, ", "))
		}
		return nil
	})
}
