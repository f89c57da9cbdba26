package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
)

type queueAddOptions struct {
	app         *app
	goal        string
	autonomy    string
	budgetTime  time.Duration
	budgetSpend float64
	json        bool
}

func newQueueAddCmd(a *app, runF func(context.Context, *queueAddOptions) error) *cobra.Command {
	o := &queueAddOptions{app: a}
	cmd := &cobra.Command{
		Use:     `add [--repo DIR] [--autonomy L] [--budget-time D] [--budget-spend USD] [--json] "<goal>"`,
		Short:   "Queue a goal; the supervisor plans and runs it in turn",
		Example: `  horizon queue add "Make TestParseDate pass"` + "\n" + `  horizon queue add --autonomy semi --budget-spend 5 "Add CSV export"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.goal = strings.TrimSpace(args[0])
			if o.goal == "" {
				return usagef("queue add: the goal is empty")
			}
			if err := horizon.CheckGoal(o.goal); err != nil {
				return usagef("queue add: %v", err)
			}
			if o.budgetTime < 0 || o.budgetSpend < 0 || o.budgetSpend != o.budgetSpend || o.budgetSpend > 1e12 {
				return usagef("queue add: budgets are 0 (the configured default) or positive")
			}
			if o.autonomy != "" {
				if _, err := horizon.ParseAutonomy(o.autonomy); err != nil {
					return usagef("--autonomy: %v", err)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueAdd(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.autonomy, "autonomy", "", "full, semi or supervised (default the supervisor's)")
	cmd.Flags().DurationVar(&o.budgetTime, "budget-time", 0, "the run's time budget (default run.budget_time)")
	cmd.Flags().Float64Var(&o.budgetSpend, "budget-spend", 0, "the run's spend budget in USD (default run.budget_spend)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the queued entry as JSON")
	return cmd
}

func queueAdd(ctx context.Context, o *queueAddOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	auto, _ := horizon.ParseAutonomy(o.autonomy)
	if o.autonomy == "" {
		auto = ""
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		e, err := h.Supervisors().QueueAdd(ctx, id,
			horizon.QueueEntry{Goal: o.goal, Autonomy: auto, BudgetTime: o.budgetTime, BudgetSpend: o.budgetSpend})
		if err != nil {
			if _, qerr := a.querySupervisor(ctx, h, id); qerr != nil {
				return qerr
			}
			return supervisorError(err)
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(e)
		}
		fmt.Fprintf(a.out, "queued %s: %s\n", e.ID, e.Goal)
		return nil
	})
}
