package core

// Preparing a run: everything that can be checked before the engine is
// involved, so bad input fails fast, names the input and starts nothing.
// `horizon start`, `horizon plan`, the demo, the web's POST /runs and a
// supervisor's start all go through here.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/workflows"
)

// RunMode says whether a run plans its goal or runs it as one feature.
type RunMode string

const (
	// ModeConfigured follows run.planned.
	ModeConfigured RunMode = ""
	// ModePlanned plans the goal into milestones and features.
	ModePlanned RunMode = "planned"
	// ModeSingle runs the goal as one feature.
	ModeSingle RunMode = "single"
)

// StartRequest is a goal for a repository, to run with the configuration
// the App holds.
type StartRequest struct {
	// Repo is the repository's path on the machine horizon runs on.
	Repo string `json:"repo"`
	Goal string `json:"goal"`
	// Kind is a one-feature run's kind of work for the ladder ("": bounded).
	Kind string `json:"kind,omitempty"`
	// Mode is planned, single, or "" for run.planned.
	Mode RunMode `json:"mode,omitempty"`
	// Autonomy is a planned run's (full, semi, supervised; "": run.autonomy).
	Autonomy string `json:"autonomy,omitempty"`
	// BudgetTime and BudgetSpend are a planned run's hard stop (0: the
	// configured run.budget_time and run.budget_spend).
	BudgetTime  time.Duration `json:"-"`
	BudgetSpend float64       `json:"budget_spend,omitempty"`
	// BeforeModels, when set, is called once every check that needs no
	// OpenCode has passed and opencode is installed, just before the
	// models OpenCode reaches are asked for: `horizon start` starts the
	// daemon there, whose OpenCode then answers (one OpenCode start on a
	// cold machine, not two).
	BeforeModels func(context.Context) `json:"-"`
}

// Prepared is a checked run, ready to start: what it will do, said in the
// core's words. Start it with App.StartPrepared.
type Prepared struct {
	RunID      string           `json:"run_id"`
	Goal       string           `json:"goal"`
	Repo       string           `json:"repo"`
	Branch     string           `json:"branch"`
	BaseRef    string           `json:"base_ref"`
	BaseCommit string           `json:"base_commit"`
	Planned    bool             `json:"planned"`
	Autonomy   horizon.Autonomy `json:"autonomy,omitempty"`
	// MaxAttempts is a one-feature run's attempts.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// BudgetTime and BudgetSpend are a planned run's hard stop (0: none).
	BudgetTime  time.Duration `json:"-"`
	BudgetSpend float64       `json:"budget_spend,omitempty"`

	input workflows.RunInput
}

// Started is a run the core started.
type Started struct {
	RunID  string `json:"run_id"`
	Branch string `json:"branch"`
	// UI is the run's page in the Temporal UI, when a surface knows it.
	UI string `json:"ui,omitempty"`
}

// Prepare checks req against the repository and the configuration: the
// kind and autonomy, a clean work tree (unless run.allow_dirty), the gate
// in the commit, the submodules, the models. Bad input is an
// *InputError; nothing is started.
func Prepare(ctx context.Context, cfg *config.Config, req StartRequest) (*Prepared, error) {
	k, err := CheckKind(req.Kind)
	if err != nil {
		return nil, err
	}
	in := RunTemplate(cfg)
	switch req.Mode {
	case ModePlanned:
		in.Planned = true
	case ModeSingle:
		in.Planned = false
	case ModeConfigured:
	default:
		return nil, inputf("mode %q: use planned or single", req.Mode)
	}
	if req.Autonomy != "" {
		if in.Autonomy, err = horizon.ParseAutonomy(req.Autonomy); err != nil {
			return nil, inputf("--autonomy: %v", err)
		}
	}
	if req.BudgetTime < 0 || req.BudgetSpend < 0 {
		return nil, inputf("a budget is 0 or more (0: the configured one)")
	}
	if req.BudgetTime > 0 {
		in.BudgetTime = req.BudgetTime
	}
	if req.BudgetSpend > 0 {
		in.BudgetSpend = req.BudgetSpend
	}
	if err := horizon.CheckGoal(strings.TrimSpace(req.Goal)); err != nil {
		return nil, asInput(err)
	}
	info, err := repo.Inspect(req.Repo)
	if err != nil {
		return nil, asInput(err)
	}
	if !cfg.Run.AllowDirty {
		if err := info.CheckClean(); err != nil {
			return nil, asInput(err)
		}
	}
	if err := checkRunnable(ctx, cfg, info, req.BeforeModels); err != nil {
		return nil, err
	}
	in.RunID, in.Goal, in.Repo, in.BaseRef, in.BaseCommit, in.Kind = NewRunID(), strings.TrimSpace(req.Goal), info.Root, info.Ref, info.Head, k
	return prepared(in), nil
}

// prepared says in as a Prepared.
func prepared(in workflows.RunInput) *Prepared {
	return &Prepared{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, Branch: horizon.IntegrationBranch(in.RunID),
		BaseRef: in.BaseRef, BaseCommit: in.BaseCommit, Planned: in.Planned, Autonomy: in.Autonomy,
		MaxAttempts: in.MaxAttempts, BudgetTime: in.BudgetTime, BudgetSpend: in.BudgetSpend, input: in,
	}
}

// CheckRunnable refuses, before any run exists, what would fail a run at
// preflight: an invalid model name or leaderboard, no gate in the commit
// or one the lanes could not run, a submodule lanes cannot set up, no
// opencode for the embedded daemon, a model OpenCode does not offer, a
// role without a model.
func CheckRunnable(ctx context.Context, cfg *config.Config, info repo.Info) error {
	return checkRunnable(ctx, cfg, info, nil)
}

