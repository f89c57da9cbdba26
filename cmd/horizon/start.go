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
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/daemon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/workflows"
)

type startOptions struct {
	goal        string
	detach      bool
	json        bool
	model       string
	maxAttempts int
	allowDirty  bool
}

func (a *app) startCmd() *cobra.Command {
	var o startOptions
	cmd := &cobra.Command{
		Use:   `start [--repo DIR] [--model PROVIDER/MODEL] [--max-attempts N] [--detach] "<goal>"`,
		Short: "Start a run on a goal and follow it until it ends",
		Long: `Start a run: the goal goes to a worker agent in a fresh lane (a git worktree
of the repository's HEAD), the repository's gate judges the change, and an
independent read-only auditor reviews it. Accepted work is committed onto
branch horizon/<run>; your branch and work tree are never touched. A failed
attempt's evidence (gate output, audit findings) goes to the next attempt.

The run lives in the horizon daemon, started here if it is not running.
Ctrl-C stops following, not the run: ` + "`horizon status`" + ` picks it up again.

The gate is .horizon/verify.sh (or .zecor/verify.sh, .fleet/verify.sh), else
a detected go test / pytest / npm test / cargo test. It must exist in the
committed HEAD.

Models: without --model, each role (worker, auditor) gets the best-ranked
model of the leaderboard that your OpenCode configuration can reach
(` + "`horizon models`" + ` shows the choice and why; models.file replaces the bundled
leaderboard). --model PROVIDER/MODEL (or models.default) uses one model for
every role.

Exit: 0 accepted, 1 failed/blocked/cancelled, 2 bad input, 3 environment, 130 Ctrl-C.`,
		Example: `  horizon start --model anthropic/claude-sonnet-4-5 "Make TestParseDate pass without changing the test"
  horizon start --repo ~/src/app --detach "Fix the flaky login test"    # prints the run ID and returns
  horizon start --json --detach "..." | jq -r .run_id`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("start needs a goal: horizon start \"<what to achieve>\"")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.goal = strings.TrimSpace(strings.Join(args, " "))
			return a.runStart(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.model, "model", "m", "", "provider/model for every role (default: models.default, else the leaderboard per role)")
	f.IntVar(&o.maxAttempts, "max-attempts", 3, "attempts before the run gives up")
	f.BoolVarP(&o.detach, "detach", "d", false, "print the run ID and return instead of following")
	f.BoolVar(&o.allowDirty, "allow-dirty", false, "start from HEAD even if the work tree has uncommitted changes")
	f.StringVar(&a.kind, "kind", "bounded", "the work's kind for the routing ladder: mechanical (codemods first), bounded (two local attempts first) or open")
	f.BoolVar(&o.json, "json", false, "print machine-readable JSON (the run ID with --detach, the final state otherwise)")
	return cmd
}

// preparedRun is a validated run, ready to submit.
type preparedRun struct {
	input workflows.RunInput
	info  repo.Info
}

// prepare checks everything that can be checked before the engine is
// involved, so bad input fails fast with exit 2 and nothing started.
func (a *app) prepare(ctx context.Context, goal string) (preparedRun, error) {
	cfg := a.cfg
	switch a.kind {
	case "", "mechanical", "bounded", "open":
	default:
		return preparedRun{}, usagef("--kind %q: use mechanical, bounded or open", a.kind)
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
	if cfg.Models.Default != "" {
		if err := config.ValidateModelName(cfg.Models.Default); err != nil {
			return preparedRun{}, usagef("--model: %v", err)
		}
	} else if _, err := activities.LoadLeaderboard(cfg.Models.File); err != nil {
		return preparedRun{}, usageError{err}
	}
	if _, err := activities.GateInCommit(ctx, info.Root, info.Head); err != nil {
		return preparedRun{}, usageError{err}
	}
	if cfg.Embedded() {
		// The daemon runs on this machine with this environment: a missing
		// opencode would only surface minutes later as a failing activity.
		if _, err := tools.Find(tools.OpenCode, cfg.Agent.OpenCodeBin, "agent.opencode_bin (HORIZON_AGENT_OPENCODE_BIN)"); err != nil {
			return preparedRun{}, err
		}
	}
	return preparedRun{info: info, input: workflows.RunInput{
		RunID:       newRunID(),
		Goal:        goal,
		Repo:        info.Root,
		BaseRef:     info.Ref,
		BaseCommit:  info.Head,
		Model:       cfg.Models.Default,
		ModelsFile:  absPath(cfg.Models.File),
		PaidQueue:   cfg.PaidQueue(),
		Ceiling:     cfg.Spend.Ceiling,
		DayCeiling:  cfg.Spend.DayCeiling,
		ThrottleAt:  cfg.Spend.ThrottleAt,
		Kind:        a.kind,
		MaxAttempts: cfg.Run.MaxAttempts,
		Limits: workflows.Limits{
			SessionTimeout:   cfg.Agent.SessionTimeout,
			HeartbeatTimeout: cfg.Agent.HeartbeatTimeout,
			GateTimeout:      cfg.Gate.Timeout,
		},
	}}, nil
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

func submit(ctx context.Context, c client.Client, namespace, taskQueue string, in workflows.RunInput) error {
	withSA := daemon.HasSearchAttributes(ctx, c, namespace)
	err := start(ctx, c, taskQueue, in, withSA)
	if err != nil && withSA && strings.Contains(err.Error(), "search attribute") {
		// Registered but not yet known to the frontend (its namespace
		// cache lags a moment): the run goes without them.
		err = start(ctx, c, taskQueue, in, false)
	}
	if err != nil {
		return fmt.Errorf("start run %s: %w", in.RunID, err)
	}
	return nil
}

func start(ctx context.Context, c client.Client, taskQueue string, in workflows.RunInput, withSA bool) error {
	var sa temporal.SearchAttributes
	if withSA {
		in.SearchAttributes = true
		sa = temporal.NewSearchAttributes(workflows.SearchRepo.ValueSet(in.Repo), workflows.SearchStatus.ValueSet(string(horizon.StatusRunning)))
	}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		TypedSearchAttributes:    sa,
		ID:                       in.RunID,
		TaskQueue:                taskQueue,
		StaticSummary:            oneLine(in.Goal, 200),
		StaticDetails:            fmt.Sprintf("Goal:\n\n%s\n\nRepository `%s` at `%s` (%s). Accepted work lands on `%s`.", in.Goal, in.Repo, in.BaseCommit, in.BaseRef, horizon.IntegrationBranch(in.RunID)),
		Memo:                     map[string]any{workflows.MemoGoal: in.Goal, workflows.MemoRepo: in.Repo},
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.RunWorkflowName, in)
	return err
}

func (a *app) runStart(ctx context.Context, o startOptions) error {
	p, err := a.prepare(ctx, o.goal)
	if err != nil {
		return err
	}
	c, err := a.dial(ctx, true)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := submit(ctx, c, a.cfg.Temporal.Namespace, a.cfg.Temporal.TaskQueue, p.input); err != nil {
		return err
	}
	return a.afterSubmit(ctx, c, p.input, o.detach, o.json)
}

// afterSubmit prints the run ID (detached) or follows the run to its end.
func (a *app) afterSubmit(ctx context.Context, c client.Client, in workflows.RunInput, detach, asJSON bool) error {
	id := in.RunID
	ui := runURL(a.cfg, id)
	if detach {
		if asJSON {
			return json.NewEncoder(a.out).Encode(map[string]string{"run_id": id, "branch": horizon.IntegrationBranch(id), "ui": ui})
		}
		fmt.Fprintln(a.out, id)
		return nil
	}
	fmt.Fprintf(a.errOut, "run %s started on %s (base %s)\n", id, in.Repo, short(in.BaseCommit))
	if ui != "" {
		fmt.Fprintf(a.errOut, "watch it: %s\n", ui)
	}
	return a.followToEnd(ctx, c, id, asJSON)
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
