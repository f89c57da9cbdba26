package daemon

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/specialist"
)

// writeSpecialists materialises the built-in and user specialists as
// OpenCode subagents in horizon's config directory, each bound to its
// role's model among the routes the server reaches, and lets the worker
// delegate to the available read-only ones. OpenCode reads agent files when
// it first serves a directory, and every attempt runs in a fresh lane, so
// files written after the server started apply to the next session.
//
// Project specialists are left out: the config directory is shared by every
// repository the daemon serves.
func writeSpecialists(ctx context.Context, srv *agent.Server, confDir string, cfg *config.Config) (specialist.Materialised, error) {
	var m specialist.Materialised
	dirs := specialist.Dirs{}
	if p := config.UserFilePath(); p != "" {
		dirs.User = filepath.Join(filepath.Dir(p), "specialists")
	}
	set, err := specialist.Load(dirs)
	if err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	lb, err := activities.LoadLeaderboard(cfg.Models.File)
	if err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	connected, err := srv.Models(ctx, "")
	if err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	m = specialist.Materialise(set, lb, connected, cfg.Models.Default)
	sub := agent.Subagents{Files: m.Files, Prefix: specialist.AgentPrefix, WorkerBrief: specialist.DelegationBrief(m.Delegates)}
	for _, d := range m.Delegates {
		sub.Delegates = append(sub.Delegates, d.Agent)
	}
	if err := agent.WriteAgentFilesWith(confDir, sub); err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	return m, nil
}
