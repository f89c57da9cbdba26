package daemon

import (
	"fmt"
	"os"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/consult"
)

// writeConsultConfig registers `horizon mcp` (the consult_advisor tool) in
// the OpenCode config of horizon's config directory when
// advisor.consult.enabled, and registers nothing otherwise. OpenCode starts
// it per lane and hands it its own environment; the environment given here
// makes the tool use this daemon's settings (home, leaderboard, the
// advisor.consult keys) whatever the lane's config says.
//
// The worker may call the tool; the auditor, the lead and the consultant
// cannot: their permissions deny every tool not listed, MCP tools included.
func writeConsultConfig(confDir string, cfg *config.Config) error {
	s, err := consultServer(cfg)
	if err != nil {
		return err
	}
	if s == nil {
		return agent.WriteMCPConfig(confDir)
	}
	return agent.WriteMCPConfig(confDir, *s)
}

// consultServer is the MCP server entry, nil when the tool is off. The
// advisor keys are read by name (config.Settings).
func consultServer(cfg *config.Config) (*agent.MCPServer, error) {
	set := cfg.Settings()
	enabled, ok := set["advisor.consult.enabled"].(bool)
	if !ok {
		return nil, fmt.Errorf("consult tool: config key advisor.consult.enabled is missing or not a boolean (%T)", set["advisor.consult.enabled"])
	}
	if !enabled {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("consult tool: the horizon binary: %w", err)
	}
	env := map[string]string{}
	put := func(key string, v any) {
		if s := fmt.Sprint(v); v != nil && s != "" {
			env[config.EnvName(key)] = s
		}
	}
	put("home", cfg.Home)
	put("worker.shared_dir", cfg.Worker.SharedDir)
	put("models.file", cfg.Models.File)
	put("models.default", cfg.Models.Default)
	put("log.level", cfg.Log.Level)
	for _, k := range []string{"advisor.consult_model", "advisor.consult.include_context_messages", "advisor.consult.max_tokens"} {
		put(k, set[k])
	}
	return &agent.MCPServer{Name: consult.ServerName, Command: []string{exe, "mcp"}, Environment: env, Timeout: consult.CallTimeout}, nil
}
