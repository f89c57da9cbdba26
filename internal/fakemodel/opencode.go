package fakemodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ProviderID is the OpenCode provider id WriteOpenCodeConfig configures, so
// models are named "fake/<model>".
const ProviderID = "fake"

// WriteOpenCodeConfig writes an OpenCode config file at path that makes the
// fake model at baseURL (Server.URL) a provider "fake" with the given models
// (default: DefaultModel). The first model becomes both "model" and
// "small_model", so title requests come here too. Point OpenCode at the file
// with the OPENCODE_CONFIG environment variable, or write it as the
// project's opencode.json.
func WriteOpenCodeConfig(path, baseURL string, models ...string) error {
	if len(models) == 0 {
		models = []string{DefaultModel}
	}
	type limit struct {
		Context int `json:"context"`
		Output  int `json:"output"`
	}
	type cost struct {
		Input  float64 `json:"input"`
		Output float64 `json:"output"`
	}
	type model struct {
		Name     string `json:"name"`
		ToolCall bool   `json:"tool_call"`
		Limit    limit  `json:"limit"`
		Cost     cost   `json:"cost"`
	}
	ms := make(map[string]model, len(models))
	for _, m := range models {
		ms[m] = model{Name: "Fake " + m, ToolCall: true, Limit: limit{Context: 128000, Output: 8192}, Cost: cost{Input: 1, Output: 2}}
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{
			ProviderID: map[string]any{
				"npm":  "@ai-sdk/openai-compatible",
				"name": "Fake",
				"options": map[string]any{
					"baseURL": baseURL,
					"apiKey":  "fake",
				},
				"models": ms,
			},
		},
		"model":       ProviderID + "/" + models[0],
		"small_model": ProviderID + "/" + models[0],
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("encode opencode config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write opencode config %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write opencode config %s: %w", path, err)
	}
	return nil
}

// OpenCodeEnv returns the environment variables (to append to os.Environ();
// later entries win in exec.Cmd.Env) that keep an OpenCode process offline
// and away from the machine's own configuration, data and caches: HOME and
// the XDG directories point into home, auto-update and the models.dev fetch
// are off. PWD is set to workdir (when not ""), because OpenCode takes its
// working directory from $PWD rather than from exec.Cmd.Dir.
func OpenCodeEnv(home, workdir string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
	}
	if workdir != "" {
		env = append(env, "PWD="+workdir)
	}
	return env
}

// SummaryMarker occurs in the request OpenCode 1.18.33 sends when it
// compacts a session (POST /session/{id}/summarize): its last user message
// holds the conversation so far in <conversation> tags and asks for "a new
// anchored summary" in a Markdown template. A script answers it with a
// rule whose When names this marker, listed before the rules of the
// conversation (whose texts the request quotes).
const SummaryMarker = "Create a new anchored summary from the conversation history"
