package fakemodel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CodexKeyEnv is the environment variable CodexArgs names as the provider's
// env_key; CodexEnv sets it to CodexAPIKey, which Codex sends as
// "Authorization: Bearer <key>" (Request.Authorization).
const (
	CodexKeyEnv = "FAKE_KEY"
	CodexAPIKey = "test"
)

// CodexEnv returns the environment variables (to append to os.Environ();
// later entries win in exec.Cmd.Env) that keep a Codex CLI process away
// from the machine's own configuration and sessions: HOME is home and
// CODEX_HOME is home/.codex, which CodexEnv creates because Codex refuses
// a CODEX_HOME that does not exist. It also sets CodexKeyEnv. Codex works
// in the process's current directory (exec.Cmd.Dir, or its --cd flag); it
// does not read $PWD.
func CodexEnv(home string) ([]string, error) {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return nil, fmt.Errorf("create CODEX_HOME %s: %w", codexHome, err)
	}
	return []string{
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		CodexKeyEnv + "=" + CodexAPIKey,
	}, nil
}

// CodexArgs returns the options, valid both after `codex exec` and after
// `codex exec resume`, that make the fake model at url (Server.URL, ending
// in /v1) Codex's provider ProviderID over the Responses API, with model,
// and keep Codex offline: JSON events on stdout, no git repository check,
// no retries of failed requests (the default retries a 500 thirty times:
// 4 request retries times 5 stream retries), no plugin marketplace sync
// (`git ls-remote https://github.com/openai/plugins.git`) and no analytics
// (ab.chatgpt.com). Add the sandbox (-c sandbox_mode="workspace-write"
// works for both commands; only `codex exec` has --sandbox), then the
// prompt, or for resume the thread id and the prompt.
func CodexArgs(url, model string) []string {
	url = strings.TrimSuffix(url, "/")
	provider := fmt.Sprintf(`model_providers.%s={name=%q,base_url=%q,wire_api="responses",env_key=%q,request_max_retries=0,stream_max_retries=0}`,
		ProviderID, ProviderID, url, CodexKeyEnv)
	return []string{
		"--json", "--skip-git-repo-check",
		"--disable", "plugins",
		"-c", "analytics.enabled=false",
		"-c", provider,
		"-c", "model_provider=" + ProviderID,
		"-m", model,
	}
}
