package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
)

type startOptions struct {
	app         *app
	goal        string
	detach      bool
	json        bool
	model       string
	maxAttempts int
	allowDirty  bool
	// kind is a one-feature run's kind of work (--kind, checkKind).
	kind string
	// single makes the goal one feature instead of a plan.
	single bool
	// Bound to run.autonomy, run.budget_time and run.budget_spend; read
	// through the config, kept here so the flags have somewhere to go.
	autonomy    string
	budgetTime  time.Duration
	budgetSpend float64
	// set records which mode-specific flags were given, to refuse those
	// the chosen mode would ignore.
	set map[string]bool
}

// Flags that only one mode uses.
var (
	singleOnlyFlags  = []string{"max-attempts", "kind"}
	plannedOnlyFlags = []string{"autonomy", "budget-time", "budget-spend"}
)

// defaultKind is --kind's default, and the kind of runs that have no
// --kind (demo, plan).
const defaultKind = string(horizon.KindBounded)

func newStartCmd(a *app, runF func(context.Context, *startOptions) error) *cobra.Command {
	o := &startOptions{app: a}
	cmd := &cobra.Command{
		Use:   `start [--repo DIR] [--single] [--autonomy LEVEL] [--budget-time D] [--budget-spend USD] [--model PROVIDER/MODEL] [--detach] "<goal>"`,
		Short: "Start a run on a goal and follow it until it ends",
		Long: `Start a run on a goal in the repository (--repo, default the current one).
Accepted work is committed onto branch horizon/<run>; your branch and work
tree are never touched. The run lives in the horizon daemon, started here if
it is not running. Ctrl-C stops following, not the run: ` + "`horizon status`" + `
picks it up again.

Every change goes through the verified-change loop: a worker agent changes a
lane (a git worktree), the repository's gate judges the change, and an
independent read-only auditor reviews it; only then is it committed. A failed
attempt's evidence (gate output, audit findings) goes to the next attempt.

Two modes:

  planned (default, run.planned)
      A read-only lead plans the goal into milestones of atomic features, each
      with acceptance criteria and the paths it may touch. Features run one at
      a time, each through the loop in its own lane, one commit each. A failing
      feature is not given up on: every recovery_escalation_interval attempts
      the next one takes a different recovery strategy (focused correction,
      replan, research, decomposition into parts). Only a typed blocker with
      evidence (a missing credential, a service down) pauses a feature, and
      later independent features go on. Once all are accepted, the gate runs
      on the integration branch.
  --single
      The goal is one feature, up to --max-attempts attempts (run.max_attempts);
      --kind says what kind of work it is.

Autonomy (--autonomy, run.autonomy) says where a planned run waits for you:
  full         never waits (the default)
  semi         waits before each milestone after the first, and to approve a
               plan the lead rated HIGH ambiguity
  supervised   also waits before each feature's first attempt
A waiting run costs nothing; ` + "`horizon status`" + ` shows what it waits for and
` + "`horizon approve RUN`" + ` lets it go on. No level turns a failure into a stop.

Budget: --budget-time (run.budget_time, default 72h) and --budget-spend USD
(run.budget_spend, default none) are a planned run's one hard stop, counted
from its start; 0 means no limit. When either runs out the run ends with
reason "budget" and a handoff of what was done and what is left. (spend.ceiling
is different: it pauses a run until ` + "`horizon set-ceiling`" + ` raises it.)

The gate is .horizon/verify.sh (or .zecor/verify.sh, .fleet/verify.sh), else
a detected go test / pytest / npm test / cargo test. It must exist in the
committed HEAD.

Models: without --model, each role (lead, worker, auditor) gets the
best-ranked model of the leaderboard that your OpenCode configuration can
reach (` + "`horizon models`" + ` shows the choice and why; models.file replaces the
bundled leaderboard). --model PROVIDER/MODEL (or models.default) uses one
model for every role.

Exit: 0 accepted (every feature of a plan), 1 failed/blocked/cancelled/out of
budget, 2 bad input, 3 environment, 130 Ctrl-C.`,
		Example: `  horizon start "Add CSV export to the report command"            # planned, full autonomy, 72h budget
  horizon start --autonomy semi --budget-time 8h --budget-spend 20 "Add CSV export to the report command"
  horizon start --single --model anthropic/claude-sonnet-4-5 "Make TestParseDate pass without changing the test"
  horizon start --repo ~/src/app --detach "Fix the flaky login test"    # prints the run ID and returns
  horizon start --json --detach "..." | jq -r .run_id`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("start needs a goal: horizon start \"<what to achieve>\"")
			}
			if err := horizon.CheckGoal(strings.TrimSpace(strings.Join(args, " "))); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkModelFlag(cmd); err != nil {
				return err
			}
			o.goal = strings.TrimSpace(strings.Join(args, " "))
			o.set = changedFlags(cmd, append(slices.Clone(singleOnlyFlags), plannedOnlyFlags...))
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return startRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.single, "single", false, "run the goal as one feature (no plan); --max-attempts applies")
	f.StringVar(&o.autonomy, "autonomy", "", "planned runs: full, semi or supervised (default: run.autonomy, full)")
	f.DurationVar(&o.budgetTime, "budget-time", 0, "planned runs: wall time before the run stops, e.g. 8h; 0: no limit (default: run.budget_time, 72h)")
	f.Float64Var(&o.budgetSpend, "budget-spend", 0, "planned runs: USD the run may spend before it stops; 0: no limit (default: run.budget_spend)")
	f.StringVarP(&o.model, "model", "m", "", "provider/model for every role (default: models.default, else the leaderboard per role)")
	f.IntVar(&o.maxAttempts, "max-attempts", 3, "--single: attempts before the run gives up")
	f.BoolVarP(&o.detach, "detach", "d", false, "print the run ID and return instead of following")
	f.BoolVar(&o.allowDirty, "allow-dirty", false, "start from HEAD even if the work tree has uncommitted changes")
	f.StringVar(&o.kind, "kind", defaultKind, "--single: the work's kind for the routing ladder: mechanical (codemods first), bounded (two local attempts first) or open")
	f.BoolVar(&o.json, "json", false, "print machine-readable JSON (the run ID with --detach, the final state otherwise)")
	return cmd
}

