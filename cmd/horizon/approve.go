package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
)

type approveOptions struct {
	app     *app
	runID   string
	subject string
	note    string
	json    bool
}

func newApproveCmd(a *app, runF func(context.Context, *approveOptions) error) *cobra.Command {
	o := &approveOptions{app: a}
	cmd := &cobra.Command{
		Use:   `approve RUN [--subject S] [--note "<text>"] [--json]`,
		Short: "Let a planned run waiting at a checkpoint (semi or supervised autonomy) go on",
		Long: `A planned run under semi or supervised autonomy waits for you at its
checkpoints: the plan, when the lead rated the goal HIGH ambiguity (semi,
supervised); each milestone after the first (semi, supervised); each feature
before its first attempt (supervised). A waiting run costs nothing;
` + "`horizon status RUN`" + ` shows the checkpoint, what is to be approved, and the
plan. approve lets it go on.

--subject names the checkpoint you approve ("plan", a milestone ID or a
feature ID, as status shows it): an approval meant for another checkpoint
is refused, so a late approval cannot pass the next one. --note is kept with
the approval in the run's record.

RUN may also be a queue entry (q3) of the --repo repository's supervisor:
a roadmap item's plan waiting for approval under semi or supervised
autonomy then runs in turn.

A run that is not waiting refuses the approval, with its reason (exit 2).`,
		Example: `  horizon approve q3 --repo ~/src/app      # a supervisor's decomposed plan
  horizon approve run-20261130-021500-ab12cd
  horizon approve run-20261130-021500-ab12cd --subject m2 --note "CSV first, JSON can wait"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return approveRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.subject, "subject", "", `the checkpoint you approve: "plan", a milestone or a feature ID (default: whatever the run waits at)`)
	cmd.Flags().StringVar(&o.note, "note", "", "a note kept with the approval")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the run's state after the approval as JSON")
	return cmd
}

// queueEntryID matches a supervisor's queue entry ("q3"): approve then
// lets a decomposed plan waiting in the --repo repository's queue run.
var queueEntryID = regexp.MustCompile(`^[qQ][0-9]+$`)

// goesOn says what an approved run does next. The state is the one the
// approval left: its phase still reads "waiting for approval" until the
// run moves, which is not what it does.
func goesOn(s *horizon.RunState) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("it now waits at %s %s", s.Waiting.Kind, s.Waiting.Subject)
	case s.Status.Terminal():
		return fmt.Sprintf("the run is %s", s.Status)
	case s.Phase == horizon.PhaseApproval || s.Phase == "":
		return "it goes on"
	}
	return fmt.Sprintf("it goes on (%s)", s.Phase)
}

func approveRun(ctx context.Context, o *approveOptions) error {
	a := o.app
	if queueEntryID.MatchString(o.runID) {
		return approvePlan(ctx, o)
	}
	return a.withRun(ctx, "approve", o.runID, false, func(h *core.App, id string) error {
		s, err := h.Approve(ctx, core.ApproveRequest{Run: id, Subject: o.subject, Note: o.note})
		if err != nil {
			return verbError(err)
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(s)
		}
		what := ""
		if o.subject != "" {
			what = " " + strings.TrimSpace(o.subject)
		}
		fmt.Fprintf(a.out, "run %s: approved%s; %s\n", s.RunID, what, goesOn(s))
		return nil
	})
}

// approvePlan lets a queued plan of the repository's supervisor run.
func approvePlan(ctx context.Context, o *approveOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		s, err := h.ApproveQueued(ctx, core.ApproveQueuedRequest{Supervisor: id, Entry: o.runID, Note: o.note})
		if err != nil {
			return supervisorError(err)
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(s)
		}
		fmt.Fprintf(a.out, "%s approved; the supervisor of %s runs it in turn\n", strings.ToLower(o.runID), s.Repo)
		return nil
	})
}
