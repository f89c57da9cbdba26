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

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

type statusOptions struct {
	app   *app
	runID string // "": the latest run
	json  bool
}

func newStatusCmd(a *app, runF func(context.Context, *statusOptions) error) *cobra.Command {
	o := &statusOptions{app: a}
	cmd := &cobra.Command{
		Use:   "status [RUN|LOOP] [--json]",
		Short: "Show a run's state: its plan, phase, attempts, gate and audit verdicts, cost",
		Long: `Show a run's state (the latest run when RUN is omitted).

A planned run is shown as its plan: goal, status and phase, the checkpoint it
waits at with the ` + "`horizon approve`" + ` command, the budget (time left, spend),
then each milestone with its features: status, attempts, tier of the last
attempt, last gate receipt and its verdict, cost. A blocked feature shows its
blocker's type and evidence and the ` + "`horizon unblock`" + ` command; a decomposed
feature shows its parts under it. A one-feature run (` + "`horizon start --single`" + `) is shown as
its attempts.

--json prints the whole state; scripts can rely on run_id, status (running,
completed, failed, blocked or cancelled), phase, branch, reason, usage,
attempts (one-feature runs: each with its gate verdict, audit verdict,
outcome, tokens and cost) and, for planned runs, plan (milestones, features
with their attempts and receipt IDs), waiting and budget.

While the run waits out an outage (the model provider unreachable or
answering 5xx, OpenCode exiting, a full disk, a locked git index), a
"waiting" line says on what, since when, how many tries, the next one and
the last error; --json carries it as outage {on, activity, feature, since,
tries, next, last_error}.

A loop's ID (loop-...) shows the loop as it stands: status (running until it
ends), activations, compactions, session, model, branch; --json prints the
same object as ` + "`horizon loop --json`" + `.`,
		Example: `  horizon status
  horizon status run-20261130-021500-ab12cd --json | jq .status
  horizon status run-20261130-021500-ab12cd --json | jq '.plan.milestones[].features[] | {id, status}'`,
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
			return statusRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the state as JSON")
	return cmd
}

func statusRun(ctx context.Context, o *statusOptions) error {
	a := o.app
	return a.withRun(ctx, "status", o.runID, false, func(h *core.App, id string) error {
		if core.IsLoopID(id) {
			return loopStatus(ctx, a, h, id, o.json)
		}
		s, live, err := fetchState(ctx, h, id)
		if err != nil {
			return err
		}
		if o.json {
			enc := json.NewEncoder(a.out)
			enc.SetIndent("", "  ")
			return enc.Encode(s)
		}
		printState(a.out, s, live)
		return nil
	})
}

func printState(w io.Writer, s *horizon.RunState, live bool) {
	if s.Plan != nil {
		fmt.Fprint(w, s.PlanTreeAt(time.Now()))
		if s.Outage != nil {
			fmt.Fprintf(w, "\nwaiting   %s\n", s.Outage.Line())
		}
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
	if s.Outage != nil {
		fmt.Fprintf(w, "\nwaiting  %s", s.Outage.Line())
	}
	if s.Reason != "" {
		fmt.Fprintf(w, "\nreason   %s", s.Reason)
	}
	for _, st := range s.Stalled {
		fmt.Fprintf(w, "\nstalled  %s (flagged by the daily pass; the run goes on)", oneLine(st.Detail, 100))
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t$%.4f\n", n, orDash(at.Tier), orDash(at.Model), worker, gate, audit, at.OutcomeCell(), orDash(strings.Join(sig, ",")), at.Usage.Tokens(), at.Usage.Cost)
	}
	_ = tw.Flush()
	for _, at := range s.Attempts {
		if sum := horizon.AdviceSummary(at.Advice); sum != "" {
			fmt.Fprintf(w, "  attempt %d %s\n", at.N, sum)
		}
		for _, l := range at.AskLines() {
			fmt.Fprintf(w, "  attempt %d %s\n", at.N, l)
		}
		if r := at.Research.Summary(); r != "" {
			fmt.Fprintf(w, "  attempt %d research: %s\n", at.N, oneLine(r, 600))
		}
	}
	for _, l := range horizon.GateTrustLines(s.Attempts) {
		fmt.Fprintf(w, "  %s\n", oneLine(l, 600))
	}
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
