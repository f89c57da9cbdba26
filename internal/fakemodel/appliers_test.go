package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/tools"
)

// Integration tests that drive the real Claude Code and Codex CLIs against
// the server, one wire protocol each. They pin down what doc.go says about
// the two CLIs.

// findCLI looks for an agent CLI: $<setting>, then PATH, then
// node_modules/.bin beside the test binary or in the module root. Without
// it the test is skipped, except in CI (CI=true), where it fails.
func findCLI(t *testing.T, name, setting string) string {
	t.Helper()
	p, err := tools.Find(name, os.Getenv(setting), setting)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v", err)
	}
	t.Skipf("%v", err)
	return ""
}

// agentEnv is the test process's environment without the variables that
// could point an agent at a real provider or the machine's configuration.
func agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "ANTHROPIC_"), strings.HasPrefix(name, "CLAUDE_"),
			strings.HasPrefix(name, "CODEX_"), strings.HasPrefix(name, "OPENAI_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// jsonLines is one run's stdout, one JSON object a line.
type jsonLines []map[string]any

func (l jsonLines) ofType(typ string) jsonLines {
	var out jsonLines
	for _, e := range l {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

// run runs an agent CLI in dir and reads its JSON lines; it returns the
// exit error rather than failing, for the error tests.
func run(t *testing.T, dir string, env []string, bin string, args ...string) (jsonLines, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s timed out\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), stdout.String(), stderr.String())
	var lines jsonLines
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "not a JSON line: %s\nstderr:\n%s", sc.Text(), stderr.String())
		lines = append(lines, e)
	}
	require.NoError(t, sc.Err())
	return lines, stderr.String(), err
}

// conversationSteps are the steps of the requests a rule served.
func conversationSteps(reqs []Request, rule string) []int {
	var steps []int
	for _, r := range reqs {
		if r.Rule == rule {
			steps = append(steps, r.Step)
		}
	}
	return steps
}

func requestOf(t *testing.T, reqs []Request, rule string, step int) Request {
	t.Helper()
	for _, r := range reqs {
		if r.Rule == rule && r.Step == step {
			return r
		}
	}
	t.Fatalf("no request of rule %q at step %d in %+v", rule, step, reqs)
	return Request{}
}

const claudeModel = "claude-sonnet-4-5"

type claudeRun struct {
	t    *testing.T
	bin  string
	srv  *Server
	repo string
	env  []string
}

func newClaudeRun(t *testing.T, srv *Server) *claudeRun {
	t.Helper()
	bin := findCLI(t, "claude", "HORIZON_CLAUDE_BIN")
	return &claudeRun{t: t, bin: bin, srv: srv, repo: gitRepo(t), env: agentEnv(ClaudeEnv(t.TempDir(), srv.URL())...)}
}

func (c *claudeRun) run(args ...string) (jsonLines, error) {
	c.t.Helper()
	lines, stderr, err := run(c.t, c.repo, c.env, c.bin, append(ClaudeArgs(claudeModel), args...)...)
	if err != nil {
		c.t.Logf("claude: %v\nstderr:\n%s", err, stderr)
	}
	return lines, err
}

// claudeResult is the last line of a claude -p run, and the session id
// of its system/init line.
func claudeResult(t *testing.T, lines jsonLines) (result map[string]any, session string) {
	t.Helper()
	require.NotEmpty(t, lines)
	init := lines[0]
	require.Equal(t, "system", init["type"])
	require.Equal(t, "init", init["subtype"])
	result = lines[len(lines)-1]
	require.Equal(t, "result", result["type"], "the last line is the result")
	require.Equal(t, init["session_id"], result["session_id"])
	return result, init["session_id"].(string)
}

