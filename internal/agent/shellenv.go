package agent

// Vendor credentials stay out of the agent's shell. OpenCode needs the
// operator's provider keys (it reads them from its environment, and config
// files may name them as {env:VAR}), but every command the bash tool runs
// for an agent inherits OpenCode's environment, so the keys would be one
// `env` away from a worker, and from any log, transcript or test output
// that prints it. OpenCode 1.18.33 builds a command's environment as
// {...process.env, ...hooked}, where hooked is what the plugins' "shell.env"
// hooks put in output.env (the bash tool and PTYs both ask them), and a
// variable set to undefined is left out of the child's environment. So
// horizon writes a plugin into its OpenCode config dir whose hook sets
// every variable the gate scrubs (gate.ScrubPatterns) to undefined.
//
// Limits: this hides the keys from the environment of the commands, not
// from a determined process of the same user, which can still read
// /proc/<opencode pid>/environ or horizon's own; a real boundary needs
// another user or a sandbox. Processes OpenCode starts without asking the
// hook (LSP servers, formatters, MCP servers) keep its full environment.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/horizon/horizon/gate"
)

// ShellEnvPlugin is the plugin file, relative to the OpenCode config dir.
const ShellEnvPlugin = "plugin/horizon-shell-env.js"

// shellEnvPluginSource is the plugin: one "shell.env" hook that drops every
// variable matching gate.ScrubPatterns (case-insensitively, like the gate).
func shellEnvPluginSource() string {
	res := make([]string, 0, len(gate.ScrubPatterns))
	for _, p := range gate.ScrubPatterns {
		re := regexp.QuoteMeta(p)
		re = strings.ReplaceAll(re, `\*`, ".*")
		re = strings.ReplaceAll(re, `\?`, ".")
		res = append(res, "  /^"+re+"$/i,")
	}
	return `// Written by horizon on every start of its OpenCode server; edits are lost.
// Commands OpenCode runs for an agent (bash tool, PTY) get OpenCode's
// environment without the variables horizon's gate scrubs: vendor API keys,
// tokens, secrets, passwords, cloud credentials and horizon's own settings.
// A variable set to undefined here is left out of the command's environment.
const secret = [
` + strings.Join(res, "\n") + `
];
const isSecret = (name) => secret.some((re) => re.test(name));

export const HorizonShellEnv = async () => ({
  "shell.env": async (_input, output) => {
    output.env = output.env ?? {};
    for (const name of Object.keys(process.env)) {
      if (isSecret(name)) output.env[name] = undefined;
    }
    for (const name of Object.keys(output.env)) {
      if (isSecret(name)) output.env[name] = undefined;
    }
  },
});
`
}

// writeShellEnvPlugin writes the plugin into OpenCode config dir dir.
func writeShellEnvPlugin(dir string) error {
	p := filepath.Join(dir, ShellEnvPlugin)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write shell environment plugin: %w", err)
	}
	if err := os.WriteFile(p, []byte(shellEnvPluginSource()), 0o644); err != nil {
		return fmt.Errorf("write shell environment plugin %s: %w", p, err)
	}
	return nil
}
