package daemon

import (
	"context"
	"fmt"
	"os"

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
// Project specialists are left out here: the config directory is shared
// by every repository the daemon serves, so a trusted repository's are
// written, named for it, when its lanes are prepared (activities,
// project_specialists.go).
func writeSpecialists(ctx context.Context, srv *agent.Server, confDir string, cfg *config.Config) (specialist.Materialised, error) {
	var m specialist.Materialised
	dirs := specialist.Dirs{User: config.UserSpecialistsDir()}
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
	adv, err := advisorAgent(cfg)
	if err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	sub := agent.Subagents{Files: m.Files, Prefix: specialist.AgentPrefix, WorkerBrief: specialist.DelegationBrief(m.Delegates), Advisor: adv}
	for _, d := range m.Delegates {
		sub.Delegates = append(sub.Delegates, d.Agent)
	}
	if err := agent.WriteAgentFilesWith(confDir, sub); err != nil {
		return m, fmt.Errorf("materialise specialists: %w", err)
	}
	return m, nil
}

// advisorAgent is what advisor.tools, advisor.max_tool_steps and
// advisor.system_prompt make of the advisor's agent file.
func advisorAgent(cfg *config.Config) (agent.AdvisorAgent, error) {
	a := agent.AdvisorAgent{Tools: cfg.Advisor.Tools, ToolSteps: cfg.Advisor.MaxToolSteps, Set: true}
	if p := cfg.Advisor.SystemPrompt; p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return a, fmt.Errorf("advisor.system_prompt: %w", err)
		}
		a.Extra = string(b)
	}
	return a, nil
}
