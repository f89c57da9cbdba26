package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/workflows"
)

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [RUN] [--json]",
		Short: "Show a run's state: its plan, phase, attempts, gate and audit verdicts, cost",
		Long: `Show a run's state (the latest run when RUN is omitted).

A planned run is shown as its plan: goal, status and phase, the checkpoint it
waits at with the ` + "`horizon approve`" + ` command, the budget (time left, spend),
then each milestone with its features: status, attempts, tier of the last
attempt, last gate receipt and its verdict, cost. A blocked feature shows its
blocker's type and evidence and the ` + "`horizon unblock`" + ` command; a decomposed
feature shows its parts under it. A one-feature run (--single) is shown as
its attempts.

--json prints the whole state; scripts can rely on run_id, status (running,
completed, failed, blocked or cancelled), phase, branch, reason, usage,
attempts (one-feature runs: each with its gate verdict, audit verdict,
outcome, tokens and cost) and, for planned runs, plan (milestones, features
with their attempts and receipt IDs), waiting and budget.`,
		Example: `  horizon status
  horizon status run-20261130-021500-ab12cd --json | jq .status
  horizon status run-20261130-021500-ab12cd --json | jq '.plan.milestones[].features[] | {id, status}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			id := ""
			if len(args) == 1 {
				id = args[0]
			} else if id, err = latestRun(ctx, c, a.cfg.Temporal.Namespace); err != nil {
				return err
			}
			s, live, err := fetchState(ctx, c, id)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(a.out)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printState(a.out, s, live)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON")
	return cmd
}

func printState(w io.Writer, s *horizon.RunState, live bool) {
	if s.Plan != nil {
		fmt.Fprint(w, s.PlanTreeAt(time.Now()))
		if s.Status == horizon.StatusRunning && !live {
			fmt.Fprintln(w, "\n(no worker is answering: `horizon resume` brings the daemon back)")
		}
		return
	}
	fmt.Fprintf(w, "run      %s\nstatus   %s", s.RunID, s.Status)
	if s.Status == horizon.StatusRunning {
		fmt.Fprintf(w, " · %s", s.Phase)
		if !live {
			fmt.Fprint(w, " (no worker answering: `horizon resume`)")
		}
	}
	if s.Reason != "" {
		fmt.Fprintf(w, "\nreason   %s", s.Reason)
	}
	fmt.Fprintf(w, "\ngoal     %s\nrepo     %s\nbranch   %s\n", oneLine(s.Goal, 100), s.Repo, s.Branch)
	if s.Model != "" {
		fmt.Fprintf(w, "model    %s\n", s.Model)
	}
	if s.Commit != "" {
		fmt.Fprintf(w, "commit   %s\n", s.Commit)
	}
	fmt.Fprintf(w, "usage    %d tokens · $%.4f\n", s.Usage.Tokens(), s.Usage.Cost)
	if s.Handoff != "" {
		fmt.Fprintf(w, "handoff  %s\n", s.Handoff)
	}
	if len(s.Attempts) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTEMPT\tTIER\tMODEL\tWORKER\tGATE\tAUDIT\tOUTCOME\tSIGNALS\tTOKENS\tCOST")
	for _, at := range s.Attempts {
		worker := "–"
		switch {
		case at.ProtocolError != "":
			worker = "protocol error"
		case at.Report != nil:
			worker = string(at.Report.Status)
		case at.WorkerSession != "":
			worker = "working"
		}
		gate, audit := "–", "–"
		if at.Gate != nil {
			gate = fmt.Sprintf("%s (exit %d)", at.Gate.Verdict, at.Gate.ExitCode)
		}
		if at.Audit != nil {
			audit = string(at.Audit.Verdict)
		}
		n := fmt.Sprint(at.N)
		if at.Action != "" {
			n += " " + at.Action
		}
		var sig []string
		for _, tr := range at.Triggers {
			sig = append(sig, tr.Kind)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t$%.4f\n", n, orDash(at.Tier), orDash(at.Model), worker, gate, audit, at.Outcome, orDash(strings.Join(sig, ",")), at.Usage.Tokens(), at.Usage.Cost)
	}
	_ = tw.Flush()
	if c := s.Current(); c != nil && c.Route != "" {
		fmt.Fprintf(w, "  ladder: %s\n", c.Route)
	}
	if c := s.Current(); c != nil && c.Audit != nil {
		for _, f := range c.Audit.Findings {
			fmt.Fprintf(w, "  finding [%s] %s:%d %s\n", f.Severity, f.File, f.Line, f.Note)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func (a *app) listCmd() *cobra.Command {
	var asJSON, here bool
	var limit int
	var status string
	cmd := &cobra.Command{
		Use:   "list [--status S] [--here] [--json]",
		Short: "List runs, newest first",
		Long: `List the engine's runs, newest first, with status (running, completed,
failed, blocked, cancelled), attempts (over all features of a planned run),
cost and goal. --json prints an array
of {run_id, status, goal, repo, branch, attempts, cost, started_at}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			var where []string
			if status != "" {
				switch horizon.Status(status) {
				case horizon.StatusRunning, horizon.StatusCompleted, horizon.StatusFailed, horizon.StatusBlocked, horizon.StatusCancelled:
				default:
					return usagef("--status %q: use running, completed, failed, blocked or cancelled", status)
				}
				where = append(where, fmt.Sprintf("%s = '%s'", workflows.SearchStatus.GetName(), status))
			}
			if here {
				info, err := repo.Inspect(a.repoDir)
				if err != nil {
					return err
				}
				where = append(where, fmt.Sprintf("%s = '%s'", workflows.SearchRepo.GetName(), strings.ReplaceAll(info.Root, "'", "\\'")))
			}
			runs, err := listRuns(ctx, c, a.cfg.Temporal.Namespace, strings.Join(where, " AND "), limit)
			if err != nil {
				return err
			}
			for i := range runs {
				fillListed(ctx, c, &runs[i])
			}
			if asJSON {
				if runs == nil {
					runs = []listedRun{}
				}
				return json.NewEncoder(a.out).Encode(runs)
			}
			if len(runs) == 0 {
				fmt.Fprintln(a.out, "no runs yet; start one with `horizon start \"<goal>\"`")
				return nil
			}
			tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATUS\tATTEMPTS\tCOST\tSTARTED\tGOAL")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t$%.4f\t%s\t%s\n", r.RunID, r.Status, r.Attempts, r.Cost, r.StartedAt.Local().Format("Jan 02 15:04"), oneLine(r.Goal, 60))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (an array of {run_id, status, goal, repo, branch, attempts, cost, started_at})")
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status (running, completed, failed, blocked, cancelled)")
	cmd.Flags().BoolVar(&here, "here", false, "only runs of this repository (--repo, default the current directory)")
	return cmd
}

// fillListed completes a listed run with its state (status, attempts, cost).
func fillListed(ctx context.Context, c client.Client, r *listedRun) {
	s, _, err := fetchState(ctx, c, r.RunID)
	if err != nil {
		switch r.Engine {
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			r.Status = horizon.StatusRunning
		default:
			r.Status = horizon.StatusFailed
		}
		return
	}
	r.Status, r.Attempts, r.Cost = s.Status, s.TotalAttempts(), s.Usage.Cost
}
