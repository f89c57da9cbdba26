package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/ladder"
	"github.com/horizon/horizon/workflows"
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

// preparedRun is a validated run, ready to submit.
type preparedRun struct {
	input workflows.RunInput
	info  repo.Info
}

// prepare checks everything that can be checked before the engine is
// involved, so bad input fails fast with exit 2 and nothing started.
func (a *app) prepare(ctx context.Context, goal, kind string) (preparedRun, error) {
	cfg := a.cfg
	k, err := checkKind(kind)
	if err != nil {
		return preparedRun{}, err
	}
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return preparedRun{}, err
	}
	if !cfg.Run.AllowDirty {
		if err := info.CheckClean(); err != nil {
			return preparedRun{}, err
		}
	}
	if err := a.checkRunnable(ctx, info); err != nil {
		return preparedRun{}, err
	}
	in := a.runTemplate()
	in.RunID, in.Goal, in.Repo, in.BaseRef, in.BaseCommit, in.Kind = newRunID(), goal, info.Root, info.Ref, info.Head, k
	return preparedRun{info: info, input: in}, nil
}

// checkRunnable refuses, before any run exists, what would fail a run at
// preflight: an invalid model name or leaderboard, no gate in the commit
// or one the lanes could not run, no opencode for the embedded daemon, a
// --model OpenCode does not offer, a role without a model.
func (a *app) checkRunnable(ctx context.Context, info repo.Info) error {
	cfg := a.cfg
	if cfg.Models.Default != "" {
		if err := config.ValidateModelName(cfg.Models.Default); err != nil {
			return usagef("--model: %v", err)
		}
	}
	if _, err := activities.LoadLeaderboard(cfg.Models.File); err != nil {
		return usageError{err}
	}
	if _, err := activities.GateInCommit(ctx, info.Root, info.Head); err != nil {
		return usageError{err}
	}
	if err := checkSubmodules(ctx, info); err != nil {
		return err
	}
	if !cfg.Embedded() {
		// The workers of a remote cluster have their own OpenCode and
		// providers: their preflight judges the models.
		return nil
	}
	// The daemon runs on this machine with this environment: a missing
	// opencode or model would only surface later as a failed run.
	_, _, err := a.roleModels(ctx, info.Root)
	return err
}

// roleModels resolves each role's model as the run's preflight will
// (activities.ResolveRoles), from the models `opencode models` lists in
// dir, as `horizon models` asks; it also returns those models. A
// models.file that cannot be read, a --model OpenCode does not offer and a
// role without a model are bad input; no opencode, or one that does not
// answer, is the environment.
func (a *app) roleModels(ctx context.Context, dir string) (activities.RoleModels, []string, error) {
	lb, err := activities.LoadLeaderboard(a.cfg.Models.File)
	if err != nil {
		return activities.RoleModels{}, nil, usageError{err}
	}
	bin, err := tools.Find(tools.OpenCode, a.cfg.Agent.OpenCodeBin, "agent.opencode_bin (HORIZON_AGENT_OPENCODE_BIN)")
	if err != nil {
		return activities.RoleModels{}, nil, err
	}
	connected, err := connectedModels(ctx, bin, dir, a.cfg.Agent.OpenCodeConfig)
	if err != nil {
		return activities.RoleModels{}, nil, exitErr{code: ExitEnvironment, msg: err.Error()}
	}
	rm, err := activities.ResolveRoles(lb, a.cfg.Models.Default, connected)
	var um *agent.UnknownModelError
	switch {
	case errors.As(err, &um):
		return rm, connected, usagef("--model (models.default): %v; use one of them (`horizon models` lists them), or leave --model out to use the leaderboard", err)
	case err != nil:
		if msg := noRoleModels(err, connected); msg != "" {
			return rm, connected, usageError{&wrapped{msg: msg, err: err}}
		}
		return rm, connected, usageError{err}
	}
	return rm, connected, nil
}

// noRoleModels says once, in a few lines, that roles have no model (err
// joins a RoleModelError per role) and what to do: one of the models
// OpenCode reaches for every role, or a provider the leaderboard ranks.
// "" when err is something else.
func noRoleModels(err error, connected []string) string {
	var roles []string
	for _, e := range unwrapAll(err) {
		var rme *activities.RoleModelError
		var nm *ladder.NoModelError
		if !errors.As(e, &rme) || !errors.As(e, &nm) {
			return ""
		}
		roles = append(roles, fmt.Sprintf("%s (%s)", rme.Role, nm.Role))
	}
	if len(roles) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no model for %s: the leaderboard ranks none of the models OpenCode reaches", joinWords(roles))
	if len(connected) == 0 {
		b.WriteString(", and it reaches none.\nConnect a provider (`opencode auth login`), then `horizon models` shows each role's choice.")
		return b.String()
	}
	shown := connected[:min(len(connected), 5)]
	more := ""
	if len(connected) > len(shown) {
		more = fmt.Sprintf(" and %d more (`horizon models`)", len(connected)-len(shown))
	}
	fmt.Fprintf(&b, " (%s%s).\nUse one of them for every role: --model %s (or HORIZON_MODELS_DEFAULT=%s),\nor connect a provider the leaderboard ranks (`opencode auth login`).",
		strings.Join(shown, ", "), more, connected[0], connected[0])
	return b.String()
}

