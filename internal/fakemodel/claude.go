package fakemodel

import (
	"path/filepath"
	"strings"
)

// ClaudeHelperMarker is the Aux of Claude Code's tool-free helper
// requests: side requests that offer the model no tools at all (the
// session title, tool-use summaries, the model check "Hi" with max_tokens
// 1), as opposed to the conversation and its sub-agents, which always
// offer tools. Such a request quotes or summarises the conversation, so it
// would match the conversation's rules; instead it skips every rule unless
// one of the rule's When strings contains this marker (a helper request's
// text is taken to contain it), and otherwise gets the fallback without
// using up any rule's Times. Claude Code 2.1.328 sent none in `claude -p`
// runs; the binary has them behind feature flags.
const ClaudeHelperMarker = "[claude-code helper]"

// claudeAux recognises Claude Code's auxiliary requests.
func claudeAux(req anthropicRequest) string {
	if len(req.Tools) == 0 {
		return ClaudeHelperMarker
	}
	return ""
}

// ClaudeAPIKey is the API key ClaudeEnv gives Claude Code; the server
// records it as Request.APIKey.
const ClaudeAPIKey = "test"

// ClaudeEnv returns the environment variables (to append to os.Environ();
// later entries win in exec.Cmd.Env) that point Claude Code at the fake
// model at url (Server.URL; the /v1 suffix is dropped, Claude Code adds
// it) and keep it offline and away from the machine's own configuration:
// HOME and CLAUDE_CONFIG_DIR in home, no auto-update, telemetry, error
// reporting or other non-essential traffic (with these, the model server is
// the only address it connects to), and no retries of failed API requests
// (the default is 10, with backoff growing to half a minute; append
// CLAUDE_CODE_MAX_RETRIES=n to change that). Claude Code works in the
// process's current directory (exec.Cmd.Dir); it does not read $PWD.
func ClaudeEnv(home, url string) []string {
	return []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/v1"),
		"ANTHROPIC_API_KEY=" + ClaudeAPIKey,
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
}

// ClaudeArgs returns the arguments of a headless `claude` run that prints
// its events as JSON lines, before the prompt: -p --output-format
// stream-json --verbose --model model. Add the permission mode (e.g.
// --permission-mode acceptEdits), --resume <session id> or --session-id
// <uuid>, then the prompt.
func ClaudeArgs(model string) []string {
	return []string{"-p", "--output-format", "stream-json", "--verbose", "--model", model}
}
