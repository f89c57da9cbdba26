package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// EnvServerURL is set in the environment of `opencode serve` to the
// server's own base URL. OpenCode passes its environment on to the local MCP
// servers it starts (1.18.33: {...process.env, ...environment}), so
// horizon's MCP server finds the API it must call, and the server password
// (OPENCODE_SERVER_PASSWORD) with it.
const EnvServerURL = "HORIZON_OPENCODE_URL"

// EnvServerPassword is the variable that carries the server's password.
const EnvServerPassword = "OPENCODE_SERVER_PASSWORD"

// MCPServer is a local (stdio) MCP server for OpenCode to start. OpenCode
// starts it once per directory it serves, with that directory as working
// directory, and names its tools <Name>_<tool>.
type MCPServer struct {
	Name        string
	Command     []string
	Environment map[string]string
	// Timeout bounds one request to the server, a tool call included
	// (OpenCode's default is 5s, too short for a call that asks a model).
	Timeout time.Duration
}

// WriteMCPConfig writes <dir>/opencode.json, the OpenCode config of
// horizon's config directory (OPENCODE_CONFIG_DIR), registering servers;
// with none it writes a config that registers nothing, so a server
// registered before is gone. horizon owns the file. OpenCode reads it when
// it first serves a directory, so a change applies to new lanes.
//
// The file also turns OpenCode's snapshots off. OpenCode keeps a second git
// store of every directory it serves and writes the whole tree to it at each
// step, for its own undo. A lane is already a git worktree that horizon
// owns, diffed and committed by horizon, so the snapshots only cost: in an
// end-to-end test they were a fifth to a quarter of OpenCode's CPU.
func WriteMCPConfig(dir string, servers ...MCPServer) error {
	cfg := map[string]any{"$schema": "https://opencode.ai/config.json", "snapshot": false}
	if len(servers) > 0 {
		mcp := map[string]any{}
		for _, s := range servers {
			if s.Name == "" || len(s.Command) == 0 {
				return fmt.Errorf("write mcp config: server %q needs a name and a command", s.Name)
			}
			entry := map[string]any{"type": "local", "command": s.Command, "enabled": true}
			if len(s.Environment) > 0 {
				entry["environment"] = s.Environment
			}
			if s.Timeout > 0 {
				entry["timeout"] = s.Timeout.Milliseconds()
			}
			mcp[s.Name] = entry
		}
		cfg["mcp"] = mcp
	}
	b, err := json.MarshalIndent(cfg, "", "  ") // map keys sorted: the file is stable
	if err != nil {
		return fmt.Errorf("write mcp config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write mcp config: %w", err)
	}
	if err := writeIfChanged(filepath.Join(dir, "opencode.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("write mcp config: %w", err)
	}
	return nil
}

// MCPServers lists the names of the MCP servers <dir>/opencode.json
// registers (none when the file is missing).
func MCPServers(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "opencode.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mcp config: %w", err)
	}
	var cfg struct {
		MCP map[string]json.RawMessage `json:"mcp"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("read mcp config %s: %w", filepath.Join(dir, "opencode.json"), err)
	}
	names := make([]string, 0, len(cfg.MCP))
	for n := range cfg.MCP {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
