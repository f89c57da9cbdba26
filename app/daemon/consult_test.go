package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/agent"
)

// With advisor.consult.enabled (the default) horizon's OpenCode config
// registers `horizon mcp` with this daemon's settings in its environment;
// turned off, the registration is gone.
func TestConsultToolRegistration(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	home := t.TempDir()
	t.Setenv("HORIZON_HOME", home)
	t.Setenv("HORIZON_ADVISOR_CONSULT_MODEL", "fake/advisor")
	t.Setenv("HORIZON_ADVISOR_CONSULT_MAX_TOKENS", "300")
	cfg, err := config.Load(config.Options{Repo: t.TempDir()})
	require.NoError(t, err)
	confDir := t.TempDir()

	require.NoError(t, writeConsultConfig(confDir, cfg))
	names, err := agent.MCPServers(confDir)
	require.NoError(t, err)
	require.Equal(t, []string{"horizon"}, names)
	var file struct {
		MCP map[string]struct {
			Type        string            `json:"type"`
			Command     []string          `json:"command"`
			Environment map[string]string `json:"environment"`
			Enabled     bool              `json:"enabled"`
			Timeout     int64             `json:"timeout"`
		} `json:"mcp"`
	}
	b, err := os.ReadFile(filepath.Join(confDir, "opencode.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	e := file.MCP["horizon"]
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Equal(t, "local", e.Type)
	require.True(t, e.Enabled)
	require.Equal(t, []string{exe, "mcp"}, e.Command)
	require.Equal(t, int64(600000), e.Timeout, "a consult may take minutes; OpenCode's default is 5s")
	require.Equal(t, home, e.Environment["HORIZON_HOME"])
	require.Equal(t, "fake/advisor", e.Environment["HORIZON_ADVISOR_CONSULT_MODEL"])
	require.Equal(t, "300", e.Environment["HORIZON_ADVISOR_CONSULT_MAX_TOKENS"])
	require.Equal(t, "12", e.Environment["HORIZON_ADVISOR_CONSULT_INCLUDE_CONTEXT_MESSAGES"], "the default")
	require.NotContains(t, e.Environment, "HORIZON_WORKER_SHARED_DIR", "unset settings are not passed")

	t.Setenv("HORIZON_ADVISOR_CONSULT_ENABLED", "false")
	cfg, err = config.Load(config.Options{Repo: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, writeConsultConfig(confDir, cfg))
	names, err = agent.MCPServers(confDir)
	require.NoError(t, err)
	require.Empty(t, names, "turned off, the tool is no longer registered")
}
