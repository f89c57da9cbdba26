package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/ladder"
)

// Preflight checks, before anything is paid for, that the run can work: the
// base commit exists, a gate can be found in it, its submodules can be set
// up in lanes from the repository's own copies, and OpenCode knows the model.
func (a *Activities) Preflight(ctx context.Context, in PreflightInput) (PreflightOutput, error) {
	defer keepAlive(ctx)()
	if !gitOK(ctx, in.Repo, "cat-file", "-e", in.BaseCommit+"^{commit}") {
		return PreflightOutput{}, badInput("base commit %s is not in %s", in.BaseCommit, in.Repo)
	}
	rec, err := DecideGate(ctx, in.Repo, in.BaseCommit, in.GateCommands)
	if errors.Is(err, gate.ErrNoGate) || errors.Is(err, gate.ErrGateNotRunnable) {
		return PreflightOutput{}, badInput("%v", err)
	}
	if err != nil {
		return PreflightOutput{}, err
	}
	// A gate that needs a submodule passes in the repository and would fail
	// in every lane if lanes could not have it: say so now.
	if err := CheckSubmodules(ctx, in.Repo, in.BaseCommit); err != nil {
		return PreflightOutput{}, submoduleFailure("preflight", err)
	}
	lb, err := LoadLeaderboard(in.ModelsFile)
	if err != nil {
		return PreflightOutput{}, badInput("%v", err)
	}
	connected, err := a.Sessions.Models(ctx, in.Repo)
	if err != nil {
		return PreflightOutput{}, fmt.Errorf("preflight: models OpenCode can use: %w", err)
	}
	rm, err := ResolveRoles(lb, in.Model, connected)
	if err != nil {
		return PreflightOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUnknownModel, nil)
	}
	out := PreflightOutput{Gate: GateSummary(rec), GateRecord: &rec, Models: rm.Models, Why: rm.Why, Paid: rm.Paid}
	if in.Model != "" {
		out.Local = map[horizon.Role]string{}
		if !Paid(lb, in.Model) {
			for _, role := range LocalRoles {
				out.Local[role] = in.Model
			}
		}
		out.Tiers = a.availability(lb, in.Model, nil)
	} else {
		out.Local = localModels(lb, connected)
		out.Tiers = a.availability(lb, "", connected)
	}
	out.LocalContext = contextLength(lb, out.Tiers[ladder.T1].Model)
	activity.GetLogger(ctx).Info("preflight done", "Repo", in.Repo, "Gate", out.Gate)
	return out, nil
}

// RoleModels is the model each role of a run (Roles) gets, why, and
// whether it is paid.
type RoleModels struct {
	Models map[horizon.Role]string
	Why    map[horizon.Role]string
	Paid   map[horizon.Role]bool
}

