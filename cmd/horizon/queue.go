package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/core"
)

// newQueueCmd is `horizon queue`: the supervisor's goal queue.
func newQueueCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue add|list|rm|move",
		Short: "The repository's goal queue: what its supervisor runs next",
		Long: `The supervisor of a repository runs its queue from the top, one planned run
at a time: goals you add, and plans the lead made of roadmap items. The
queue lives in the supervisor (durable in the engine); ` + "`horizon supervisor start`" + `
first.`,
		Args: subcommandArgs("add, list, rm or move"),
	}
	cmd.AddCommand(newQueueAddCmd(a, nil), newQueueListCmd(a, nil), newQueueRmCmd(a, nil), newQueueMoveCmd(a, nil))
	return cmd
}

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
	return a.withEngine(ctx, false, func(c client.Client) error {
		e, err := a.supervisors(c).QueueAdd(ctx, id,
			horizon.QueueEntry{Goal: o.goal, Autonomy: auto, BudgetTime: o.budgetTime, BudgetSpend: o.budgetSpend})
		if err != nil {
			if _, qerr := a.querySupervisor(ctx, c, id); qerr != nil {
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

type queueListOptions struct {
	app  *app
	json bool
}

// QueueView is one entry of `queue list --json`.
type QueueView = core.QueueView

func newQueueListCmd(a *app, runF func(context.Context, *queueListOptions) error) *cobra.Command {
	o := &queueListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--repo DIR] [--json]",
		Short: "The queue, next first",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueList(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the queue as JSON")
	return cmd
}

func queueList(ctx context.Context, o *queueListOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(c client.Client) error {
		s, err := a.querySupervisor(ctx, c, id)
		if err != nil {
			return err
		}
		views := core.QueueOf(s)
		if o.json {
			enc := json.NewEncoder(a.out)
			enc.SetIndent("", "  ")
			return enc.Encode(views)
		}
		if len(views) == 0 {
			fmt.Fprintln(a.out, "the queue is empty; the supervisor takes the next roadmap item (`horizon roadmap` lists them)")
			return nil
		}
		for _, v := range views {
			note := ""
			if v.WaitsForApproval {
				note = "  waits for approval: horizon approve " + v.ID
			}
			if v.Item != "" {
				note = " (roadmap " + v.Item + ")" + note
			}
			fmt.Fprintf(a.out, "%-5s %-5s %s%s\n", v.ID, v.Kind, oneLine(v.Goal, 70), note)
		}
		return nil
	})
}

type queueEntryOptions struct {
	app *app
	id  string
	top bool
}

func newQueueRmCmd(a *app, runF func(context.Context, *queueEntryOptions) error) *cobra.Command {
	o := &queueEntryOptions{app: a}
	return &cobra.Command{
		Use:   "rm ID [--repo DIR]",
		Short: "Drop a queue entry (a roadmap item's plan removed is not decomposed again)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("queue entry", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueChange(cmd.Context(), o, core.Supervisors.QueueRemove)
		},
	}
}

func newQueueMoveCmd(a *app, runF func(context.Context, *queueEntryOptions) error) *cobra.Command {
	o := &queueEntryOptions{app: a}
	cmd := &cobra.Command{
		Use:   "move ID --top [--repo DIR]",
		Short: "Move a queue entry to the top",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("queue entry", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if !o.top {
				return usagef("queue move: say where: --top")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueChange(cmd.Context(), o, core.Supervisors.QueueMove)
		},
	}
	cmd.Flags().BoolVar(&o.top, "top", false, "to the top of the queue")
	return cmd
}

// queueChange applies one of the core's queue verbs to entry o.id.
func queueChange(ctx context.Context, o *queueEntryOptions, verb func(core.Supervisors, context.Context, string, string) (*horizon.SupervisorState, error)) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(c client.Client) error {
		s, err := verb(a.supervisors(c), ctx, id, o.id)
		if err != nil {
			return supervisorError(err)
		}
		var ids []string
		for _, e := range s.Queue.Entries {
			ids = append(ids, e.ID)
		}
		fmt.Fprintf(a.out, "queue: %s\n", orDash(strings.Join(ids, " ")))
		return nil
	})
}