// TestClaudeCodeRun drives the real Claude Code through one Write and a
// final report, then resumes the session with a second prompt.
func TestClaudeCodeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real claude binary")
	}
	srv := New(&Script{Rules: []Rule{
		{
			Name: "resumed", When: []string{"Create hello.txt", "Now read it back"},
			Replies: []Reply{
				{ToolCalls: []ToolCall{{Name: "Bash", Args: map[string]any{"command": "cat hello.txt", "description": "Show hello.txt"}}}},
				{Text: "It says hello."},
			},
		},
		{
			Name: "write-hello", When: []string{"Create hello.txt"}, Times: 1,
			Replies: []Reply{
				{ToolCalls: []ToolCall{{Name: "Write", Args: map[string]any{"file_path": "{{workdir}}/hello.txt", "content": "hello from the fake model\n"}}}},
				{Text: report},
			},
		},
	}})
	start(t, srv)
	c := newClaudeRun(t, srv)

	lines, err := c.run("--permission-mode", "acceptEdits", "Create hello.txt with a greeting")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(c.repo, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from the fake model\n", string(data))
	result, session := claudeResult(t, lines)
	require.Equal(t, false, result["is_error"])
	require.Equal(t, "success", result["subtype"])
	require.Equal(t, report, result["result"])
	require.Contains(t, result, "total_cost_usd")
	require.Contains(t, result, "usage")
	require.Contains(t, result, "modelUsage")
	require.Empty(t, result["permission_denials"])
	// The tool call and its result are printed as assistant and user lines.
	var toolUse, toolResult map[string]any
	for _, e := range lines {
		msg, _ := e["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, b := range content {
			switch b, _ := b.(map[string]any); b["type"] {
			case "tool_use":
				toolUse = b
			case "tool_result":
				toolResult = b
			}
		}
	}
	require.Equal(t, "Write", toolUse["name"])
	require.Equal(t, toolUse["id"], toolResult["tool_use_id"])

	reqs := srv.Requests()
	require.Equal(t, []int{0, 1}, conversationSteps(reqs, "write-hello"))
	for _, r := range reqs {
		require.Equal(t, ProtocolAnthropic, r.Protocol)
		require.Empty(t, r.Aux, "no helper requests: %+v", r)
		require.Equal(t, session, r.Session, "X-Claude-Code-Session-Id")
		require.Equal(t, ClaudeAPIKey, r.APIKey)
		require.Equal(t, claudeModel, r.Model)
		require.True(t, r.Stream)
		require.Equal(t, c.repo, r.Workdir)
		require.Equal(t, "Create hello.txt with a greeting", r.LastUser, "LastUser leaves out the system reminders")
		require.Subset(t, r.Tools, []string{"Bash", "Edit", "Read", "Write"})
	}
	step1 := requestOf(t, reqs, "write-hello", 1)
	require.Len(t, step1.ToolResults, 1)
	require.Contains(t, step1.ToolResults[0], "File created successfully at: "+filepath.Join(c.repo, "hello.txt"))

	// Resuming sends the whole conversation again, the new prompt last,
	// under the same session id.
	lines, err = c.run("--permission-mode", "acceptEdits", "--resume", session, "Now read it back")
	require.NoError(t, err)
	result, resumed := claudeResult(t, lines)
	require.Equal(t, session, resumed)
	require.Equal(t, "It says hello.", result["result"])
	reqs = srv.Requests()
	require.Equal(t, []int{0, 1}, conversationSteps(reqs, "resumed"))
	r := requestOf(t, reqs, "resumed", 1)
	require.Equal(t, session, r.Session)
	require.Equal(t, "Now read it back", r.LastUser)
	require.Equal(t, []string{"hello from the fake model"}, firstLines(r.ToolResults))
}

// firstLines is the first line of each text: Claude Code appends a
// <system-reminder> to tool results.
func firstLines(texts []string) []string {
	var out []string
	for _, s := range texts {
		line, _, _ := strings.Cut(s, "\n")
		out = append(out, line)
	}
	return out
}