// checkModelFlag refuses an empty --model: leaving the flag out means the
// leaderboard, giving it means one model, and "" is neither.
func checkModelFlag(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("model")
	if f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
		return usagef("--model is empty: give PROVIDER/MODEL (for example anthropic/claude-sonnet-4-5), or leave --model out to use the leaderboard")
	}
	return nil
}

// changedFlags reports which of names the command line set.
func changedFlags(cmd *cobra.Command, names []string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			set[n] = true
		}
	}
	return set
}

// checkMode refuses flags the chosen mode would silently ignore.
func (o startOptions) checkMode(planned bool) error {
	given := func(names []string) []string {
		var out []string
		for _, n := range names {
			if o.set[n] {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	if g := given(singleOnlyFlags); planned && len(g) > 0 {
		return usagef("%s for a one-feature run: add --single (in a planned run each feature's kind comes from the plan, and features are retried until accepted or blocked, within the budget)", are(g))
	}
	if g := given(plannedOnlyFlags); !planned && len(g) > 0 {
		why := "drop --single"
		if !o.single {
			why = "run.planned is false; set HORIZON_RUN_PLANNED=true (or run.planned: true)"
		}
		return usagef("%s for a planned run: %s", are(g), why)
	}
	return nil
}

// are lists flags with the verb that agrees: "--a is", "--a and --b are".
func are(flags []string) string {
	if len(flags) == 1 {
		return flags[0] + " is"
	}
	return strings.Join(flags[:len(flags)-1], ", ") + " and " + flags[len(flags)-1] + " are"
}

func startRun(ctx context.Context, o *startOptions) error {
	a := o.app
	planned := a.cfg.Run.Planned && !o.single
	if err := o.checkMode(planned); err != nil {
		return err
	}
	mode := core.ModeConfigured
	if o.single {
		mode = core.ModeSingle
	}
	p, err := core.Prepare(ctx, a.cfg, core.StartRequest{Repo: a.repoDir, Goal: o.goal, Kind: o.kind, Mode: mode, BeforeModels: a.startEarly})
	if err != nil {
		a.abandonEarly(ctx)
		return err
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		if _, err := h.StartPrepared(ctx, p); err != nil {
			return err
		}
		return a.afterSubmit(ctx, h, p, o.detach, o.json)
	})
}

// afterSubmit prints the run ID (detached) or follows the run to its end.
func (a *app) afterSubmit(ctx context.Context, h *core.App, in *core.Prepared, detach, asJSON bool) error {
	id := in.RunID
	ui := core.RunLink(a.cfg, id)
	if detach {
		if asJSON {
			return json.NewEncoder(a.out).Encode(map[string]string{"run_id": id, "branch": horizon.IntegrationBranch(id), "ui": ui})
		}
		fmt.Fprintln(a.out, id)
		return nil
	}
	fmt.Fprintf(a.errOut, "run %s started on %s (base %s): %s\n", id, in.Repo, short(in.BaseCommit), describeMode(in))
	if ui != "" {
		fmt.Fprintf(a.errOut, "watch it: %s\n", ui)
	}
	return a.followToEnd(ctx, h, id, asJSON)
}

// describeMode says in a few words how the run will go.
func describeMode(in *core.Prepared) string {
	if !in.Planned {
		return "one feature, up to " + plural(in.MaxAttempts, "attempt")
	}
	budget := "no time limit"
	if in.BudgetTime > 0 {
		budget = "budget " + core.ShortDuration(in.BudgetTime)
	}
	if in.BudgetSpend > 0 {
		budget += ", " + usd(in.BudgetSpend)
	} else {
		budget += ", no spend limit"
	}
	autonomy := in.Autonomy
	if autonomy == "" {
		autonomy = horizon.DefaultAutonomy
	}
	return fmt.Sprintf("planned, autonomy %s, %s", autonomy, budget)
}

// followToEnd follows a run; Ctrl-C stops following and leaves the run be.
func (a *app) followToEnd(ctx context.Context, h *core.App, id string, asJSON bool) error {
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := a.out
	if asJSON {
		progress = a.errOut
	}
	s, err := follow(fctx, h, id, progress)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			fmt.Fprintf(a.errOut, "\nstopped following; run %s goes on. `horizon status %s` to look again, `horizon cancel %s` to stop it.\n", id, id, id)
			return exitErr{code: ExitInterrupted}
		}
		return err
	}
	code := ExitOK
	if asJSON {
		if err := json.NewEncoder(a.out).Encode(s); err != nil {
			return err
		}
		code = summary(a.errOut, s)
	} else {
		code = summary(a.out, s)
	}
	if code != ExitOK {
		return exitErr{code: code}
	}
	return nil
}
