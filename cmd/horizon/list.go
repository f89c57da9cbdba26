package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/workflows"
)

type listOptions struct {
	app    *app
	json   bool
	here   bool
	limit  int
	status string
}

func newListCmd(a *app, runF func(context.Context, *listOptions) error) *cobra.Command {
	o := &listOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--status S] [--here] [--json]",
		Short: "List runs, newest first",
		Long: `List the engine's runs, newest first, with status (running, completed,
failed, blocked, cancelled), attempts (over all features of a planned run),
cost and goal. --json prints an array
of {run_id, status, goal, repo, branch, attempts, cost, started_at}.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return listRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (an array of {run_id, status, goal, repo, branch, attempts, cost, started_at})")
	cmd.Flags().IntVar(&o.limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&o.status, "status", "", "only runs with this status (running, completed, failed, blocked, cancelled)")
	cmd.Flags().BoolVar(&o.here, "here", false, "only runs of this repository (--repo, default the current directory)")
	return cmd
}

func listRun(ctx context.Context, o *listOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(c client.Client) error {
		var f runFilter
		here := "" // the repository of --here
		if o.status != "" {
			switch horizon.Status(o.status) {
			case horizon.StatusRunning, horizon.StatusCompleted, horizon.StatusFailed, horizon.StatusBlocked, horizon.StatusCancelled:
			default:
				return usagef("--status %q: use running, completed, failed, blocked or cancelled", o.status)
			}
			clause, _ := whereEqual(workflows.SearchStatus.GetName(), o.status) // a plain word: exact
			f.where = append(f.where, clause)
		}
		if o.here {
			info, err := repo.Inspect(a.repoDir)
			if err != nil {
				return err
			}
			f.equal(workflows.SearchRepo.GetName(), info.Root, func(r listedRun) bool { return r.Repo == info.Root })
			here = info.Root
		}
		runs, err := listRuns(ctx, c, a.cfg.Temporal.Namespace, f.query(), f.listLimit(o.limit))
		if err != nil {
			return err
		}
		runs = f.apply(runs, o.limit)
		for i := range runs {
			fillListed(ctx, c, &runs[i])
		}
		if o.json {
			if runs == nil {
				runs = []listedRun{}
			}
			return json.NewEncoder(a.out).Encode(runs)
		}
		if len(runs) == 0 {
			fmt.Fprintln(a.out, noRuns(o.status, here))
			return nil
		}
		tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTATUS\tATTEMPTS\tCOST\tSTARTED\tGOAL")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t$%.4f\t%s\t%s\n", r.RunID, r.Status, r.Attempts, r.Cost, r.StartedAt.Local().Format("Jan 02 15:04"), oneLine(r.Goal, 60))
		}
		return tw.Flush()
	})
}

// noRuns says that no run matched, and which: "no runs yet" only when
// nothing narrowed the list.
func noRuns(status, repo string) string {
	if status == "" && repo == "" {
		return "no runs yet; start one with `horizon start \"<goal>\"`"
	}
	what := "no runs"
	if status != "" {
		what = "no " + status + " runs"
	}
	if repo != "" {
		what += " of " + repo
	}
	return what + "; `horizon list` shows all runs"
}

// fillListed completes a listed run with its state (status, attempts, cost).
func fillListed(ctx context.Context, c client.Client, r *listedRun) {
	s, _, err := fetchState(ctx, c, r.RunID)
	if err != nil {
		if r.open {
			r.Status = horizon.StatusRunning
		} else {
			r.Status = horizon.StatusFailed
		}
		return
	}
	r.Status, r.Attempts, r.Cost = s.Status, s.TotalAttempts(), s.Usage.Cost
}