// TestClaudeCodeAPIErrors shows what Claude Code prints when the model
// fails: the result line has is_error, api_error_status and the message.
func TestClaudeCodeAPIErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real claude binary")
	}
	srv := New(nil)
	start(t, srv)
	c := newClaudeRun(t, srv)
	tests := []struct {
		status    int
		msg       string
		errorType string // result's api_error_type
		error     string // the assistant line's error
		text      string // in the result
	}{
		{500, "the fake model is down", "api_error", "server_error", "API Error: 500 the fake model is down"},
		{401, "key revoked", "authentication_error", "authentication_failed", "Failed to authenticate. API Error: 401 key revoked"},
		// Anthropic's own message for a bad key gets Claude Code's own text.
		{401, "invalid x-api-key", "authentication_error", "authentication_failed", "Invalid API key · Fix external API key"},
		{429, "slow down", "rate_limit_error", "rate_limit", "API Error: Request rejected (429) · slow down"},
	}
	for _, tt := range tests {
		srv.Fail(tt.status, tt.msg)
		before := len(srv.Requests())
		lines, err := c.run("hello")
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "claude exits non-zero on an API error: %v", err)
		require.Equal(t, 1, exit.ExitCode())
		result, _ := claudeResult(t, lines)
		require.Equal(t, true, result["is_error"])
		require.Equal(t, float64(tt.status), result["api_error_status"])
		require.Equal(t, tt.errorType, result["api_error_type"])
		require.Equal(t, "api_error", result["terminal_reason"])
		require.Contains(t, result["result"], tt.text)
		assistant := lines.ofType("assistant")
		require.Len(t, assistant, 1)
		require.Equal(t, tt.error, assistant[0]["error"])
		require.Equal(t, true, assistant[0]["is_api_error_message"])
		require.Len(t, srv.Requests(), before+1, "CLAUDE_CODE_MAX_RETRIES=0: no retry")
	}
	srv.Recover()
}

// The Codex model: one whose metadata the CLI knows, so it offers
// apply_patch (with an unknown model it offers no apply_patch and prints
// an error item about the missing metadata).
const codexModel = "gpt-5.5"

type codexRun struct {
	t    *testing.T
	bin  string
	srv  *Server
	repo string
	env  []string
}

func newCodexRun(t *testing.T, srv *Server) *codexRun {
	t.Helper()
	bin := findCLI(t, "codex", "HORIZON_CODEX_BIN")
	env, err := CodexEnv(t.TempDir())
	require.NoError(t, err)
	return &codexRun{t: t, bin: bin, srv: srv, repo: gitRepo(t), env: agentEnv(env...)}
}

// run runs `codex exec <options> <args...>`, or with resume first
// `codex exec resume <options> <args...>`.
func (c *codexRun) run(resume bool, args ...string) (jsonLines, error) {
	c.t.Helper()
	argv := []string{"exec"}
	if resume {
		argv = append(argv, "resume")
	}
	argv = append(append(argv, CodexArgs(c.srv.URL(), codexModel)...), args...)
	lines, stderr, err := run(c.t, c.repo, c.env, c.bin, argv...)
	if err != nil {
		c.t.Logf("codex: %v\nstderr:\n%s", err, stderr)
	}
	return lines, err
}

func codexItems(lines jsonLines, event, itemType string) []map[string]any {
	var items []map[string]any
	for _, e := range lines.ofType(event) {
		if it, _ := e["item"].(map[string]any); it["type"] == itemType {
			items = append(items, it)
		}
	}
	return items
}