// ResolveRoles picks the model of each role a run needs among the models
// OpenCode offers (connected): forced (--model, models.default) for every
// role when set, which OpenCode must offer, else each role's best-ranked
// leaderboard model with a connected route. The run's preflight and
// `horizon start`/`horizon doctor` both decide through it, so what the CLI
// refuses is what the run would fail on. The error is an
// *agent.UnknownModelError for a forced model OpenCode does not offer, or
// joins a *RoleModelError for each role without a model.
func ResolveRoles(lb *ladder.Leaderboard, forced string, connected []string) (RoleModels, error) {
	out := RoleModels{Models: map[horizon.Role]string{}, Why: map[horizon.Role]string{}, Paid: map[horizon.Role]bool{}}
	if forced != "" {
		if !slices.Contains(connected, forced) {
			return RoleModels{}, &agent.UnknownModelError{Model: forced, Available: connected}
		}
		for _, role := range Roles {
			out.Models[role], out.Why[role] = forced, "forced by --model (or models.default)"
			out.Paid[role] = Paid(lb, forced)
		}
		return out, nil
	}
	var errs []error
	for _, role := range Roles {
		c, err := lb.Resolve(string(role), connected)
		if err != nil {
			errs = append(errs, &RoleModelError{Role: role, Err: err})
			continue
		}
		out.Models[role], out.Why[role] = c.Route, c.Why
		out.Paid[role] = Paid(lb, c.Route)
	}
	if len(errs) > 0 {
		return RoleModels{}, errors.Join(errs...)
	}
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

// LocalRoles are the roles whose sessions may move to a local model near
// a spend ceiling (the reader's T2 rung is routed by the ladder).
var LocalRoles = []horizon.Role{horizon.RoleWorker, horizon.RoleAuditor, horizon.RoleLead}

// localModels is, per role of LocalRoles, the best-ranked local model
// connected; a role no local model ranks for is left out.
func localModels(lb *ladder.Leaderboard, connected []string) map[horizon.Role]string {
	out := map[horizon.Role]string{}
	for _, role := range LocalRoles {
		if c, err := lb.ResolveLocal(string(role), connected); err == nil {
			out[role] = c.Route
		}
	}
	return out
}

// Roles are the agent roles a run needs a model for.
var Roles = []horizon.Role{horizon.RoleWorker, horizon.RoleAuditor}

// RoleModelError says a role a run needs has no model: Err is the
// leaderboard's *ladder.NoModelError.
type RoleModelError struct {
	Role horizon.Role
	Err  error
}

func (e *RoleModelError) Error() string {
	return fmt.Sprintf("role %s: %v (or pass --model PROVIDER/MODEL to use one model for every role; `horizon models` shows each role's choice)", e.Role, e.Err)
}

func (e *RoleModelError) Unwrap() error { return e.Err }

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
// run is judged by, with gate.test_command and gate.lint_command, and says
// how it was found (".horizon/verify.sh", "detected: go test ./...", with
// the commands: GateSummary). See DecideGate.
func GateInCommit(ctx context.Context, repoDir, commit string, cmds horizon.GateCommands) (string, error) {
	rec, err := DecideGate(ctx, repoDir, commit, cmds)
	return GateSummary(rec), err
}

// DecideGate is the run's gate: the gate DiscoverGate finds on the base
// commit, with gate.test_command and gate.lint_command recorded as parts
// of it. The gate script still runs first; where the commit has no script
// a test command stands in for the detected command (the repository's
// owner said how its tests run), and is a gate of its own in a commit
// where nothing is detected. A lint command alone is not a gate: it does
// not test the change.
func DecideGate(ctx context.Context, repoDir, commit string, cmds horizon.GateCommands) (horizon.GateRecord, error) {
	rec, err := DiscoverGate(ctx, repoDir, commit)
	switch {
	case err == nil && rec.Script == "" && cmds.Test != "":
		rec.Command, rec.Source = nil, testCommandSource
	case errors.Is(err, gate.ErrNoGate) && cmds.Test != "":
		full, ferr := git(ctx, repoDir, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
		if ferr != nil {
			return horizon.GateRecord{}, err
		}
		rec = horizon.GateRecord{Commit: full, Source: testCommandSource}
	case errors.Is(err, gate.ErrNoGate):
		return horizon.GateRecord{}, fmt.Errorf("%w, or set gate.test_command to the command that runs its tests", err)
	case err != nil:
		return horizon.GateRecord{}, err
	}
	rec.TestCommand, rec.LintCommand = cmds.Test, cmds.Lint
	return rec, nil
}

// testCommandSource is the Source of a gate whose test part is
// gate.test_command alone.
const testCommandSource = "gate.test_command"

// GateSummary says, for people, what a run's gate runs: its source, then
// its test and lint commands ("" for no gate).
func GateSummary(rec horizon.GateRecord) string {
	var parts []string
	if rec.Source != "" && rec.Source != testCommandSource {
		parts = append(parts, rec.Source)
	}
	if rec.TestCommand != "" {
		parts = append(parts, fmt.Sprintf("test `%s`", rec.TestCommand))
	}
	if rec.LintCommand != "" && len(parts) > 0 {
		parts = append(parts, fmt.Sprintf("lint `%s`", rec.LintCommand))
	}
	return strings.Join(parts, ", then ")
}

// DiscoverGate decides the run's gate on its base commit, once: the tree
// is read as the commit holds it (modes from `git ls-tree`, file contents
// from blobs), never from a lane or a mock-up of one. `horizon start`,
// `horizon supervisor start`, `horizon doctor` and the run's preflight
// all decide through it. A commit without a gate is an error matching
// gate.ErrNoGate; a script the lanes could not run (no execute bit, a
// directory) is a *gate.NotRunnableError naming the repository's file.
func DiscoverGate(ctx context.Context, repoDir, commit string) (horizon.GateRecord, error) {
	full, err := git(ctx, repoDir, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return horizon.GateRecord{}, fmt.Errorf("find gate in %s: %s is not a commit: %w", repoDir, short(commit), err)
	}
	root := repoDir
	if top, err := git(ctx, repoDir, "rev-parse", "--show-toplevel"); err == nil && top != "" {
		root = top
	}
	g, err := gate.DiscoverTree(ctx, gate.GitTree{Dir: root, Commit: full}, root)
	if err != nil {
		if errors.Is(err, gate.ErrNoGate) {
			return horizon.GateRecord{}, fmt.Errorf("%w in %s at %s: looked for %s and a detectable test command (go.mod, package.json test script, pytest, Cargo.toml); add an executable .horizon/verify.sh that exits 0 when the work is done", gate.ErrNoGate, root, short(full), strings.Join(gate.ScriptPaths, ", "))
		}
		return horizon.GateRecord{}, err
	}
	rec := horizon.GateRecord{Commit: full, Script: g.Script, Mode: g.Mode, Hash: g.Hash, Command: g.Command, Source: g.Source}
	if rec.Script != "" {
		rec.Command = nil // the script runs from the lane it is restored in
	}
	return rec, nil
}

// PrepareLane makes (or finds) the feature's git worktree on its lane branch,
// and the run's integration branch. A new lane is cut at the base commit, or
// at the integration branch's tip when in.FromIntegration is set, so a
// planned run's feature builds on the features accepted before it. The
// user's branch and work tree are never touched: worktrees share the object
// store only. Submodules the lane's commit records are checked out from the
// repository's own copies (submodule.go).
func (a *Activities) PrepareLane(ctx context.Context, in LaneInput) (_ Lane, err error) {
	defer a.watchOutage(ctx, in.RunID, in.Feature)(&err)
	defer keepAlive(ctx)()
	if err := a.mustSee("repository", in.Repo); err != nil {
		return Lane{}, err
	}
	lane := Lane{
		Path:   filepath.Join(a.lanesDir(), in.RunID, in.Feature),
		Branch: horizon.LaneBranch(in.RunID, in.Feature),
	}
	integration := horizon.IntegrationBranch(in.RunID)
	tips, err := branchTips(ctx, in.Repo, integration, lane.Branch)
	if err != nil {
		return Lane{}, fmt.Errorf("prepare lane: %w", err)
	}
	if _, ok := tips[integration]; !ok {
		if _, err := git(ctx, in.Repo, "branch", integration, in.BaseCommit); err != nil {
			return Lane{}, fmt.Errorf("prepare lane: create %s: %w", integration, err)
		}
	}
	_, statErr := os.Stat(lane.Path)
	if statErr == nil {
		if top, err := git(ctx, lane.Path, "rev-parse", "--show-toplevel"); err == nil && samePath(top, lane.Path) {
			// Already there (a retry, a resumed run, a feature resumed after an
			// unblock): the lane branch has moved on from where it was cut.
			base, err := laneBase(ctx, in)
			if err != nil {
				return Lane{}, err
			}
			lane.Base = base
			if err := initSubmodules(ctx, in.Repo, lane.Path, false); err != nil {
				return Lane{}, submoduleFailure("prepare lane", err)
			}
			a.offerProjectSpecialists(ctx, in)
			return lane, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(lane.Path), 0o700); err != nil {
		return Lane{}, fmt.Errorf("prepare lane: %w", err)
	}
	if statErr == nil {
		// A half-made lane (crash during `worktree add`) is cleared first.
		clearLane(ctx, in.Repo, lane.Path)
	}
	if err := addLane(ctx, in, &lane, tips); err != nil {
		var app *temporal.ApplicationError
		if errors.As(err, &app) {
			return Lane{}, err
		}
		// git may still record a lane whose directory is gone (removed by
		// hand, a crash during `worktree add`): clear the record and try
		// once more, with the lane branch the failed try may have made.
		// The record is cleared only then, not before every lane: a lane
		// costs a few git processes, and this one is seldom needed.
		clearLane(ctx, in.Repo, lane.Path)
		if tips, err = branchTips(ctx, in.Repo, integration, lane.Branch); err != nil {
			return Lane{}, fmt.Errorf("prepare lane: %w", err)
		}
		if err := addLane(ctx, in, &lane, tips); err != nil {
			return Lane{}, err
		}
	}
	if err := initSubmodules(ctx, in.Repo, lane.Path, false); err != nil {
		return Lane{}, submoduleFailure("prepare lane", err)
	}
	a.offerProjectSpecialists(ctx, in)
	activity.GetLogger(ctx).Info("lane ready", "RunID", in.RunID, "Feature", in.Feature, "Lane", lane.Path, "Branch", lane.Branch, "Base", lane.Base)
	return lane, nil
}

// addLane adds the lane's worktree on its branch: the existing lane
// branch (tips holds the branches PrepareLane looked up), or a new one cut
// at the base commit or, with FromIntegration, at the integration
// branch's tip. It sets lane.Base to the commit the lane was cut from.
func addLane(ctx context.Context, in LaneInput, lane *Lane, tips map[string]string) error {
	integration := horizon.IntegrationBranch(in.RunID)
	if _, ok := tips[lane.Branch]; ok {
		if _, err := git(ctx, in.Repo, "worktree", "add", "--force", lane.Path, lane.Branch); err != nil {
			return fmt.Errorf("prepare lane: %w", err)
		}
		base, err := laneBase(ctx, in)
		if err != nil {
			return err
		}
		lane.Base = base
		return nil
	}
	from := in.BaseCommit
	if in.FromIntegration {
		from = "refs/heads/" + integration
	}
	// Cut at the resolved commit, not the ref: the integration branch
	// may move while this runs, and Base must be what the lane holds.
	base, ok := tips[integration]
	if !in.FromIntegration || !ok {
		var err error
		if base, err = git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", from+"^{commit}"); err != nil {
			return badInput("prepare lane: %s is not a commit in %s", from, in.Repo)
		}
	}
	if _, err := git(ctx, in.Repo, "worktree", "add", "-b", lane.Branch, lane.Path, base); err != nil {
		return fmt.Errorf("prepare lane: %w", err)
	}
	lane.Base = base
	return nil
}

// clearLane removes what is left of a lane at path: its directory, and
// git's record of a worktree there.
func clearLane(ctx context.Context, repo, path string) {
	_ = os.RemoveAll(path)
	_, _ = git(ctx, repo, "worktree", "prune")
}

// branchTips looks up branches of repo in one git process: the commit
// each that exists points at, by branch name.
func branchTips(ctx context.Context, repo string, branches ...string) (map[string]string, error) {
	args := []string{"for-each-ref", "--format=%(objectname) %(refname)"}
	for _, b := range branches {
		args = append(args, "refs/heads/"+b)
	}
	out, err := git(ctx, repo, args...)
	if err != nil {
		return nil, err
	}
	tips := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		sha, ref, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		// A pattern also matches the refs below it (horizon/r/f for
		// horizon/r): only the branches asked for count.
		if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok && slices.Contains(branches, b) {
			tips[b] = sha
		}
	}
	return tips, nil
}

// laneBase is the commit an existing lane was cut from: its branch's head,
// or the head's parent once CommitFeature committed the accepted work on
// the lane (that commit carries the feature's Horizon-Feature trailer).
// Sessions never commit on the lane, so nothing else moves it.
func laneBase(ctx context.Context, in LaneInput) (string, error) {
	ref := "refs/heads/" + horizon.LaneBranch(in.RunID, in.Feature)
	head, err := git(ctx, in.Repo, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("prepare lane: base: %w", err)
	}
	msg, err := git(ctx, in.Repo, "log", "-1", "--format=%B", head)
	if err != nil {
		return "", fmt.Errorf("prepare lane: base: %w", err)
	}
	if !hasTrailer(msg, fmt.Sprintf("Horizon-Feature: %s/%s", in.RunID, in.Feature)) {
		return head, nil
	}
	parent, err := git(ctx, in.Repo, "rev-parse", "--verify", head+"^")
	if err != nil {
		return "", fmt.Errorf("prepare lane: base: %w", err)
	}
	return parent, nil
}

// hasTrailer reports whether a commit message has the trailer line exactly
// (a substring match would take run/f1's trailer for run/f10's).
func hasTrailer(msg, trailer string) bool {
	for _, l := range strings.Split(msg, "\n") {
		if strings.TrimSpace(l) == trailer {
			return true
		}
	}
	return false
}

// integrationDir is the run's scratch worktree on its integration branch:
// CommitFeature replays lanes there, PrepareIntegration gates there.
func (a *Activities) integrationDir(runID string) string {
	return filepath.Join(a.lanesDir(), runID, "_integration")
}

// PrepareIntegration readies a detached worktree at the tip of the run's
// integration branch for the final integration gate. It reuses the scratch
// worktree CommitFeature replays in and resets it, so the leftovers of a
// failed cherry-pick or an earlier gate run never reach the gate.
func (a *Activities) PrepareIntegration(ctx context.Context, in IntegrationInput) (Lane, error) {
	defer keepAlive(ctx)()
	branch := horizon.IntegrationBranch(in.RunID)
	ref := "refs/heads/" + branch
	if !gitOK(ctx, in.Repo, "rev-parse", "--verify", "--quiet", ref) {
		return Lane{}, badInput("prepare integration: branch %s is not in %s", branch, in.Repo)
	}
	dir := a.integrationDir(in.RunID)
	if err := cleanWorktree(ctx, in.Repo, dir, ref); err != nil {
		return Lane{}, fmt.Errorf("prepare integration: %w", err)
	}
	tip, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return Lane{}, fmt.Errorf("prepare integration: %w", err)
	}
	activity.GetLogger(ctx).Info("integration worktree ready", "RunID", in.RunID, "Lane", dir, "Branch", branch, "Base", tip)
	return Lane{Path: dir, Branch: branch, Base: tip}, nil
}