// checkRunnable is CheckRunnable, calling before (when set) just before
// the models are asked for, once opencode is known to be installed.
func checkRunnable(ctx context.Context, cfg *config.Config, info repo.Info, before func(context.Context)) error {
	if cfg.Models.Default != "" {
		if err := config.ValidateModelName(cfg.Models.Default); err != nil {
			return inputf("--model: %v", err)
		}
	}
	if _, err := LoadLeaderboard(cfg); err != nil {
		return err
	}
	if _, err := activities.GateInCommit(ctx, info.Root, info.Head, cfg.Gate.Commands()); err != nil {
		return asInput(err)
	}
	if err := CheckSubmodules(ctx, info); err != nil {
		return err
	}
	if cfg.Specialists.TrustProject {
		if err := CheckProjectSpecialists(info.Root); err != nil {
			return err
		}
	}
	if !cfg.Embedded() {
		// The workers of a remote cluster have their own OpenCode and
		// providers: their preflight judges the models.
		return nil
	}
	// The daemon runs on this machine with this environment: a missing
	// opencode or model would only surface later as a failed run.
	if before != nil {
		if _, err := OpenCode(cfg); err == nil {
			before(ctx)
		}
	}
	_, _, err := ResolveRoleModels(ctx, cfg, info.Root)
	return err
}

// CheckProjectSpecialists refuses, as bad input, a trusted repository
// whose own specialists could not be offered to its workers: a manifest
// that does not load, or tools beyond the project scope's categories.
// Found here it costs nothing; found by a run, its workers would go on
// without them.
func CheckProjectSpecialists(root string) error {
	set, err := specialist.Load(specialist.Dirs{User: config.UserSpecialistsDir(), Project: activities.ProjectSpecialistsDir(root)})
	if err != nil {
		return inputf("specialists.trust_project: the repository's specialists do not load:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	for _, sp := range set.All() {
		if err := specialist.CheckProjectScope(sp); err != nil {
			return inputf("specialists.trust_project: %v", err)
		}
	}
	return nil
}

// SubmoduleError is a submodule of HEAD that lanes could not set up.
type SubmoduleError = activities.SubmoduleError

// CheckSubmodules refuses, as bad input, a submodule of HEAD that lanes
// could not set up, as the run's preflight checks it: found here, it
// costs nothing; found by the run, a run and its record exist for nothing.
func CheckSubmodules(ctx context.Context, info repo.Info) error {
	err := activities.CheckSubmodules(ctx, info.Root, info.Head)
	var se *SubmoduleError
	switch {
	case errors.As(err, &se):
		return asInput(err)
	case err != nil:
		return fmt.Errorf("check submodules of %s: %w", info.Root, err)
	}
	return nil
}

// RunTemplate is what every run takes from the configuration: models,
// limits, ceilings, queues, mode and budget. A supervisor hands it to
// each run it starts.
func RunTemplate(cfg *config.Config) workflows.RunInput {
	in := workflows.RunInput{
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
			GateCommands:     cfg.Gate.Commands(),
			Advisor:          advisorSettings(cfg.Advisor),
		},
		Planned:            cfg.Run.Planned,
		Autonomy:           cfg.Run.Autonomy,
		Interval:           cfg.Run.RecoveryEscalationInterval,
		Stall:              stallPolicy(cfg),
		Milestones:         horizon.MilestoneRule{Auto: cfg.Run.AutoApproveMilestones, Threshold: cfg.Run.DecisionConfidenceThreshold},
		BudgetTime:         cfg.Run.BudgetTime,
		BudgetSpend:        cfg.Run.BudgetSpend,
		FeaturesPerHistory: cfg.Run.FeaturesPerHistory,
		LineCeiling:        cfg.Run.LineCeiling,
		DropFailedLanes:    cfg.Run.KeepFailedLanes == 0,
	}
	if cfg.Specialists.TrustProject {
		// Each run offers its own repository's (the run's Repo).
		in.Limits.Specialists = &activities.ProjectSpecialists{UserDir: config.UserSpecialistsDir(), ModelsFile: absPath(cfg.Models.File), Model: cfg.Models.Default}
	}
	return in
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
		Delivery: map[string]string{"blocker": c.Delivery.Blocker, "concern": c.Delivery.Concern, "nit": c.Delivery.Nit},
	}
}

// CheckKind reads a kind of work and refuses one the routing ladder does
// not know. An empty kind stays empty: the ladder treats it as bounded.
func CheckKind(s string) (horizon.FeatureKind, error) {
	if s == "" {
		return "", nil
	}
	k, err := horizon.ParseFeatureKind(s)
	if ve := (*horizon.ValueError)(nil); errors.As(err, &ve) {
		return "", inputf("--kind %q: use %s", s, OrList(ve.Allowed))
	}
	return k, err
}

// OrList lists choices as a person says them: "a", "a or b", "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// JoinWords lists words as a sentence does: "a", "a and b", "a, b and c".
func JoinWords(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
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

// NewRunID is a new run's ID: its start time and a random tail.
func NewRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "run-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// GateInCommit finds the gate a run of commit head would run, with the
// configured gate.test_command and gate.lint_command.
func GateInCommit(ctx context.Context, root, head string, cmds horizon.GateCommands) (string, error) {
	return activities.GateInCommit(ctx, root, head, cmds)
}
