package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// Preflight checks, before anything is paid for, that the run can work: the
// base commit exists, a gate can be found in it, and OpenCode knows the model.
func (a *Activities) Preflight(ctx context.Context, in PreflightInput) (PreflightOutput, error) {
	if !gitOK(ctx, in.Repo, "cat-file", "-e", in.BaseCommit+"^{commit}") {
		return PreflightOutput{}, badInput("base commit %s is not in %s", in.BaseCommit, in.Repo)
	}
	g, err := GateInCommit(ctx, in.Repo, in.BaseCommit)
	if err != nil {
		return PreflightOutput{}, err
	}
	out := PreflightOutput{Gate: g, Models: map[string]string{}, Why: map[string]string{}, Paid: map[string]bool{}}
	lb, err := LoadLeaderboard(in.ModelsFile)
	if err != nil {
		return PreflightOutput{}, badInput("%v", err)
	}
	if in.Model != "" {
		if err := a.Sessions.ValidateModel(ctx, in.Repo, in.Model); err != nil {
			return PreflightOutput{}, classifySessionError(err)
		}
		for _, role := range Roles {
			out.Models[role], out.Why[role] = in.Model, "forced by --model (or models.default)"
			out.Paid[role] = Paid(lb, in.Model)
		}
		out.Tiers = a.availability(lb, in.Model, nil)
		out.LocalContext = contextLength(lb, out.Tiers[ladder.T1].Model)
		return out, nil
	}
	connected, err := a.Sessions.Models(ctx, in.Repo)
	if err != nil {
		return PreflightOutput{}, fmt.Errorf("preflight: models OpenCode can use: %w", err)
	}
	for _, role := range Roles {
		c, err := lb.Resolve(role, connected)
		if err != nil {
			return PreflightOutput{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("role %s: %v (pass --model PROVIDER/MODEL to use one model for every role)", role, err), ErrTypeUnknownModel, nil)
		}
		out.Models[role], out.Why[role] = c.Route, c.Why
		out.Paid[role] = Paid(lb, c.Route)
	}
	out.Tiers = a.availability(lb, "", connected)
	out.LocalContext = contextLength(lb, out.Tiers[ladder.T1].Model)
	return out, nil
}

// contextLength is a route's context window per the leaderboard (0: unknown).
func contextLength(lb *ladder.Leaderboard, route string) int {
	for _, m := range lb.Models {
		for _, r := range m.Routes {
			if r == route && route != "" {
				return m.Capabilities.ContextLength
			}
		}
	}
	return 0
}

// Paid reports whether a provider/model route costs money per call: its
// leaderboard cost class is neither local nor free. A route the
// leaderboard does not know counts as paid: the one-paid-call limit must
// not be escaped by an unknown name.
func Paid(lb *ladder.Leaderboard, route string) bool {
	for _, m := range lb.Models {
		for _, r := range m.Routes {
			if r == route {
				return m.Capabilities.Cost != "local" && m.Capabilities.Cost != "free"
			}
		}
	}
	return true
}

// Roles are the agent roles a run needs a model for.
var Roles = []string{"worker", "auditor"}

// LoadLeaderboard reads a leaderboard file, or returns the bundled one for "".
func LoadLeaderboard(path string) (*ladder.Leaderboard, error) {
	if path == "" {
		return ladder.Bundled(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("models.file %s: %w", path, err)
	}
	lb, err := ladder.ParseLeaderboard(b)
	if err != nil {
		return nil, fmt.Errorf("models.file %s: %w", path, err)
	}
	return lb, nil
}

// GateInCommit finds the gate as it is in the base commit, the version the
// run is judged by.
func GateInCommit(ctx context.Context, repoDir, commit string) (string, error) {
	for _, p := range gate.ScriptPaths {
		if gitOK(ctx, repoDir, "cat-file", "-e", commit+":"+p) {
			return p, nil
		}
	}
	// No script: a detected ecosystem command, judged from a checkout-free
	// listing of the commit's top level.
	tmp, err := os.MkdirTemp("", "horizon-gate-probe-")
	if err != nil {
		return "", fmt.Errorf("probe gate: %w", err)
	}
	defer os.RemoveAll(tmp)
	names, err := git(ctx, repoDir, "ls-tree", "--name-only", commit)
	if err != nil {
		return "", err
	}
	for _, n := range strings.Split(names, "\n") {
		if n == "" || strings.Contains(n, "/") {
			continue
		}
		if n == "package.json" {
			body, err := git(ctx, repoDir, "show", commit+":package.json")
			if err == nil {
				_ = os.WriteFile(filepath.Join(tmp, n), []byte(body), 0o600)
			}
			continue
		}
		_ = os.WriteFile(filepath.Join(tmp, n), nil, 0o600)
	}
	g, err := gate.Discover(tmp)
	if err != nil {
		var nog *gate.NoGateError
		if errors.As(err, &nog) || errors.Is(err, gate.ErrNoGate) {
			return "", badInput("no gate in %s at %s: looked for %s and a detectable test command (go.mod, package.json test script, pytest, Cargo.toml); add an executable .horizon/verify.sh that exits 0 when the work is done", repoDir, short(commit), strings.Join(gate.ScriptPaths, ", "))
		}
		return "", badInput("gate in %s: %v", repoDir, err)
	}
	return g.Source, nil
}

// PrepareLane makes (or finds) the feature's git worktree on its lane branch
// at the base commit, and the run's integration branch. The user's branch
// and work tree are never touched: worktrees share the object store only.
func (a *Activities) PrepareLane(ctx context.Context, in LaneInput) (Lane, error) {
	lane := Lane{
		Path:   filepath.Join(a.lanesDir(), in.RunID, in.Feature),
		Branch: horizon.LaneBranch(in.RunID, in.Feature),
	}
	integration := horizon.IntegrationBranch(in.RunID)
	if !gitOK(ctx, in.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+integration) {
		if _, err := git(ctx, in.Repo, "branch", integration, in.BaseCommit); err != nil {
			return Lane{}, fmt.Errorf("prepare lane: create %s: %w", integration, err)
		}
	}
	if top, err := git(ctx, lane.Path, "rev-parse", "--show-toplevel"); err == nil && samePath(top, lane.Path) {
		return lane, nil // already there (a retry, or a resumed run)
	}
	if err := os.MkdirAll(filepath.Dir(lane.Path), 0o700); err != nil {
		return Lane{}, fmt.Errorf("prepare lane: %w", err)
	}
	// A half-made lane (crash during `worktree add`) is cleared first.
	_ = os.RemoveAll(lane.Path)
	_, _ = git(ctx, in.Repo, "worktree", "prune")
	if gitOK(ctx, in.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+lane.Branch) {
		if _, err := git(ctx, in.Repo, "worktree", "add", "--force", lane.Path, lane.Branch); err != nil {
			return Lane{}, fmt.Errorf("prepare lane: %w", err)
		}
	} else if _, err := git(ctx, in.Repo, "worktree", "add", "-b", lane.Branch, lane.Path, in.BaseCommit); err != nil {
		return Lane{}, fmt.Errorf("prepare lane: %w", err)
	}
	activity.GetLogger(ctx).Info("lane ready", "Lane", lane.Path, "Branch", lane.Branch)
	return lane, nil
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
