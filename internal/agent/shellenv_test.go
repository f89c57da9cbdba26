package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	require.NoError(t, writeShellEnvPlugin(dir))
	src, err := os.ReadFile(filepath.Join(dir, ShellEnvPlugin))
	require.NoError(t, err)
	for _, want := range []string{`/^.*_API_KEY$/i`, `/^AWS_.*$/i`, `/^GITHUB_TOKEN$/i`, `/^OPENCODE_SERVER_PASSWORD$/i`, `"shell.env"`, "= undefined"} {
		require.True(t, strings.Contains(string(src), want), "plugin lacks %s:\n%s", want, src)
	}
}
