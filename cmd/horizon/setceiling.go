package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

type setCeilingOptions struct {
	app   *app
	runID string
	usd   float64
	day   bool
}

func newSetCeilingCmd(a *app, runF func(context.Context, *setCeilingOptions) error) *cobra.Command {
	o := &setCeilingOptions{app: a}
	cmd := &cobra.Command{
		Use:   "set-ceiling RUN USD [--day]",
		Short: "Set a run's spend ceiling; a run paused at its ceiling goes on once it is raised",
		Long: `Set the most RUN may spend, in USD as OpenCode reports costs (0: no ceiling).
A run whose spend reaches its ceiling pauses before its next attempt and
waits, costing nothing, until the ceiling is raised above what it spent.
The default ceiling of new runs is spend.ceiling. With --day, set the daily
ceiling (all runs' spend per UTC day, spend.day_ceiling) that RUN observes.`,
		Example: `  horizon set-ceiling run-20261130-021500-ab12cd 5.00`,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			usd, err := parseUSD(args[1])
			if err != nil {
				return err
			}
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID, o.usd = id, usd
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return setCeilingRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.day, "day", false, "set the daily ceiling instead of the run's")
	return cmd
}

// parseUSD reads a ceiling: a finite amount, 0 or more. NaN and Inf parse
// as floats but are no amount (and cannot be sent to a run).
func parseUSD(arg string) (float64, error) {
	usd, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
	if err != nil || math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 {
		return 0, usagef("USD %q: give an amount such as 5 or 12.50 (0 removes the ceiling)", arg)
	}
	return usd, nil
}

func setCeilingRun(ctx context.Context, o *setCeilingOptions) error {
	a := o.app
	name := "set-ceiling"
	if o.day {
		name = "set-day-ceiling"
	}
	return a.withRun(ctx, name, o.runID, false, func(h *core.App, id string) error {
		s, err := h.SetCeiling(ctx, core.CeilingRequest{Run: id, USD: o.usd, Day: o.day})
		if err != nil {
			return verbError(err)
		}
		fmt.Fprintf(a.out, "run %s: %s, spent $%.4f; %s\n", s.RunID, ceiling(s.Ceiling), s.Usage.Cost, dayCeiling(s.DayCeiling))
		return nil
	})
}
