package fakemodel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteCodexConfig writes a person's Codex config.toml into codexHome
// (created if missing) that makes the fake model at url (Server.URL) their
// provider, with its key in $CodexKeyEnv, no retries and no plugin sync:
// the setup horizon finds on a machine where Codex is configured for a
// company or local endpoint, here pointed at the scripted model.
func WriteCodexConfig(codexHome, url string) error {
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return fmt.Errorf("write codex config: %w", err)
	}
	toml := fmt.Sprintf(`model_provider = %q

[model_providers.%s]
name = %q
base_url = %q
wire_api = "responses"
env_key = %q
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false
`, ProviderID, ProviderID, ProviderID, strings.TrimSuffix(url, "/"), CodexKeyEnv)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o600); err != nil {
		return fmt.Errorf("write codex config: %w", err)
	}
	return nil
}
