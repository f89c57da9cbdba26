package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

func (a *app) cancelCmd() *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run: its agent session is aborted and nothing more is committed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			id := args[0]
			if err := c.CancelWorkflow(ctx, id, ""); err != nil {
				var nf *serviceerror.NotFound
				if errors.As(err, &nf) {
					return usageError{runNotFound{id}}
				}
				return fmt.Errorf("cancel %s: %w", id, err)
			}
			fmt.Fprintf(a.out, "cancel requested for %s\n", id)
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			for {
				s, _, err := fetchState(wctx, c, id)
				if err == nil && s.Status.Terminal() {
					fmt.Fprintf(a.out, "run %s %s\n", id, s.Status)
					return nil
				}
				select {
				case <-wctx.Done():
					fmt.Fprintf(a.out, "still stopping (the current step is being aborted); `horizon status %s` shows when it ends\n", id)
					return nil
				case <-time.After(300 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the run to stop")
	return cmd
}

func (a *app) resumeCmd() *cobra.Command {
	var followRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "resume [RUN]",
		Short: "After a crash or reboot: bring the daemon back and show what continues",
		Long: `Start the horizon daemon if it is not running (embedded engine), and list the
runs that continue. Runs keep their place: an agent session that was in flight
is continued (the same OpenCode session, not a new paid one), a finished step
is not repeated. With RUN, a run held by ` + "`horizon pause`" + ` goes on too.

With RUN, show that run; with --follow, follow it to its end like ` + "`horizon start`" + `
(same exit codes).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, true)
			if err != nil {
				return err
			}
			defer c.Close()
			var ids []string
			if len(args) == 1 {
				ids = args
			} else {
				runs, err := listRuns(ctx, c, a.cfg.Temporal.Namespace, "ExecutionStatus = 'Running'", 0)
				if err != nil {
					return err
				}
				for _, r := range runs {
					ids = append(ids, r.RunID)
				}
			}
			var states []*horizon.RunState
			for _, id := range ids {
				s, err := waitLive(ctx, c, id)
				if err != nil {
					return err
				}
				if s.Paused && len(args) == 1 {
					if s, err = updateRun(ctx, c, id, workflows.UpdateResume); err != nil {
						return err
					}
				}
				states = append(states, s)
			}
			if asJSON && !followRun {
				if states == nil {
					states = []*horizon.RunState{}
				}
				return json.NewEncoder(a.out).Encode(states)
			}
			if len(states) == 0 {
				fmt.Fprintln(a.out, "the horizon server is running; no run was in progress")
				return nil
			}
			for _, s := range states {
				line := fmt.Sprintf("%s  %s", s.RunID, s.Status)
				if s.Status == horizon.StatusRunning {
					line = fmt.Sprintf("%s  continuing · %s", s.RunID, s.Phase)
					if rf := runningFeature(s); rf != nil {
						line += fmt.Sprintf(" · feature %s (%d attempts so far)", rf.ID, rf.AttemptCount())
					}
					if s.Waiting != nil {
						line += " · approve: " + s.ApproveCommand()
					}
					if cur := s.Current(); cur != nil {
						line += fmt.Sprintf(" · attempt %d/%d", cur.N, s.MaxAttempts)
						if cur.WorkerSession != "" && s.Phase == horizon.PhaseWorking {
							line += " · session " + cur.WorkerSession
						}
					}
				}
				fmt.Fprintf(a.out, "%s · %s\n", line, oneLine(s.Goal, 60))
			}
			if followRun {
				if len(states) != 1 {
					return usagef("--follow needs exactly one run: horizon resume RUN --follow")
				}
				return a.followToEnd(ctx, c, states[0].RunID, asJSON)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&followRun, "follow", "f", false, "follow the run until it ends")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the continuing runs' states as JSON")
	return cmd
}

// waitLive gives a freshly started worker a moment to answer queries.
func waitLive(ctx context.Context, c client.Client, id string) (*horizon.RunState, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, live, err := fetchState(ctx, c, id)
		if err != nil || live || s.Status.Terminal() || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func runURL(cfg *config.Config, id string) string {
	base := cfg.UIURL()
	if base == "" {
		return ""
	}
	if id == "" {
		return base
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s", base, cfg.Temporal.Namespace, id)
}

func (a *app) uiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ui [RUN]",
		Short: "Print the Temporal Web UI address (of a run, or of all runs)",
		Long: `Print the Web UI address. The UI shows every run live: its goal as the
summary, a Markdown progress table, each activity (worker, gate, auditor,
commit) with its retries and heartbeats.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if !a.cfg.Embedded() {
				return usagef("the engine is remote (%s): open its own Web UI", a.cfg.Temporal.Address)
			}
			if !a.cfg.UI.Enabled {
				return usagef("the Web UI is disabled (ui.enabled=false)")
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			fmt.Fprintln(a.out, runURL(a.cfg, id))
			return nil
		},
	}
}

func (a *app) setCeilingCmd() *cobra.Command {
	var day bool
	cmd := &cobra.Command{
		Use:   "set-ceiling RUN USD [--day]",
		Short: "Set a run's spend ceiling; a run paused at its ceiling goes on once it is raised",
		Long: `Set the most RUN may spend, in USD as OpenCode reports costs (0: no ceiling).
A run whose spend reaches its ceiling pauses before its next attempt and
waits, costing nothing, until the ceiling is raised above what it spent.
The default ceiling of new runs is spend.ceiling. With --day, set the daily
ceiling (all runs' spend per UTC day, spend.day_ceiling) that RUN observes.`,
		Example: `  horizon set-ceiling run-20261130-021500-ab12cd 5.00`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			usd, err := strconv.ParseFloat(args[1], 64)
			if err != nil || usd < 0 {
				return usagef("USD %q: give an amount such as 5 or 12.50 (0 removes the ceiling)", args[1])
			}
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			name := workflows.UpdateSetCeiling
			if day {
				name = workflows.UpdateSetDayCeiling
			}
			s, err := updateRun(ctx, c, args[0], name, usd)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "run %s: ceiling $%.2f, spent $%.4f; daily ceiling $%.2f\n", s.RunID, s.Ceiling, s.Usage.Cost, s.DayCeiling)
			return nil
		},
	}
	cmd.Flags().BoolVar(&day, "day", false, "set the daily ceiling instead of the run's")
	return cmd
}