// wrapped says err in other words and keeps it for errors.As.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// joinWords lists words as a sentence does: "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// runTemplate is what every run takes from the configuration: models,
// limits, ceilings, queues, mode and budget. A supervisor hands it to
// each run it starts.
func (a *app) runTemplate() workflows.RunInput {
	cfg := a.cfg
	return workflows.RunInput{
		Model:       cfg.Models.Default,
		ModelsFile:  absPath(cfg.Models.File),
		PaidQueue:   cfg.PaidQueue(),
		Ceiling:     cfg.Spend.Ceiling,
		DayCeiling:  cfg.Spend.DayCeiling,
		ThrottleAt:  cfg.Spend.ThrottleAt,
		MaxAttempts: cfg.Run.MaxAttempts,
		Limits: workflows.Limits{
			SessionTimeout:   cfg.Agent.SessionTimeout,
			HeartbeatTimeout: cfg.Agent.HeartbeatTimeout,
			GateTimeout:      cfg.Gate.Timeout,
			GateProtected:    cfg.Gate.Protected,
			Advisor:          advisorSettings(cfg.Advisor),
		},
		Planned:            cfg.Run.Planned,
		Autonomy:           cfg.Run.Autonomy,
		Interval:           cfg.Run.RecoveryEscalationInterval,
		Stall:              stallPolicy(cfg),
		BudgetTime:         cfg.Run.BudgetTime,
		BudgetSpend:        cfg.Run.BudgetSpend,
		FeaturesPerHistory: cfg.Run.FeaturesPerHistory,
		LineCeiling:        cfg.Run.LineCeiling,
		DropFailedLanes:    cfg.Run.KeepFailedLanes == 0,
	}
}

// stallPolicy is run.stall_backoff and run.stall_block_after, with the
// stall threshold the daily pass uses (supervisor.stall_attempts).
func stallPolicy(cfg *config.Config) horizon.StallPolicy {
	return horizon.StallPolicy{Base: cfg.Run.StallBackoff.Base, Max: cfg.Run.StallBackoff.Max,
		BlockAfter: cfg.Run.StallBlockAfter, Threshold: cfg.Supervisor.StallAttempts}
}

// advisorSettings are the advisor.* keys a run's watchdog follows.
func advisorSettings(c config.Advisor) activities.AdvisorSettings {
	return activities.AdvisorSettings{
		Enabled: c.Enabled, Model: c.WatchdogModel, ReviewMode: c.ReviewMode, ReviewInterval: c.ReviewInterval,
		MaxToolSteps: c.MaxToolSteps, MaxNotes: c.MaxNotesPerUpdate, ImmuneTurns: c.ImmuneTurns,
		Timeout: c.Timeout, RequireEvidence: c.RequireEvidence,
	}
}

// checkKind reads --kind and refuses one the routing ladder does not know.
// An empty --kind stays empty: the ladder treats such work as bounded.
func checkKind(s string) (horizon.FeatureKind, error) {
	if s == "" {
		return "", nil
	}
	k, err := horizon.ParseFeatureKind(s)
	if ve := (*horizon.ValueError)(nil); errors.As(err, &ve) {
		return "", usagef("--kind %q: use %s", s, orList(ve.Allowed))
	}
	return k, err
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "run-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

func startRun(ctx context.Context, o *startOptions) error {
	a := o.app
	planned := a.cfg.Run.Planned && !o.single
	if err := o.checkMode(planned); err != nil {
		return err
	}
	p, err := a.prepare(ctx, o.goal, o.kind)
	if err != nil {
		return err
	}
	p.input.Planned = planned
	return a.withEngine(ctx, true, func(c client.Client) error {
		if err := a.runs(c).Start(ctx, p.input); err != nil {
			return err
		}
		return a.afterSubmit(ctx, c, p.input, o.detach, o.json)
	})
}

// afterSubmit prints the run ID (detached) or follows the run to its end.
func (a *app) afterSubmit(ctx context.Context, c client.Client, in workflows.RunInput, detach, asJSON bool) error {
	id := in.RunID
	ui := runLink(a.cfg, id)
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
	return a.followToEnd(ctx, c, id, asJSON)
}

// describeMode says in a few words how the run will go.
func describeMode(in workflows.RunInput) string {
	if !in.Planned {
		return "one feature, up to " + plural(in.MaxAttempts, "attempt")
	}
	budget := "no time limit"
	if in.BudgetTime > 0 {
		budget = "budget " + shortDuration(in.BudgetTime)
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

// shortDuration drops a duration's zero tails: 72h, 1h30m, 45m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// followToEnd follows a run; Ctrl-C stops following and leaves the run be.
func (a *app) followToEnd(ctx context.Context, c client.Client, id string, asJSON bool) error {
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := a.out
	if asJSON {
		progress = a.errOut
	}
	s, err := follow(fctx, c, id, progress)
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
