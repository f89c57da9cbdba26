package applier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/horizon/horizon/internal/tools"
)

// Kind names an applier: the provider part of a route.
type Kind string

// The appliers. OpenCode is every route that names neither CLI.
const (
	OpenCode Kind = "opencode"
	Claude   Kind = "claude-code"
	Codex    Kind = "codex"
)

// Kinds are the CLI appliers this package drives.
var Kinds = []Kind{Claude, Codex}

// Of is route's applier and the model the applier is given: "claude-code/
// claude-sonnet-4-5" is Claude Code with claude-sonnet-4-5; a route with
// another provider is OpenCode's, whole.
func Of(route string) (Kind, string) {
	for _, k := range Kinds {
		if m, ok := strings.CutPrefix(route, string(k)+"/"); ok && m != "" {
			return k, m
		}
	}
	return OpenCode, route
}

// binName is each CLI's executable, as npm installs it.
var binName = map[Kind]string{Claude: "claude", Codex: "codex"}

// Status is what horizon found of one applier on this machine.
type Status struct {
	Kind Kind `json:"applier"`
	// Bin is the executable found ("" when none is).
	Bin     string `json:"bin,omitempty"`
	Version string `json:"version,omitempty"`
	// Connected says the CLI is installed and can reach a model; Why says
	// how (logged in, a key, a configured provider) or why not.
	Connected bool   `json:"connected"`
	Why       string `json:"why"`
}

// Probe finds each applier and whether it can reach a model. bins holds
// configured paths by kind ("" or missing: $PATH, then node_modules/.bin
// like every tool). It runs `<cli> --version` (a few seconds at most) and
// reads, never writes, the CLIs' own configuration.
func Probe(ctx context.Context, bins map[Kind]string) []Status {
	out := make([]Status, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, probe(ctx, k, bins[k]))
	}
	return out
}

func probe(ctx context.Context, k Kind, configured string) Status {
	st := Status{Kind: k}
	bin, err := Find(k, configured)
	if err != nil {
		st.Why = fmt.Sprintf("not installed: %s is not on $PATH or in node_modules/.bin (`npm install -g %s`, or set agent.%s_bin)", binName[k], npmPackage[k], settingName(k))
		return st
	}
	st.Bin = bin
	st.Version, err = version(ctx, bin)
	if err != nil {
		st.Why = fmt.Sprintf("%s does not run: %v", bin, err)
		return st
	}
	switch k {
	case Claude:
		st.Connected, st.Why = claudeAccess()
	case Codex:
		st.Connected, st.Why = codexAccess()
	}
	return st
}

// npmPackage is the package each CLI comes in; horizon's tests pin these
// versions.
var npmPackage = map[Kind]string{Claude: "@anthropic-ai/claude-code", Codex: "@openai/codex"}

func settingName(k Kind) string {
	if k == Claude {
		return "claude"
	}
	return "codex"
}

// Find is the CLI of kind k: configured when set, else found like every
// tool horizon drives.
func Find(k Kind, configured string) (string, error) {
	return tools.Find(binName[k], configured, "agent."+settingName(k)+"_bin")
}

// versions caches each binary's version by path and modification time:
// every run's preflight lists the connected routes, and a CLI takes a
// second or more to say its version.
var (
	versionsMu sync.Mutex
	versions   = map[string]string{}
)

func version(ctx context.Context, bin string) (string, error) {
	key := bin
	if st, err := os.Stat(bin); err == nil {
		key = fmt.Sprintf("%s@%d", bin, st.ModTime().UnixNano())
	}
	versionsMu.Lock()
	v, ok := versions[key]
	versionsMu.Unlock()
	if ok {
		return v, nil
	}
	v, err := runVersion(ctx, bin)
	if err == nil {
		versionsMu.Lock()
		versions[key] = v
		versionsMu.Unlock()
	}
	return v, err
}

func runVersion(ctx context.Context, bin string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "--version")
	cmd.Stdin = nil
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", filepath.Base(bin), err)
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), nil
}

// claudeAccess says whether Claude Code can reach a model: an API key or
// token in the environment, a cloud provider switched on, or a login
// stored in its configuration directory.
func claudeAccess() (bool, string) {
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		if os.Getenv(v) != "" {
			return true, "key in $" + v
		}
	}
	for _, v := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"} {
		if os.Getenv(v) != "" {
			return true, "$" + v + " is set"
		}
	}
	dir := claudeConfigDir()
	if _, err := os.Stat(filepath.Join(dir, ".credentials.json")); err == nil {
		return true, "logged in (" + filepath.Join(dir, ".credentials.json") + ")"
	}
	return false, "not logged in: run `claude` once and log in, or set ANTHROPIC_API_KEY"
}

func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".claude")
}

func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// codexConfig is the part of Codex's config.toml that says which provider
// it uses and where the provider's key comes from.
type codexConfig struct {
	ModelProvider  string `toml:"model_provider"`
	ModelProviders map[string]struct {
		BaseURL string `toml:"base_url"`
		EnvKey  string `toml:"env_key"`
	} `toml:"model_providers"`
}

// codexAccess says whether Codex can reach a model: its home exists (Codex
// refuses to start otherwise), and it is logged in, has OPENAI_API_KEY, or
// its config.toml names a provider whose key variable is set (or that
// needs none, as a local endpoint may).
func codexAccess() (bool, string) {
	home := codexHome()
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		if os.Getenv("CODEX_HOME") != "" {
			return false, fmt.Sprintf("CODEX_HOME names %s, which is not a directory; Codex refuses to start", home)
		}
		if os.Getenv("OPENAI_API_KEY") != "" {
			return true, "key in $OPENAI_API_KEY"
		}
		return false, "not logged in: run `codex login`, or set OPENAI_API_KEY"
	}
	var cfg codexConfig
	if b, err := os.ReadFile(filepath.Join(home, "config.toml")); err == nil {
		if err := toml.Unmarshal(b, &cfg); err != nil {
			return false, fmt.Sprintf("%s does not parse: %v", filepath.Join(home, "config.toml"), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Sprintf("cannot read %s: %v", filepath.Join(home, "config.toml"), err)
	}
	if p, ok := cfg.ModelProviders[cfg.ModelProvider]; ok && cfg.ModelProvider != "" {
		switch {
		case p.EnvKey == "":
			return true, fmt.Sprintf("config.toml provider %q (%s) needs no key", cfg.ModelProvider, p.BaseURL)
		case os.Getenv(p.EnvKey) != "":
			return true, fmt.Sprintf("config.toml provider %q with its key in $%s", cfg.ModelProvider, p.EnvKey)
		default:
			return false, fmt.Sprintf("config.toml provider %q wants its key in $%s, which is not set", cfg.ModelProvider, p.EnvKey)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "auth.json")); err == nil {
		return true, "logged in (" + filepath.Join(home, "auth.json") + ")"
	}
	if os.Getenv("OPENAI_API_KEY") != "" {
		return true, "key in $OPENAI_API_KEY"
	}
	return false, "not logged in: run `codex login`, or set OPENAI_API_KEY"
}

// ConnectedRoutes are the routes among all (a leaderboard's) whose applier
// is connected.
func ConnectedRoutes(all []string, st []Status) []string {
	conn := map[Kind]bool{}
	for _, s := range st {
		conn[s.Kind] = s.Connected
	}
	var out []string
	for _, r := range all {
		if k, _ := Of(r); k != OpenCode && conn[k] {
			out = append(out, r)
		}
	}
	return out
}
