package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
)

type listOptions struct {
	app    *app
	json   bool
	here   bool
	limit  int
	status string
	kind   string // "": runs, then loops and tasks; run, loop or task: only those
}

func newListCmd(a *app, runF func(context.Context, *listOptions) error) *cobra.Command {
	o := &listOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--kind run|loop|task] [--status S] [--here] [--json]",
		Short: "List runs, loops and background tasks, newest first",
		Long: `List the engine's runs, newest first, with status (running, completed,
failed, blocked, cancelled), attempts (over all features of a planned run),
cost and goal; then the loops (` + "`horizon loop`" + `) and background tasks
(` + "`horizon task run`" + `) with theirs, when there are any and no filter is
given.

--kind keeps one kind: run, loop or task. --status filters any kind by its
status; --here only runs (loops and tasks are not kept per repository).
--json prints one kind: the runs (an array of {run_id, status, goal, repo,
branch, attempts, cost, started_at}) unless --kind says loop or task.`,
		Example: `  horizon list
  horizon list --kind loop
  horizon list --kind task --status running --json`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch o.kind {
			case "", "run", "loop", "task":
			default:
				return usagef("--kind %q: use run, loop or task", o.kind)
			}
			if o.here && (o.kind == "loop" || o.kind == "task") {
				return usagef("--here lists runs of a repository; loops and tasks are not kept per repository")
			}
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
	cmd.Flags().StringVar(&o.kind, "kind", "", "only this kind: run, loop or task")
	return cmd
}

func listRun(ctx context.Context, o *listOptions) error {
	a := o.app
	if o.kind == "loop" || o.kind == "task" {
		return a.withEngine(ctx, false, func(h *core.App) error { return listKind(ctx, o, h) })
	}
	req := core.ListRequest{Status: horizon.Status(o.status), Limit: o.limit}
	if err := req.Check(); err != nil {
		return err
	}
	if o.here {
		info, err := repo.Inspect(a.repoDir)
		if err != nil {
			return err
		}
		req.Repo = info.Root
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		runs, err := listRuns(ctx, h, req)
		if err != nil {
			return err
		}
		for i := range runs {
			fillListed(ctx, h, &runs[i])
		}
		if o.json {
			if runs == nil {
				runs = []listedRun{}
			}
			return json.NewEncoder(a.out).Encode(runs)
		}
		if len(runs) == 0 {
			fmt.Fprintln(a.out, noRuns(o.status, req.Repo))
		} else {
			tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATUS\tATTEMPTS\tCOST\tSTARTED\tGOAL")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t$%.4f\t%s\t%s\n", r.RunID, r.Status, r.Attempts, r.Cost, r.StartedAt.Local().Format("Jan 02 15:04"), oneLine(r.Goal, 60))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if o.status != "" || o.here || o.kind == "run" {
			return nil // loops and tasks have neither a run's status nor a filter by repository
		}
		return listLoopsAndTasks(ctx, a, h)
	})
}

// listKind lists only the loops or only the tasks (--kind), filtered by
// --status, as a table or --json.
func listKind(ctx context.Context, o *listOptions, h *core.App) error {
	a := o.app
	if o.kind == "loop" {
		rows, err := h.LoopRows(ctx)
		if err != nil {
			return err
		}
		rows = keepStatus(rows, o.status, func(l core.LoopRow) string { return string(l.Status) })
		if o.json {
			return json.NewEncoder(a.out).Encode(rows)
		}
		if len(rows) == 0 {
			fmt.Fprintln(a.out, noneOf("loops", o.status, "`horizon loop \"<goal>\"` starts one"))
			return nil
		}
		tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LOOP\tSTATUS\tROLE\tACTIVATIONS\tCOST\tSTARTED")
		for _, l := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\n", l.Loop, l.Status, orDash(l.Role), l.Activations, l.Cost, l.StartedAt.Local().Format("Jan 02 15:04"))
		}
		return tw.Flush()
	}
	rows, err := h.TaskRows(ctx)
	if err != nil {
		return err
	}
	rows = keepStatus(rows, o.status, func(t core.TaskMeta) string { return string(t.Status) })
	if o.json {
		return json.NewEncoder(a.out).Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(a.out, noneOf("background tasks", o.status, "`horizon task run SPECIALIST \"<prompt>\"` starts one"))
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tSPECIALIST\tPROMPT")
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Specialist, oneLine(t.Prompt, 60))
	}
	return tw.Flush()
}

// keepStatus keeps the rows whose status is status ("": all); never nil,
// so --json prints [].
func keepStatus[T any](rows []T, status string, of func(T) string) []T {
	out := []T{}
	for _, r := range rows {
		if status == "" || of(r) == status {
			out = append(out, r)
		}
	}
	return out
}

// noneOf says no loops or tasks matched, and how to start one.
func noneOf(what, status, start string) string {
	if status != "" {
		return fmt.Sprintf("no %s %s; `horizon list` shows everything", status, what)
	}
	return fmt.Sprintf("no %s yet; %s", what, start)
}

// listLoopsAndTasks prints the loops and background tasks under the runs,
// each with its status; nothing when there are none.
func listLoopsAndTasks(ctx context.Context, a *app, h *core.App) error {
	loops, err := h.LoopRows(ctx)
	if err != nil {
		return err
	}
	tasks, err := h.TaskRows(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	if len(loops) > 0 {
		fmt.Fprintln(tw, "\nLOOP\tSTATUS\tROLE\tACTIVATIONS\tCOST\tSTARTED")
		for _, l := range loops {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\n", l.Loop, l.Status, orDash(l.Role), l.Activations, l.Cost, l.StartedAt.Local().Format("Jan 02 15:04"))
		}
	}
	if len(tasks) > 0 {
		fmt.Fprintln(tw, "\nTASK\tSTATUS\tSPECIALIST\tPROMPT")
		for _, t := range tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Specialist, oneLine(t.Prompt, 60))
		}
	}
	return tw.Flush()
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
func fillListed(ctx context.Context, h *core.App, r *listedRun) {
	s, _, err := fetchState(ctx, h, r.RunID)
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
