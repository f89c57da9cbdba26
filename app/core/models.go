package core

// Which model each role gets: the leaderboard, the models OpenCode reaches
// from a repository, and the choice per role a run's preflight will make.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/ladder"
)

// RoleModels is each role's model and why it was chosen.
type RoleModels = activities.RoleModels

// Roles are the roles every run needs a model for.
var Roles = activities.Roles

// LoadLeaderboard reads models.file, or the bundled leaderboard; one that
// cannot be read is bad input.
func LoadLeaderboard(cfg *config.Config) (*ladder.Leaderboard, error) {
	lb, err := activities.LoadLeaderboard(cfg.Models.File)
	return lb, asInput(err)
}

// OpenCode finds the opencode binary agent.opencode_bin names, or the one
// installed; none is the environment (tools.ErrNotFound).
func OpenCode(cfg *config.Config) (string, error) {
	return tools.Find(tools.OpenCode, cfg.Agent.OpenCodeBin, "agent.opencode_bin (HORIZON_AGENT_OPENCODE_BIN)")
}

// ConnectedModels asks OpenCode which provider/model IDs it can use from
// dir (its repository's top), and adds the leaderboard's applier routes
// whose CLI is connected (ApplierRoutes). OpenCode missing or not
// answering is an *EnvironmentError, unless an applier is connected.
func ConnectedModels(ctx context.Context, cfg *config.Config, dir string) ([]string, error) {
	routes := ApplierRoutes(ctx, cfg)
	bin, err := OpenCode(cfg)
	if err != nil {
		if len(routes) > 0 {
			return routes, nil
		}
		return nil, err
	}
	// OpenCode takes its project from the repository's top, wherever in
	// it dir is.
	if root, err := repo.Root(dir); err == nil {
		dir = root
	}
	if cfg.Embedded() {
		// The daemon's OpenCode, when it runs with this binary and
		// config, answers as the run's preflight will, in milliseconds;
		// `opencode models` starts OpenCode once more, for seconds.
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		models, err := agent.ModelsFromEndpoint(mctx, cfg.OpenCodeEndpoint(), bin, cfg.Agent.OpenCodeConfig, dir)
		cancel()
		if err == nil {
			return append(models, routes...), nil
		}
	}
	models, err := connectedModels(ctx, bin, dir, cfg.Agent.OpenCodeConfig)
	if err != nil {
		return nil, &EnvironmentError{Err: err}
	}
	return append(models, routes...), nil
}

func connectedModels(ctx context.Context, bin, dir, extraConfig string) ([]string, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "models")
	cmd.Dir = dir
	// OpenCode takes its project directory from $PWD; offline like the
	// daemon's OpenCode, so both see the same models.
	cmd.Env = append(os.Environ(), "PWD="+dir, "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
	// Its own state directory: `opencode models` starts OpenCode's
	// background install into the user's config directory under a lock in
	// $XDG_STATE_HOME/opencode/locks and exits before releasing it; a
	// server started next (the daemon's) would wait on that stale lock
	// before it answers. The lock is the only state the listing needs.
	state, err := os.MkdirTemp("", "horizon-opencode-state-")
	if err != nil {
		return nil, fmt.Errorf("opencode models: %w", err)
	}
	defer os.RemoveAll(state)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state)
	if extraConfig != "" {
		cmd.Env = append(cmd.Env, "OPENCODE_CONFIG="+extraConfig)
	}
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("opencode models: %v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("opencode models: %w", err)
	}
	var models []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.Count(l, "/") >= 1 && !strings.ContainsAny(l, " \t") {
			models = append(models, l)
		}
	}
	return models, nil
}

// ResolveRoleModels resolves each role's model as the run's preflight
// will (activities.ResolveRoles), from the models OpenCode reaches from
// dir, which it returns too. A models.file that cannot be read, a
// models.default OpenCode does not offer and a role without a model are
// bad input; no opencode, or one that does not answer, the environment.
func ResolveRoleModels(ctx context.Context, cfg *config.Config, dir string) (RoleModels, []string, error) {
	lb, err := LoadLeaderboard(cfg)
	if err != nil {
		return RoleModels{}, nil, err
	}
	connected, err := ConnectedModels(ctx, cfg, dir)
	if err != nil {
		return RoleModels{}, nil, err
	}
	rm, err := activities.ResolveRoles(lb, cfg.Models.Default, connected)
	var um *agent.UnknownModelError
	switch {
	case errors.As(err, &um):
		return rm, connected, inputf("--model (models.default): %v; use one of them (`horizon models` lists them), or leave --model out to use the leaderboard", err)
	case err != nil:
		if msg := NoRoleModels(err, connected); msg != "" {
			return rm, connected, &InputError{Err: &reworded{msg: msg, err: err}}
		}
		return rm, connected, asInput(err)
	}
	return rm, connected, nil
}

// Unwrap lists the errors err joins (itself when it joins none).
func Unwrap(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// NoRoleModels says once, in a few lines, that roles have no model (err
// joins a RoleModelError per role) and what to do: one of the models
// OpenCode reaches for every role, or a provider the leaderboard ranks.
// "" when err is something else.
func NoRoleModels(err error, connected []string) string {
	var roles []string
	for _, e := range Unwrap(err) {
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
	fmt.Fprintf(&b, "no model for %s: the leaderboard ranks none of the models OpenCode reaches", JoinWords(roles))
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