// TestCodexExec drives the real Codex CLI through an apply_patch (a custom
// tool) and a shell command, then resumes the thread.
func TestCodexExec(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real codex binary")
	}
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+hello from the fake model\n*** End Patch\n"
	srv := New(&Script{Rules: []Rule{
		{
			Name: "resumed", When: []string{"Create hello.txt", "Now read it back"},
			Replies: []Reply{
				{ToolCalls: []ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "cat hello.txt"}}}},
				{Text: "It says hello."},
			},
		},
		{
			Name: "write-hello", When: []string{"Create hello.txt"}, Times: 1,
			Replies: []Reply{
				{ToolCalls: []ToolCall{{Name: "apply_patch", Args: map[string]any{"input": patch}}}},
				{ToolCalls: []ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "printf 'from the shell\\n' > shell.txt", "workdir": "{{workdir}}"}}}},
				{Text: report},
			},
		},
	}})
	start(t, srv)
	c := newCodexRun(t, srv)

	lines, err := c.run(false, "--sandbox", "workspace-write", "Create hello.txt with a greeting")
	require.NoError(t, err)
	for f, want := range map[string]string{"hello.txt": "hello from the fake model\n", "shell.txt": "from the shell\n"} {
		data, err := os.ReadFile(filepath.Join(c.repo, f))
		require.NoError(t, err)
		require.Equal(t, want, string(data), f)
	}
	started := lines.ofType("thread.started")
	require.Len(t, started, 1)
	thread, _ := started[0]["thread_id"].(string)
	require.NotEmpty(t, thread)
	require.Len(t, lines.ofType("turn.started"), 1)
	completed := lines.ofType("turn.completed")
	require.Len(t, completed, 1)
	require.Contains(t, completed[0]["usage"], "input_tokens")
	require.Contains(t, completed[0]["usage"], "cached_input_tokens")
	require.Contains(t, completed[0]["usage"], "output_tokens")
	changes := codexItems(lines, "item.completed", "file_change")
	require.Len(t, changes, 1)
	require.Equal(t, "completed", changes[0]["status"])
	commands := codexItems(lines, "item.completed", "command_execution")
	require.Len(t, commands, 1)
	require.Equal(t, float64(0), commands[0]["exit_code"])
	messages := codexItems(lines, "item.completed", "agent_message")
	require.Len(t, messages, 1)
	require.Equal(t, report, messages[0]["text"])

	reqs := srv.Requests()
	require.Equal(t, []int{0, 1, 2}, conversationSteps(reqs, "write-hello"))
	for _, r := range reqs {
		require.Equal(t, ProtocolResponses, r.Protocol)
		require.Equal(t, thread, r.Session, "session-id is the thread id")
		require.Equal(t, "Bearer "+CodexAPIKey, r.Authorization)
		require.Equal(t, codexModel, r.Model)
		require.True(t, r.Stream)
		require.Equal(t, c.repo, r.Workdir)
		require.Equal(t, "Create hello.txt with a greeting", r.LastUser)
		require.Subset(t, r.Tools, []string{"exec_command", "apply_patch"})
	}
	step2 := requestOf(t, reqs, "write-hello", 2)
	require.Len(t, step2.ToolResults, 2, "the results of both calls since the prompt")
	require.Contains(t, step2.ToolResults[0], "Success. Updated the following files:\nA hello.txt")
	require.Contains(t, step2.ToolResults[1], "Process exited with code 0")

	// Resuming sends the whole thread again; exec resume has no --sandbox.
	lines, err = c.run(true, "-c", `sandbox_mode="workspace-write"`, thread, "Now read it back")
	require.NoError(t, err)
	started = lines.ofType("thread.started")
	require.Len(t, started, 1)
	require.Equal(t, thread, started[0]["thread_id"])
	messages = codexItems(lines, "item.completed", "agent_message")
	require.Len(t, messages, 1)
	require.Equal(t, "It says hello.", messages[0]["text"])
	reqs = srv.Requests()
	require.Equal(t, []int{0, 1}, conversationSteps(reqs, "resumed"))
	r := requestOf(t, reqs, "resumed", 1)
	require.Equal(t, thread, r.Session)
	require.Equal(t, "Now read it back", r.LastUser)
	require.Equal(t, c.repo, r.Workdir)
	require.Len(t, r.ToolResults, 1)
	require.Contains(t, r.ToolResults[0], "Output:\nhello from the fake model\n")
}

