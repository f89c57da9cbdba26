package applier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/ladder"
)

func TestOf(t *testing.T) {
	tests := []struct {
		route string
		kind  Kind
		model string
	}{
		{"claude-code/claude-sonnet-4-5", Claude, "claude-sonnet-4-5"},
		{"codex/gpt-5", Codex, "gpt-5"},
		{"anthropic/claude-sonnet-4-5", OpenCode, "anthropic/claude-sonnet-4-5"},
		{"codex/", OpenCode, "codex/"},
		{"openrouter/codex/x", OpenCode, "openrouter/codex/x"},
	}
	for _, tt := range tests {
		k, m := Of(tt.route)
		if k != tt.kind || m != tt.model {
			t.Errorf("Of(%q) = %s, %q; want %s, %q", tt.route, k, m, tt.kind, tt.model)
		}
	}
}

// The session logs under testdata are what the CLIs printed, with horizon's
// invocation markers: readLog must find the session, say whether its turn
// finished, and sum what the finished invocations cost.
func TestReadLog(t *testing.T) {
	price := ladder.Price{Input: 1, Output: 10}
	tests := []struct {
		file     string
		d        driver
		session  string
		finished bool
		text     string
		cost     float64
		errPart  string
	}{
		{"claude-finished.jsonl", claude{}, "3f1c2b9e-8a1d-4c55-9e3b-2f4a5b6c7d8e", true, "done\n```horizon-report\n{}\n```", 0.0123, ""},
		{"claude-crashed.jsonl", claude{}, "3f1c2b9e-8a1d-4c55-9e3b-2f4a5b6c7d8e", false, "working on it", 0, ""},
		{"claude-resumed.jsonl", claude{}, "3f1c2b9e-8a1d-4c55-9e3b-2f4a5b6c7d8e", true, "after resume", 0.02, ""},
		{"claude-401.jsonl", claude{}, "58ff7e9b-ca13-406c-93fa-1a1a3d35add2", false, "", 0, "401"}, // a failed turn is continued, not returned
		{"codex-finished.jsonl", codex{}, "01a23840-c0ff-7f52-be86-9067094c6902", true, "all done", 0.0002, ""},
		{"codex-crashed.jsonl", codex{}, "01a23840-c0ff-7f52-be86-9067094c6902", false, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := readLog(filepath.Join("testdata", tt.file), tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if tr.session != tt.session || tr.finished() != tt.finished || tr.text != tt.text {
				t.Fatalf("read %s: session %q finished %v text %q; want %q %v %q", tt.file, tr.session, tr.finished(), tr.text, tt.session, tt.finished, tt.text)
			}
			res := tr.result(price)
			if d := res.Usage.Cost - tt.cost; d > 1e-9 || d < -1e-9 {
				t.Errorf("cost %g, want %g", res.Usage.Cost, tt.cost)
			}
			if tr.failed != nil {
				err = tr.failed
			} else {
				err = nil
			}
			if (err != nil) != (tt.errPart != "") || err != nil && !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("err %v, want one containing %q", err, tt.errPart)
			}
		})
	}
}

func TestReadLogMissingIsEmpty(t *testing.T) {
	tr, err := readLog(filepath.Join(t.TempDir(), "none.jsonl"), claude{})
	if err != nil || tr.started || tr.session != "" {
		t.Fatalf("missing log: %+v, %v", tr, err)
	}
}

func TestClaudeRetryAndDenials(t *testing.T) {
	ev := claude{}.event([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":5},"permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"rm -rf /"}}]}`))
	if !ev.Final || ev.Usage.Cost != 0.5 || len(ev.Asked) != 1 || !strings.Contains(ev.Asked[0].Text, "Bash: ") {
		t.Fatalf("result event read as %+v", ev)
	}
	ev = codex{}.event([]byte(`{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: error sending request)"}`))
	if ev.Retry == nil || ev.Retry.Attempt != 2 || ev.Phase != "retry" {
		t.Fatalf("codex reconnect read as %+v", ev)
	}
	ev = codex{}.event([]byte(`{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: bad key"}}`))
	var se *agent.SessionError = ev.Err
	if !ev.Final || se == nil || se.StatusCode != 401 {
		t.Fatalf("codex turn.failed read as %+v", ev)
	}
}

func TestClaudeEnvHidesKeys(t *testing.T) {
	env := claudeEnv([]string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-1", "ANTHROPIC_BASE_URL=http://x", "OPENAI_API_KEY=sk-2", "GITHUB_TOKEN=g", "MY_TOKEN=m", "HOME=/h"}, []string{"MY_TOKEN"})
	got := strings.Join(env, " ")
	for _, want := range []string{"PATH=/bin", "ANTHROPIC_BASE_URL=http://x", "MY_TOKEN=m", "HOME=/h"} {
		if !strings.Contains(got, want) {
			t.Errorf("env %q lacks %s", got, want)
		}
	}
	for _, secret := range []string{"sk-1", "sk-2", "GITHUB_TOKEN"} {
		if strings.Contains(got, secret) {
			t.Errorf("env %q shows %s", got, secret)
		}
	}
}

func TestClaudeSettingsCarryTheKeyInAFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ANTHROPIC_API_KEY", "sk-secret")
	c := claude{stateDir: dir}
	args, env, err := c.command(invocation{Model: "claude-sonnet-4-5", Dir: dir, Agent: agent.AgentAuditor, Session: "s", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(env, "\n"), "sk-secret") || strings.Contains(strings.Join(args, " "), "sk-secret") {
		t.Fatal("the key is in the CLI's environment or arguments")
	}
	b, err := os.ReadFile(filepath.Join(dir, "claude", "key"))
	if err != nil || string(b) != "sk-secret" {
		t.Fatalf("key file: %q, %v", b, err)
	}
	st, _ := os.Stat(filepath.Join(dir, "claude", "key"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--disallowedTools Write,Edit,MultiEdit,NotebookEdit,Bash", "--session-id s", "--settings "} {
		if !strings.Contains(joined, want) {
			t.Errorf("read-only invocation %q lacks %q", joined, want)
		}
	}
}
