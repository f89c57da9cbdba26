package applier

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

// claude drives Claude Code in print mode with its stream-json output.
type claude struct {
	stateDir string
	envAllow []string
}

// claudeWriteTools are the tools a read-only role goes without.
var claudeWriteTools = []string{"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}

// claudeNever are tools no horizon role uses unattended: the network, and
// the agent's own background and scheduling machinery.
var claudeNever = []string{"Agent", "Task", "WebFetch", "WebSearch", "CronCreate", "CronDelete", "ScheduleWakeup", "EnterWorktree", "ExitWorktree", "Workflow", "Monitor", "SendMessage"}

func (c claude) readOnly(agentName string) bool { return agent.ReadOnly(agentName) }

// brief is the prompt as given: the role's prompt goes in the system
// prompt (--append-system-prompt).
func (c claude) brief(_ invocation, prompt string) string { return prompt }

func (c claude) command(inv invocation) ([]string, []string, error) {
	settings, env, err := c.settings()
	if err != nil {
		return nil, nil, err
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", inv.Model, "--settings", settings}
	if inv.Resume {
		args = append(args, "--resume", inv.Session)
	} else {
		args = append(args, "--session-id", inv.Session)
	}
	if p, ok := agent.Prompt(inv.Agent); ok {
		args = append(args, "--append-system-prompt", p)
	}
	deny := claudeNever
	if inv.ReadOnly {
		deny = append(append([]string(nil), claudeWriteTools...), claudeNever...)
		args = append(args, "--permission-mode", "default")
	} else {
		// Edits are the worker's job; its shell is allowed by name, since
		// nobody is there to grant it.
		args = append(args, "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Read,Edit,Write,MultiEdit,Glob,Grep,TodoWrite")
	}
	args = append(args, "--disallowedTools", strings.Join(deny, ","))
	return args, env, nil
}

// settings writes the settings file horizon hands Claude Code and returns
// its path and the CLI's environment: the person's, without variables that
// look secret, so the agent's shell does not see them. Claude Code's own
// key, when it comes from the environment, reaches it through an
// apiKeyHelper that reads a file only this user can read.
func (c claude) settings() (string, []string, error) {
	dir := filepath.Join(c.stateDir, "claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("claude settings: %w", err)
	}
	s := map[string]any{}
	keyVar := ""
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		if os.Getenv(v) != "" {
			keyVar = v
			break
		}
	}
	if keyVar != "" {
		keyFile := filepath.Join(dir, "key")
		if err := writePrivate(keyFile, os.Getenv(keyVar)); err != nil {
			return "", nil, fmt.Errorf("claude key helper: %w", err)
		}
		s["apiKeyHelper"] = "cat " + shellQuote(keyFile)
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	path := filepath.Join(dir, "settings.json")
	if err := writePrivate(path, string(b)); err != nil {
		return "", nil, fmt.Errorf("claude settings: %w", err)
	}
	env := claudeEnv(os.Environ(), c.envAllow)
	env = append(env, "DISABLE_AUTOUPDATER=1")
	return path, env, nil
}

// writePrivate writes a 0600 file, replacing it whole.
func writePrivate(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// claudeEnv is the environment Claude Code runs in: the person's,
// without what the gate scrubs (gate.Secret), so the agent's shell does not
// see it. What Claude Code itself needs back: its endpoint and model
// settings, and a cloud provider's credentials when one is switched on
// (the shell then sees those; say so in the README).
func claudeEnv(env, allow []string) []string {
	out := gate.ScrubEnv(env, allow)
	cloud := os.Getenv("CLAUDE_CODE_USE_BEDROCK") != "" || os.Getenv("CLAUDE_CODE_USE_VERTEX") != ""
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "ANTHROPIC_API_KEY" || name == "ANTHROPIC_AUTH_TOKEN":
		case strings.HasPrefix(name, "ANTHROPIC_") && !strings.Contains(name, "KEY") && !strings.Contains(name, "TOKEN"):
			out = append(out, kv)
		case cloud && (strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "GOOGLE_") || strings.HasPrefix(name, "CLOUD_ML_")):
			out = append(out, kv)
		}
	}
	return out
}

// claudeLine is the part of a stream-json line horizon reads.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   struct {
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
	IsAPIError bool    `json:"is_api_error_message"`
	Result     string  `json:"result"`
	IsError    bool    `json:"is_error"`
	APIError   string  `json:"api_error"`
	APIType    string  `json:"api_error_type"`
	APIStatus  *int    `json:"api_error_status"`
	TotalCost  float64 `json:"total_cost_usd"`
	Usage      struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Denials []struct {
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
	// api_retry system events
	Attempt    int    `json:"attempt"`
	RetryError string `json:"error"`
	Status     *int   `json:"error_status"`
}

// statusIn finds an HTTP status in an error text ("API Error: 401 …").
var statusIn = regexp.MustCompile(`\b([45]\d\d)\b`)

func (c claude) event(line []byte) event {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return event{}
	}
	ev := event{Session: l.SessionID}
	switch l.Type {
	case "system":
		if strings.Contains(l.Subtype, "retry") {
			msg := l.RetryError
			if l.Status != nil {
				msg = fmt.Sprintf("HTTP %d %s", *l.Status, msg)
			}
			ev.Retry = &agent.Retry{Attempt: max(l.Attempt, 1), Message: strings.TrimSpace(msg)}
			ev.Phase = "retry"
		}
	case "assistant":
		ev.Phase = "running"
		if l.IsAPIError {
			return ev
		}
		var text []string
		for _, b := range l.Message.Content {
			switch b.Type {
			case "text":
				text = append(text, b.Text)
			case "tool_use":
				ev.Phase, ev.Tool = "tool", b.Name
			}
		}
		ev.Text = strings.Join(text, "")
	case "user":
		ev.Phase = "running"
	case "result":
		ev.Phase, ev.Final = "done", true
		ev.Usage = agent.Usage{Input: l.Usage.Input + l.Usage.CacheRead + l.Usage.CacheWrite, Output: l.Usage.Output,
			CacheRead: l.Usage.CacheRead, CacheWrite: l.Usage.CacheWrite, Cost: l.TotalCost}
		for _, d := range l.Denials {
			ev.Asked = append(ev.Asked, horizon.Ask{Kind: horizon.AskPermission, Text: clip(d.Tool + ": " + string(d.Input))})
		}
		if !l.IsError {
			ev.Text = l.Result
			return ev
		}
		se := &agent.SessionError{SessionID: l.SessionID, Name: firstNonEmpty(l.APIType, l.APIError, l.Subtype, "error"), Message: l.Result}
		if l.APIStatus != nil {
			se.StatusCode = *l.APIStatus
		} else if m := statusIn.FindStringSubmatch(l.Result); m != nil && strings.Contains(l.Result, "API Error") {
			se.StatusCode, _ = strconv.Atoi(m[1])
		}
		ev.Err = se
	}
	return ev
}

func clip(s string) string {
	if len(s) > horizon.MaxAskText {
		return s[:horizon.MaxAskText]
	}
	return s
}
