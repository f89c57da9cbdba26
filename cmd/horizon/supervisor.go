package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

// newSupervisorCmd is `horizon supervisor`: leave a repository to horizon.
func newSupervisorCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "supervisor start|status|pause|resume|stop|trigger",
		Short: "Leave a repository to horizon: its queue, its roadmap, nightly decomposition and the daily pass",
		Long: `A supervisor works through one repository unattended. It runs the goal
queue (` + "`horizon queue`" + `) one planned run at a time; when the queue drains it has
the lead decompose the next open item of the roadmap (.horizon/roadmap.md on
the base branch, supervisor.roadmap) into a plan and runs that. Runs build on
each other on the branch horizon/roadmap: each starts from its tip and, when
it completes, its commits land there. Your own branches are never touched;
` + "`horizon roadmap`" + ` says how to merge.

Two Temporal Schedules drive it (visible on the Temporal UI's Schedules
page): nightly decomposition (supervisor.decompose_cron, default 02:00, in
this machine's time zone) keeps supervisor.decompose_ahead plans ready for a
morning's approvals, and the daily pass (supervisor.daily_cron, default
07:00) writes $HORIZON_HOME/reports/<date>.md and flags stalled goals.`,
		Args: subcommandArgs("start, status, pause, resume, stop or trigger"),
	}
	cmd.AddCommand(newSupervisorStartCmd(a, nil), newSupervisorStatusCmd(a, nil),
		newSupervisorUpdateCmd(a, "pause", "pause", "Hold the supervisor: it starts and decomposes nothing until resumed (runs in flight go on)", nil),
		newSupervisorUpdateCmd(a, "resume", "resume", "Let a paused supervisor go on", nil),
		newSupervisorUpdateCmd(a, "stop", "stop", "End the supervisor and its nightly schedule; its runs go on and its queue is kept in its last state", nil),
		newSupervisorTriggerCmd(a, nil))
	return cmd
}

type supervisorStartOptions struct {
	app      *app
	autonomy string
	json     bool
	// ceiling is --day-ceiling and --no-ceiling (USD nil: not given).
	ceiling core.DayCeilingRequest
}

func newSupervisorStartCmd(a *app, runF func(context.Context, *supervisorStartOptions) error) *cobra.Command {
	o := &supervisorStartOptions{app: a}
	var usd float64
	cmd := &cobra.Command{
		Use:   "start --day-ceiling USD|--no-ceiling [--repo DIR] [--autonomy LEVEL] [--model PROVIDER/MODEL] [--json]",
		Short: "Start the repository's supervisor and its schedules (again: nothing changes)",
		Long: `Start the supervisor of the repository (--repo, default the current one) on
its current branch, and the two schedules. --autonomy (supervisor.autonomy,
default run.autonomy) says whether a decomposed plan waits for
` + "`horizon approve ID`" + ` before it runs (semi, supervised) or runs (full).
A supervisor already running is left as it is.

A supervisor spends unattended, so it needs a day ceiling: --day-ceiling USD
bounds what all runs of this home may spend per UTC day (at it they pause
until the next day or ` + "`horizon set-ceiling --day RUN USD`" + `); spend.day_ceiling in the
configuration counts too. To run without one, say so with --no-ceiling.
With neither, start refuses (exit 2).

Models: as for ` + "`horizon start`" + `, each role gets the leaderboard's best-ranked
model that OpenCode can reach; --model PROVIDER/MODEL (models.default)
uses one model for every role of its decompositions and runs.`,
		Example: `  horizon supervisor start --day-ceiling 20
  horizon supervisor start --repo ~/src/app --autonomy semi --no-ceiling
  horizon supervisor start --day-ceiling 5 --model anthropic/claude-sonnet-4-5`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkModelFlag(cmd); err != nil {
				return err
			}
			if cmd.Flags().Changed("day-ceiling") {
				o.ceiling.USD = &usd
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return supervisorStart(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.autonomy, "autonomy", "", "full, semi or supervised (default supervisor.autonomy)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the supervisor's status as JSON")
	cmd.Flags().Float64Var(&usd, "day-ceiling", 0, "most all runs may spend per UTC day, in USD (default spend.day_ceiling)")
	cmd.Flags().BoolVar(&o.ceiling.Unlimited, "no-ceiling", false, "run with no day ceiling: accept unlimited spend")
	cmd.MarkFlagsMutuallyExclusive("day-ceiling", "no-ceiling")
	// Read through the configuration (models.default), as start's is.
	cmd.Flags().StringP("model", "m", "", "provider/model for every role (default: models.default, else the leaderboard per role)")
	return cmd
}

func supervisorStart(ctx context.Context, o *supervisorStartOptions) error {
	a := o.app
	// The flags' own wording for an undecided day ceiling, before the
	// repository is looked at.
	if _, err := a.dayCeiling(o.ceiling); err != nil {
		return err
	}
	p, err := core.PrepareSupervisor(ctx, a.cfg, core.SupervisorRequest{Repo: a.repoDir, Autonomy: o.autonomy, Ceiling: o.ceiling})
	if err != nil {
		return err
	}
	say := a.out
	if o.json {
		say = a.errOut // stdout is the JSON
	}
	fmt.Fprintln(say, describeDayCeiling(p.Ceiling))
	return a.withEngine(ctx, true, func(h *core.App) error {
		if err := h.StartSupervisor(ctx, p); err != nil {
			return err
		}
		return a.printSupervisor(ctx, h, p.ID, o.json)
	})
}

// dayCeiling decides the supervisor's day ceiling from --day-ceiling or
// --no-ceiling and spend.day_ceiling (core.ChooseDayCeiling); an undecided
// one is bad usage naming both flags.
func (a *app) dayCeiling(req core.DayCeilingRequest) (core.DayCeiling, error) {
	c, err := core.ChooseDayCeiling(req, a.cfg.Spend.DayCeiling)
	switch {
	case errors.Is(err, core.ErrNoDayCeiling):
		return c, usagef("supervisor start: %v: pass --day-ceiling USD (what all runs may spend per UTC day; or set spend.day_ceiling), or --no-ceiling to accept unlimited spend", err)
	case errors.Is(err, core.ErrDayCeilingAmount):
		return c, usagef("--day-ceiling: %v; for no ceiling say --no-ceiling", err)
	case err != nil:
		return c, usagef("supervisor start: %v: pass --day-ceiling USD or --no-ceiling, not both", err)
	}
	return c, nil
}

// describeDayCeiling says which day ceiling a supervisor uses, and why.
func describeDayCeiling(c core.DayCeiling) string {
	switch {
	case c.Unlimited:
		return "day ceiling: none, spend is unlimited (--no-ceiling)"
	case c.Configured:
		return fmt.Sprintf("day ceiling: $%.2f per UTC day across all runs (spend.day_ceiling)", c.USD)
	}
	return fmt.Sprintf("day ceiling: $%.2f per UTC day across all runs (--day-ceiling)", c.USD)
}