// updateRun sends a validated update to a run and returns its new state.
// A rejected update (the validator's reason) is bad input.
func updateRun(ctx context.Context, c client.Client, id, name string, args ...any) (*horizon.RunState, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, updateError(id, name, err)
	}
	var s horizon.RunState
	if err := h.Get(ctx, &s); err != nil {
		return nil, updateError(id, name, err)
	}
	return &s, nil
}

// updateError says why a run refused an update, as bad input (exit 2): a
// validator's reason ("not waiting for approval") is printed as the
// workflow wrote it, without the failure's type and retry annotations.
func updateError(id, name string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		if strings.Contains(nf.Error(), "completed") {
			return usagef("%s %s: the run has ended; `horizon status %s` shows how", name, id, id)
		}
		return usageError{runNotFound{id}}
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return usagef("%s %s: %s", name, id, app.Message())
	}
	return usageError{fmt.Errorf("%s %s: %w", name, id, err)}
}

type approveOptions struct {
	subject string
	note    string
	json    bool
}

func (a *app) approveCmd() *cobra.Command { return newApproveCmd(a.runApprove) }

// newApproveCmd binds the flags; run does the work (tests pass their own).
func newApproveCmd(run func(ctx context.Context, id string, o approveOptions) error) *cobra.Command {
	var o approveOptions
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

A run that is not waiting refuses the approval, with its reason (exit 2).`,
		Example: `  horizon approve run-20261130-021500-ab12cd
  horizon approve run-20261130-021500-ab12cd --subject m2 --note "CSV first, JSON can wait"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), args[0], o)
		},
	}
	cmd.Flags().StringVar(&o.subject, "subject", "", `the checkpoint you approve: "plan", a milestone or a feature ID (default: whatever the run waits at)`)
	cmd.Flags().StringVar(&o.note, "note", "", "a note kept with the approval")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the run's state after the approval as JSON")
	return cmd
}

func (a *app) runApprove(ctx context.Context, id string, o approveOptions) error {
	c, err := a.dial(ctx, false)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := updateRun(ctx, c, id, workflows.UpdateApprove, workflows.Approve{Subject: strings.TrimSpace(o.subject), Note: strings.TrimSpace(o.note)})
	if err != nil {
		return err
	}
	if o.json {
		return json.NewEncoder(a.out).Encode(s)
	}
	what := ""
	if o.subject != "" {
		what = " " + strings.TrimSpace(o.subject)
	}
	fmt.Fprintf(a.out, "run %s: approved%s; it goes on (%s)\n", s.RunID, what, s.Phase)
	return nil
}

func (a *app) pauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pause RUN",
		Short: "Hold a run before its next attempt (the step in flight finishes); `horizon resume RUN` lets it go on",
		Long: `Hold RUN before its next attempt. The step in flight (an agent session, a
gate run) finishes and is recorded; nothing new starts, and nothing is paid
for, until ` + "`horizon resume RUN`" + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			s, err := updateRun(ctx, c, args[0], workflows.UpdatePause)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "run %s paused (it holds before its next attempt; now: %s)\n", s.RunID, s.Phase)
			return nil
		},
	}
}

func (a *app) unblockCmd() *cobra.Command { return newUnblockCmd(a.runUnblock) }

// newUnblockCmd binds the arguments and flags; run does the work (tests
// pass their own).
func newUnblockCmd(run func(ctx context.Context, id string, u workflows.Unblock) error) *cobra.Command {
	var note string
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
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(note) == "" {
				return usagef("--note is required: say what changed, so the next attempt knows")
			}
			u := workflows.Unblock{Note: note}
			if len(args) == 2 {
				u.Feature = args[1]
			}
			return run(cmd.Context(), args[0], u)
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "what changed (required); the next attempt reads it")
	return cmd
}

func (a *app) runUnblock(ctx context.Context, id string, u workflows.Unblock) error {
	c, err := a.dial(ctx, false)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := updateRun(ctx, c, id, workflows.UpdateUnblock, u)
	if err != nil {
		return err
	}
	what := "run " + s.RunID
	if u.Feature != "" {
		what += " feature " + u.Feature
	}
	fmt.Fprintf(a.out, "%s unblocked; it goes on (%s)\n", what, s.Status)
	return nil
}
