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
// every variable the gate scrubs (gate.Secret: by name or by value) to undefined.
//
// Limits: this hides the keys from the environment of the commands, not
// from a determined process of the same user, which can still read
// /proc/<opencode pid>/environ or horizon's own; a real boundary needs
// another user or a sandbox. Processes OpenCode starts without asking the
// hook (LSP servers, formatters, MCP servers) keep its full environment.

import (
	"encoding/json"
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
// variable gate.Secret calls a secret (by name, case-insensitively, or by a
// value that is a URL with a password), except those matching an allow glob
// (agent.env_allow; case-sensitive, '*' and '?' wildcards, like the gate's).
func shellEnvPluginSource(allow []string) string {
	names := make([]string, 0, len(gate.ScrubPatterns))
	for _, p := range gate.ScrubPatterns {
		names = append(names, "  /^"+globRegexp(p)+"$/i,")
	}
	allowed := make([]string, 0, len(allow))
	for _, p := range allow {
		allowed = append(allowed, "  /^"+globRegexp(p)+"$/,")
	}
	url, _ := json.Marshal(gate.CredentialURLPattern)
	return `// Written by horizon on every start of its OpenCode server; edits are lost.
// Commands OpenCode runs for an agent (bash tool, PTY) get OpenCode's
// environment without the variables horizon's gate scrubs: vendor API keys,
// tokens, secrets, passwords, connection strings, URLs with a password,
// cloud credentials and horizon's own settings. A variable set to undefined
// here is left out of the command's environment.
const secret = [
` + strings.Join(names, "\n") + `
];
const allow = [
` + strings.Join(allowed, "\n") + `
];
const credentialURL = new RegExp(` + string(url) + `, "i");
const isSecret = (name, value) =>
  !allow.some((re) => re.test(name)) &&
  (secret.some((re) => re.test(name)) || (typeof value === "string" && credentialURL.test(value)));
export const HorizonShellEnv = async () => ({
  "shell.env": async (_input, output) => {
    output.env = output.env ?? {};
    for (const name of Object.keys(process.env)) {
      if (isSecret(name, process.env[name])) output.env[name] = undefined;
    }
    for (const name of Object.keys(output.env)) {
      if (isSecret(name, output.env[name])) output.env[name] = undefined;
    }
  },
});
`
}

// globRegexp turns a name glob into a JavaScript regular expression body:
// '*' is any run, '?' one character, a [...] class is kept, the rest is
// literal.
func globRegexp(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			if j := strings.IndexByte(glob[i:], ']'); j > 1 {
				b.WriteString(glob[i : i+j+1])
				i += j
				continue
			}
			b.WriteString(`\[`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// writeShellEnvPlugin writes the plugin into OpenCode config dir dir;
// allow names the variables agents may see despite the rule.
func writeShellEnvPlugin(dir string, allow []string) error {
	p := filepath.Join(dir, ShellEnvPlugin)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write shell environment plugin: %w", err)
	}
	if err := os.WriteFile(p, []byte(shellEnvPluginSource(allow)), 0o644); err != nil {
		return fmt.Errorf("write shell environment plugin %s: %w", p, err)
	}
	return nil
}
