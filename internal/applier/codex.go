package applier

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/agent"
)

// codex drives Codex CLI with `codex exec --json`.
type codex struct {
	envAllow []string
}

func (c codex) readOnly(agentName string) bool { return agent.ReadOnly(agentName) }

// brief puts the role's prompt before the task: `codex exec` takes no
// system prompt per invocation, and a resumed thread already holds it.
func (c codex) brief(inv invocation, prompt string) string {
	p, ok := agent.Prompt(inv.Agent)
	if !ok {
		return prompt
	}
	return p + "\n\n---\n\n" + prompt
}

// The agent's shell gets Codex's environment without what the gate scrubs
// (gate.ScrubPatterns as Codex's shell_environment_policy excludes, which
// match ignoring case like the gate's); Codex itself keeps its
// environment, since its provider's key is read from there. Values that
// are URLs with a password are the gate's too, but Codex matches names
// only: those stay visible (README).

func (c codex) command(inv invocation) ([]string, []string, error) {
	sandbox := "workspace-write"
	if inv.ReadOnly {
		sandbox = "read-only"
	}
	excl := make([]string, len(gate.ScrubPatterns))
	for i, e := range gate.ScrubPatterns {
		excl[i] = strconv.Quote(e)
	}
	args := []string{"exec"}
	if inv.Resume {
		// `exec resume` takes the options before the thread's ID.
		args = append(args, "resume")
	}
	args = append(args, "--json", "--skip-git-repo-check", "-m", inv.Model,
		"-c", "sandbox_mode="+strconv.Quote(sandbox),
		"-c", `approval_policy="never"`,
		"-c", "analytics.enabled=false",
		"-c", `shell_environment_policy.inherit="all"`,
		"-c", "shell_environment_policy.exclude=["+strings.Join(excl, ",")+"]",
	)
	if len(c.envAllow) > 0 {
		// Allowed variables go back in by name, as the gate's do.
		var set []string
		for _, name := range c.envAllow {
			if v, ok := os.LookupEnv(name); ok && !strings.Contains(name, "*") {
				set = append(set, strconv.Quote(name)+"="+strconv.Quote(v))
			}
		}
		if len(set) > 0 {
			args = append(args, "-c", "shell_environment_policy.set={"+strings.Join(set, ",")+"}")
		}
	}
	if inv.Resume {
		args = append(args, inv.Session)
	} else {
		args = append(args, "-C", inv.Dir)
	}
	args = append(args, "-") // the prompt comes on stdin
	return args, os.Environ(), nil
}

// codexLine is the part of an `exec --json` line horizon reads.
type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Item     struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Command string `json:"command"`
		Tool    string `json:"tool"`
	} `json:"item"`
	Usage struct {
		Input     int64 `json:"input_tokens"`
		Cached    int64 `json:"cached_input_tokens"`
		Output    int64 `json:"output_tokens"`
		Reasoning int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// retryCount reads "… 2/5" from Codex's reconnect message.
var retryCount = regexp.MustCompile(`(\d+)/\d+`)

func (c codex) event(line []byte) event {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return event{}
	}
	ev := event{Session: l.ThreadID}
	switch l.Type {
	case "turn.started":
		ev.Phase = "running"
	case "item.started", "item.updated":
		switch l.Item.Type {
		case "command_execution":
			ev.Phase, ev.Tool = "tool", "shell"
		case "file_change":
			ev.Phase, ev.Tool = "tool", "apply_patch"
		case "mcp_tool_call":
			ev.Phase, ev.Tool = "tool", l.Item.Tool
		default:
			ev.Phase = "running"
		}
	case "item.completed":
		ev.Phase = "running"
		if l.Item.Type == "agent_message" {
			ev.Text = l.Item.Text
		}
	case "error":
		// Codex reconnecting to its provider: the session waits.
		n := 1
		if m := retryCount.FindStringSubmatch(l.Message); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		ev.Phase, ev.Retry = "retry", &agent.Retry{Attempt: max(n, 1), Message: l.Message}
	case "turn.completed":
		ev.Phase, ev.Final, ev.Priced = "done", true, true
		ev.Usage = agent.Usage{Input: l.Usage.Input, Output: l.Usage.Output, Reasoning: l.Usage.Reasoning, CacheRead: l.Usage.Cached}
	case "turn.failed":
		ev.Phase, ev.Final = "done", true
		msg := firstNonEmpty(l.Error.Message, l.Message, "the turn failed")
		se := &agent.SessionError{Name: "CodexError", Message: msg}
		if m := statusIn.FindStringSubmatch(msg); m != nil {
			se.StatusCode, _ = strconv.Atoi(m[1])
		}
		ev.Err = se
	}
	return ev
}

// nativeCodex is the platform binary behind npm's codex.js launcher, when
// bin is that launcher: run directly, it is the process group's leader
// and dies with the daemon, where a node launcher killed hard would leave
// it running.
func nativeCodex(bin string) string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil || !strings.HasSuffix(real, ".js") {
		return bin
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	goarch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	triple := arch + "-unknown-linux-musl"
	if runtime.GOOS == "darwin" {
		triple = arch + "-apple-darwin"
	}
	pkgRoot := filepath.Dir(filepath.Dir(real)) // node_modules/@openai/codex
	for _, cand := range []string{
		filepath.Join(filepath.Dir(pkgRoot), "codex-"+runtime.GOOS+"-"+goarch, "vendor", triple, "bin", "codex"),
		filepath.Join(pkgRoot, "node_modules", "@openai", "codex-"+runtime.GOOS+"-"+goarch, "vendor", triple, "bin", "codex"),
		filepath.Join(pkgRoot, "vendor", triple, "codex", "codex"),
	} {
		if st, err := os.Stat(cand); err == nil && st.Mode()&0o111 != 0 {
			return cand
		}
	}
	return bin
}