// cleanWorktree makes dir a detached worktree of repo at ref, made if
// missing or half-made, with nothing left of earlier use: reset first, as
// it also ends an interrupted cherry-pick that would hold the next one;
// a forced checkout and clean drop whatever else was in the work tree.
func cleanWorktree(ctx context.Context, repo, dir, ref string) error {
	if top, err := git(ctx, dir, "rev-parse", "--show-toplevel"); err != nil || !samePath(top, dir) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		_ = os.RemoveAll(dir) // half-made by a crash
		_, _ = git(ctx, repo, "worktree", "prune")
		if _, err := git(ctx, repo, "worktree", "add", "--force", "--detach", dir, ref); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"reset", "-q", "--hard"},
		{"checkout", "-q", "-f", "--detach", ref},
		{"clean", "-fdq"},
	} {
		if _, err := git(ctx, dir, args...); err != nil {
			return err
		}
	}
	return initSubmodules(ctx, repo, dir, true)
}

// submoduleFailure: a submodule the repository cannot provide is bad input
// (retrying cannot help; the message says what to do), anything else an
// error of op.
func submoduleFailure(op string, err error) error {
	if se, ok := asSubmoduleError(err); ok {
		return badInput("%s: %v", op, se)
	}
	return fmt.Errorf("%s: %w", op, err)
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
