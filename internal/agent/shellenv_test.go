package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/fakemodel"
)

// plantedKeys are vendor credentials in horizon's environment.
var plantedKeys = map[string]string{
	"OPENAI_API_KEY":     "sk-planted-openai",
	"ANTHROPIC_API_KEY":  "sk-planted-anthropic",
	"GEMINI_API_KEY":     "planted-gemini",
	"GOOGLE_API_KEY":     "planted-google",
	"OPENROUTER_API_KEY": "sk-planted-openrouter",
	"GROQ_API_KEY":       "gsk-planted-groq",
}

// The bash tool's commands see none of the vendor keys in OpenCode's
// environment, while OpenCode still authenticates to the provider with one
// of them ({env:OPENAI_API_KEY} in the provider's options).
func TestShellEnvHidesVendorKeys(t *testing.T) {
	h := newHarness(t, `{"rules": [{"name": "env", "when": ["TASK-ENV"], "replies": [
      {"tool_calls": [{"name": "bash", "args": {"command": "env; echo ENV-DONE"}}]},
      {"text": "`+"```"+`horizon-report\n{\"status\": \"satisfied\", \"summary\": \"printed env\"}\n`+"```"+`"}
    ]}]}`)
	useEnvKey(t, h.extra, "OPENAI_API_KEY")
	for k, v := range plantedKeys {
		h.env = append(h.env, k+"="+v)
	}
	h.env = append(h.env, "HARMLESS_SETTING=kept")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := h.start(ctx)
	_, err := s.RunSession(ctx, SessionRequest{Directory: gitRepo(t), Agent: AgentWorker, Model: "fake/fake-coder", Prompt: "TASK-ENV: print the environment."}, nil)
	require.NoError(t, err)

	var out string
	for _, r := range h.fake.Requests() {
		if r.Rule == "env" && r.Step == 1 {
			require.Len(t, r.ToolResults, 1)
			out = r.ToolResults[0]
		}
		if !r.Title {
			require.Equal(t, "Bearer "+plantedKeys["OPENAI_API_KEY"], r.Authorization, "OpenCode still authenticates with the key")
		}
	}
	require.Contains(t, out, "ENV-DONE", "the tool output reached the model")
	require.Contains(t, out, "HARMLESS_SETTING=kept", "other variables stay")
	for k, v := range plantedKeys {
		require.NotContains(t, out, k, "the worker's shell sees %s", k)
		require.NotContains(t, out, v)
	}
	require.NotContains(t, out, "OPENCODE_SERVER_PASSWORD")
}

// useEnvKey makes the fake provider of the OpenCode config at path take its
// API key from the environment variable name.
func useEnvKey(t *testing.T, path, name string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	prov := cfg["provider"].(map[string]any)[fakemodel.ProviderID].(map[string]any)
	prov["options"].(map[string]any)["apiKey"] = "{env:" + name + "}"
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestShellEnvPluginSource(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeShellEnvPlugin(dir, nil))
	src, err := os.ReadFile(filepath.Join(dir, ShellEnvPlugin))
	require.NoError(t, err)
	for _, want := range []string{`/^.*_API_KEY$/i`, `/^AWS_.*$/i`, `/^GITHUB_TOKEN$/i`, `/^OPENCODE_SERVER_PASSWORD$/i`, `"shell.env"`, "= undefined"} {
		require.True(t, strings.Contains(string(src), want), "plugin lacks %s:\n%s", want, src)
	}
}

// The plugin, run by node the way OpenCode loads it, hides exactly the
// variables gate.Secret calls secrets, by name and by value, and lets the
// agent.env_allow globs through: one rule for the gate and the agents.
func TestShellEnvPluginAgreesWithTheGate(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not on PATH; it comes with the npm that installs opencode")
		}
		t.Skip("node is not on PATH")
	}
	allow := []string{"MY_*", "KEEP_DATABASE_UR?"}
	vars := map[string]string{
		"OPENAI_API_KEY": "sk-1", "GH_PAT": "ghp_2", "SLACK_WEBHOOK_AUTH": "Bearer 3", "SENTRY_DSN": "https://k@sentry/4",
		"DATABASE_URL": "postgres://app:hunter2@db:5432/app", "REDIS_URL": "redis://:pw@cache:6379/0",
		"KEEP_DATABASE_URL": "postgres://app:pw@db/app", "MY_TOKEN": "allowed", "horizon_home": "/h",
		"GIT_REMOTE": "ssh://git@github.com/o/r.git", "SERVICE_URL": "https://example.com/a:b@c", "COMPAT": "x",
		"PGPASSWORD": "pw", "NOTE": "see https://u:p@host/ in the wiki", "PLAIN": "kept",
	}
	dir := t.TempDir()
	require.NoError(t, writeShellEnvPlugin(dir, allow))
	src, err := os.ReadFile(filepath.Join(dir, ShellEnvPlugin))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plugin.mjs"), src, 0o600))
	// A variable another plugin put in output.env is judged too.
	script := `import { HorizonShellEnv } from "./plugin.mjs";
const hooks = await HorizonShellEnv();
const output = { env: { FROM_OTHER_PLUGIN: "mysql://root:pw@db/x", OTHER_PLAIN: "y" } };
await hooks["shell.env"]({}, output);
console.log(JSON.stringify(Object.keys(output.env).filter((k) => output.env[k] === undefined).sort()));
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.mjs"), []byte(script), 0o600))
	cmd := exec.Command(node, "run.mjs")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var hidden []string
	require.NoError(t, json.Unmarshal(out, &hidden), "%s", out)

	vars["FROM_OTHER_PLUGIN"], vars["OTHER_PLAIN"] = "mysql://root:pw@db/x", "y"
	want := []string{}
	for k, v := range vars {
		allowed := false
		for _, g := range allow {
			if ok, _ := path.Match(g, k); ok {
				allowed = true
			}
		}
		if gate.Secret(k, v) && !allowed {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	require.Equal(t, want, hidden)
	require.Contains(t, hidden, "DATABASE_URL", "a URL with a password is hidden whatever its name")
	require.NotContains(t, hidden, "KEEP_DATABASE_URL", "agent.env_allow lets it through")
}