// TestCodexReadOnlySandbox shows the default sandbox at work: writes fail
// with "Read-only file system", patches are rejected, reads work.
func TestCodexReadOnlySandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real codex binary")
	}
	srv := New(&Script{Rules: []Rule{{
		Name: "try", When: []string{"Try to write"},
		Replies: []Reply{
			{ToolCalls: []ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "ls"}}}},
			{ToolCalls: []ToolCall{{Name: "exec_command", Args: map[string]any{"cmd": "touch t.txt"}}}},
			{ToolCalls: []ToolCall{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\n"}}}},
			{Text: "Could not write."},
		},
	}}})
	start(t, srv)
	c := newCodexRun(t, srv)
	require.NoError(t, os.WriteFile(filepath.Join(c.repo, "existing.txt"), []byte("x\n"), 0o644))

	lines, err := c.run(false, "--sandbox", "read-only", "Try to write")
	require.NoError(t, err)
	for _, f := range []string{"t.txt", "p.txt"} {
		_, err := os.Stat(filepath.Join(c.repo, f))
		require.True(t, os.IsNotExist(err), "%s was written", f)
	}
	// ls is printed; the failed touch mostly is not (once it was, with
	// status "failed" and exit_code 1), so only the model's side is sure.
	commands := codexItems(lines, "item.completed", "command_execution")
	require.NotEmpty(t, commands)
	require.Equal(t, "/bin/bash -lc ls", commands[0]["command"])
	require.Equal(t, "completed", commands[0]["status"])
	for _, cmd := range commands[1:] {
		require.Equal(t, "failed", cmd["status"])
	}
	require.Empty(t, codexItems(lines, "item.completed", "file_change"), "a rejected patch prints no item")

	last := requestOf(t, srv.Requests(), "try", 3)
	require.Len(t, last.ToolResults, 3)
	require.Contains(t, last.ToolResults[0], "existing.txt")
	require.Contains(t, last.ToolResults[1], "Read-only file system")
	require.Contains(t, last.ToolResults[2], "patch rejected: writing is blocked by read-only sandbox")
}

// TestCodexAPIErrors shows what Codex prints when the model fails: an
// error line and turn.failed with the message, exit status 1.
func TestCodexAPIErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real codex binary")
	}
	srv := New(nil)
	start(t, srv)
	c := newCodexRun(t, srv)
	tests := []struct {
		status int
		msg    string
		want   string
	}{
		// Codex replaces a 500's message with its own.
		{500, "the fake model is down", "We’re currently experiencing high demand, which may cause temporary errors."},
		{401, "invalid api key", "unexpected status 401 Unauthorized: invalid api key, url: " + srv.URL() + "/responses"},
		{429, "slow down", "exceeded retry limit, last status: 429 Too Many Requests"},
	}
	for _, tt := range tests {
		srv.Fail(tt.status, tt.msg)
		before := len(srv.Requests())
		lines, err := c.run(false, "hello")
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "codex exits non-zero on an API error: %v", err)
		require.Equal(t, 1, exit.ExitCode())
		errs := lines.ofType("error")
		require.Len(t, errs, 1, "no retries, so no \"Reconnecting...\" lines")
		require.Equal(t, tt.want, errs[0]["message"])
		failed := lines.ofType("turn.failed")
		require.Len(t, failed, 1)
		require.Equal(t, tt.want, failed[0]["error"].(map[string]any)["message"])
		require.Len(t, srv.Requests(), before+1, "request_max_retries=0, stream_max_retries=0: no retry")
	}
	srv.Recover()
}

// The helpers' output, without running the CLIs.
func TestAgentHelpers(t *testing.T) {
	env := ClaudeEnv("/h", "http://127.0.0.1:5000/v1")
	require.Contains(t, env, "ANTHROPIC_BASE_URL=http://127.0.0.1:5000", "Claude Code adds /v1 itself")
	require.Contains(t, env, "CLAUDE_CONFIG_DIR=/h/.claude")
	require.Contains(t, env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	require.Contains(t, env, "CLAUDE_CODE_MAX_RETRIES=0")
	require.Equal(t, []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "m"}, ClaudeArgs("m"))

	home := t.TempDir()
	env, err := CodexEnv(home)
	require.NoError(t, err)
	require.Contains(t, env, "CODEX_HOME="+filepath.Join(home, ".codex"))
	require.Contains(t, env, CodexKeyEnv+"="+CodexAPIKey)
	st, err := os.Stat(filepath.Join(home, ".codex"))
	require.NoError(t, err)
	require.True(t, st.IsDir(), "Codex refuses a CODEX_HOME that does not exist")

	args := CodexArgs("http://127.0.0.1:5000/v1/", "gpt-5.5")
	require.Contains(t, args, `model_providers.fake={name="fake",base_url="http://127.0.0.1:5000/v1",wire_api="responses",env_key="FAKE_KEY",request_max_retries=0,stream_max_retries=0}`)
	require.Equal(t, []string{"-m", "gpt-5.5"}, args[len(args)-2:])
}
