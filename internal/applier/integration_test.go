package applier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/ladder"
)

// The real Claude Code and Codex CLIs against the scripted model: the only
// stand-in is the model. Each CLI is configured the way a person's machine
// would be: Claude Code by ANTHROPIC_BASE_URL and a key in the
// environment, Codex by a provider in the person's config.toml.

const (
	vendorSecret = "sk-vendor-never-in-a-shell"
	claudeKey    = "sk-ant-claude-code-own-key"
)

// world is one fake model and a person's environment pointing both CLIs
// at it.
type world struct {
	model *fakemodel.Server
	r     *Runner
	lane  string
}

func newWorld(t *testing.T, script *fakemodel.Script) *world {
	t.Helper()
	for _, k := range Kinds {
		if _, err := Find(k, ""); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%v", err)
			}
			t.Skipf("%v", err)
		}
	}
	m := fakemodel.New(script)
	require.NoError(t, m.Start("127.0.0.1:0"))
	t.Cleanup(func() { m.Close() })
	home := t.TempDir()
	for _, kv := range fakemodel.ClaudeEnv(home, m.URL()) {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	t.Setenv("ANTHROPIC_API_KEY", claudeKey)
	t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	t.Setenv(fakemodel.CodexKeyEnv, fakemodel.CodexAPIKey)
	require.NoError(t, fakemodel.WriteCodexConfig(filepath.Join(home, ".codex"), m.URL()))
	// A vendor key the person has for something else: no agent's shell
	// may see it.
	t.Setenv("VENDOR_API_KEY", vendorSecret)
	lane := filepath.Join(t.TempDir(), "lane")
	require.NoError(t, os.MkdirAll(lane, 0o755))
	out, err := exec.Command("git", "-C", lane, "init", "-q").CombinedOutput()
	require.NoError(t, err, string(out))
	r := New(Options{StateDir: t.TempDir(), Log: zerolog.Nop(),
		Price: func(string) ladder.Price { return ladder.Price{Input: 2, Output: 10} }})
	return &world{model: m, r: r, lane: lane}
}

// writeCall is the tool call that writes name in the lane, in each CLI's
// own tool: Claude Code's Bash, Codex's exec_command.
func writeCall(k Kind, name, content string) fakemodel.ToolCall {
	cmd := "printf '" + content + "' > " + name
	if k == Claude {
		return fakemodel.ToolCall{Name: "Bash", Args: map[string]any{"command": cmd}}
	}
	return fakemodel.ToolCall{Name: "exec_command", Args: map[string]any{"cmd": cmd}}
}

func shellCall(k Kind, cmd string) fakemodel.ToolCall {
	if k == Claude {
		return fakemodel.ToolCall{Name: "Bash", Args: map[string]any{"command": cmd}}
	}
	return fakemodel.ToolCall{Name: "exec_command", Args: map[string]any{"cmd": cmd}}
}

const report = "Done.\n```horizon-report\n{\"status\": \"done\", \"summary\": \"wrote it\"}\n```"

func route(k Kind) string {
	if k == Claude {
		return "claude-code/claude-sonnet-4-5"
	}
	return "codex/some-model"
}

// A worker session on each applier writes in its lane, ends with its
// report, costs something and names its session; its shell does not see
// the person's vendor keys. Run again under the same title, the finished
// turn comes from the session log without another model call.
func TestWorkerSession(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{{
				Name: "worker", When: []string{"write the greeting"},
				Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{writeCall(k, "hello.txt", "hi")}},
					{ToolCalls: []fakemodel.ToolCall{shellCall(k, "env > env.txt")}},
					{Text: report},
				},
			}}})
			codexConfig := filepath.Join(os.Getenv("CODEX_HOME"), "config.toml")
			before, err := os.ReadFile(codexConfig)
			require.NoError(t, err)
			var progress []agent.Progress
			req := agent.SessionRequest{Directory: w.lane, Agent: agent.AgentWorker, Model: route(k), Prompt: "Please write the greeting.", Title: "run-1 f1 attempt 1 worker"}
			res, err := w.r.RunSession(t.Context(), req, func(p agent.Progress) { progress = append(progress, p) })
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(w.lane, "hello.txt"))
			require.NoError(t, err)
			require.Equal(t, "hi", string(b))
			require.Contains(t, res.Text, "```horizon-report")
			require.NotEmpty(t, res.SessionID)
			require.Greater(t, res.Usage.Cost, 0.0, "the session cost nothing: %+v", res.Usage)
			require.NotEmpty(t, progress)
			require.Equal(t, res.SessionID, progress[0].SessionID, "the first progress must carry the session ID, for the heartbeat")
			env, err := os.ReadFile(filepath.Join(w.lane, "env.txt"))
			require.NoError(t, err)
			require.NotContains(t, string(env), vendorSecret, "the agent's shell sees a vendor key")
			if k == Claude {
				require.NotContains(t, string(env), claudeKey, "Claude Code's own key is in its shell")
				require.NotContains(t, string(env), "ANTHROPIC_API_KEY")
				for _, r := range w.model.Requests() {
					require.Equal(t, claudeKey, r.APIKey, "Claude Code did not get its key through the helper")
				}
			}

			// The person's configuration is read, never written: horizon's
			// settings travel with the invocation.
			after, err := os.ReadFile(codexConfig)
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "Codex's config.toml changed")
			_, err = os.Stat(filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "settings.json"))
			require.ErrorIs(t, err, os.ErrNotExist, "a settings.json appeared in the person's Claude Code configuration")

			n := len(w.model.Requests())
			again, err := w.r.RunSession(t.Context(), req, nil)
			require.NoError(t, err)
			require.Equal(t, res.SessionID, again.SessionID)
			require.True(t, again.Resumed)
			require.Equal(t, res.Text, again.Text)
			require.InDelta(t, res.Usage.Cost, again.Usage.Cost, 1e-9)
			require.Len(t, w.model.Requests(), n, "a finished turn was run (and paid) again")
		})
	}
}

// A read-only role (the auditor) cannot write: Claude Code is not offered
// its write and shell tools, Codex's sandbox refuses the write.
func TestReadOnlySessionCannotWrite(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			var try fakemodel.ToolCall
			if k == Claude {
				try = fakemodel.ToolCall{Name: "Write", Args: map[string]any{"file_path": "sneaky.txt", "content": "x"}}
			} else {
				try = writeCall(k, "sneaky.txt", "x")
			}
			w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{{
				Name: "auditor", When: []string{"audit the change"},
				Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{try}},
					{Text: "```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"},
				},
			}}})
			res, err := w.r.RunSession(t.Context(), agent.SessionRequest{Directory: w.lane, Agent: agent.AgentAuditor, Model: route(k), Prompt: "Please audit the change.", Title: "audit"}, nil)
			require.NoError(t, err)
			require.Contains(t, res.Text, "horizon-audit")
			_, err = os.Stat(filepath.Join(w.lane, "sneaky.txt"))
			require.ErrorIs(t, err, os.ErrNotExist, "a read-only session wrote a file")
			if k == Claude {
				for _, r := range w.model.Requests() {
					require.NotContains(t, r.Tools, "Write", "the auditor was offered Write")
					require.NotContains(t, r.Tools, "Bash", "the auditor was offered Bash")
				}
			}
		})
	}
}

// A session whose CLI is killed mid-turn (the daemon died; here the
// context ends) leaves no process behind, and the retry continues the
// same session: same ID, the earlier conversation sent again, the turn
// finished once.
func TestCrashedSessionContinues(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
				{Name: "continue", When: []string{"You were interrupted"}, Replies: []fakemodel.Reply{{Text: report}}},
				{Name: "worker", When: []string{"write the greeting"}, Times: 1, Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{writeCall(k, "hello.txt", "hi")}},
					{Hold: "crash", Text: "never sent"},
				}},
			}})
			req := agent.SessionRequest{Directory: w.lane, Agent: agent.AgentWorker, Model: route(k), Prompt: "Please write the greeting.", Title: "run-1 f1 attempt 1 worker"}
			ctx, cancel := context.WithCancel(t.Context())
			var sid string
			done := make(chan error, 1)
			go func() {
				_, err := w.r.RunSession(ctx, req, func(p agent.Progress) {
					if p.SessionID != "" {
						sid = p.SessionID
					}
				})
				done <- err
			}()
			wctx, wcancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer wcancel()
			held, err := w.model.WaitForRequest(wctx, func(r fakemodel.Request) bool { return r.Held })
			require.NoError(t, err)
			pids := cliPIDs(t, k)
			require.NotEmpty(t, pids, "no %s process while its session runs", k)
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			if !assertGone(t, k) {
				return
			}
			require.NotEmpty(t, sid)

			req.ResumeSessionID = sid
			res, err := w.r.RunSession(t.Context(), req, nil)
			require.NoError(t, err)
			require.Equal(t, sid, res.SessionID, "a fresh session was started instead of continuing")
			require.True(t, res.Resumed)
			require.Contains(t, res.Text, "horizon-report")
			var cont []fakemodel.Request
			for _, r := range w.model.Requests() {
				if r.Rule == "continue" {
					cont = append(cont, r)
				}
			}
			require.Len(t, cont, 1)
			require.Equal(t, held.Session, cont[0].Session, "the continuation went to another session")
			b, err := os.ReadFile(filepath.Join(w.lane, "hello.txt"))
			require.NoError(t, err)
			require.Equal(t, "hi", string(b))
		})
	}
}

// A provider that refuses the key is a SessionError with the status, which
// the activity turns into a missing_credential blocker.
func TestRefusedKeyIsASessionError(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{{
				Name: "refuse", When: []string{"write the greeting"},
				Replies: []fakemodel.Reply{{Status: 401, Error: "Incorrect API key provided"}},
			}}})
			_, err := w.r.RunSession(t.Context(), agent.SessionRequest{Directory: w.lane, Agent: agent.AgentWorker, Model: route(k), Prompt: "Please write the greeting.", Title: "refused"}, nil)
			var se *agent.SessionError
			require.ErrorAs(t, err, &se)
			require.Equal(t, 401, se.StatusCode, "%v", err)
		})
	}
}

// cliPIDs are the running processes of k's CLI started for this test's
// sessions (their working directory is under the test's temp dirs).
func cliPIDs(t *testing.T, k Kind) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		pid := 0
		for _, c := range e.Name() {
			if c < '0' || c > '9' {
				pid = -1
				break
			}
			pid = pid*10 + int(c-'0')
		}
		if pid <= 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), binName[k]) {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, os.TempDir()) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			out = append(out, pid)
		}
	}
	return out
}

func assertGone(t *testing.T, k Kind) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(cliPIDs(t, k)) == 0 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	var left []string
	for _, pid := range cliPIDs(t, k) {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		left = append(left, strings.ReplaceAll(string(b), "\x00", " ")+" :: "+string(st))
	}
	t.Errorf("the CLI outlived its cancelled session: %s", strings.Join(left, "\n"))
	return false
}

// An advisor's waking note delivered while the CLI works reaches the
// worker with its next turn, in the same session, before RunSession
// returns; the watchdog finds the session by its title, reads the note in
// the transcript, and sees it idle only once that turn is over.
func TestWakingNoteContinuesTheSession(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
				{Name: "answer", When: []string{"write the greeting", "use hello.txt"}, Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{writeCall(k, "hello.txt", "hi")}},
					{Text: report},
				}},
				{Name: "worker", When: []string{"write the greeting"}, Replies: []fakemodel.Reply{
					{Hold: "note-in", Text: "Done without the file.\n```horizon-report\n{\"status\": \"done\"}\n```"},
				}},
			}})
			req := agent.SessionRequest{Directory: w.lane, Agent: agent.AgentWorker, Model: route(k), Prompt: "Please write the greeting.", Title: "run-1 f1 attempt 1 worker"}
			type result struct {
				res agent.SessionResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := w.r.RunSession(t.Context(), req, nil)
				done <- result{res, err}
			}()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Held })
			require.NoError(t, err)
			sid, err := w.r.FindSession(ctx, w.lane, req.Title)
			require.NoError(t, err)
			require.NotEmpty(t, sid)
			idle, err := w.r.Idle(ctx, w.lane, sid)
			require.NoError(t, err)
			require.False(t, idle, "a working session reads idle")
			note := agent.Delivery{MessageID: "msg_note_1", NoteID: "r1.1", Text: "[horizon advisor · blocker] use hello.txt for the greeting", Wake: true}
			require.NoError(t, w.r.Deliver(ctx, w.lane, sid, note))
			require.NoError(t, w.r.Deliver(ctx, w.lane, sid, note), "a second delivery of the same message")
			w.model.Release("note-in")

			got := <-done
			require.NoError(t, got.err)
			require.Equal(t, sid, got.res.SessionID)
			require.Contains(t, got.res.Text, "horizon-report")
			require.Contains(t, got.res.Text, "wrote it", "the turn that answers the note is the result")
			b, err := os.ReadFile(filepath.Join(w.lane, "hello.txt"))
			require.NoError(t, err)
			require.Equal(t, "hi", string(b))
			idle, err = w.r.Idle(ctx, w.lane, sid)
			require.NoError(t, err)
			require.True(t, idle)

			msgs, err := w.r.Transcript(ctx, w.lane, sid)
			require.NoError(t, err)
			notes := 0
			for _, m := range msgs {
				if m.Advice == "r1.1" {
					notes++
					require.True(t, m.Wake)
				}
			}
			require.Equal(t, 1, notes, "the note once in the transcript: %+v", msgs)
			last := msgs[len(msgs)-1]
			require.Equal(t, "assistant", last.Role)
			require.Equal(t, "stop", last.Finish)
			answered := 0
			for _, r := range w.model.Requests() {
				if r.Rule == "answer" {
					answered++
					require.Equal(t, sid, r.Session, "the note's turn ran in another session")
				}
			}
			require.Positive(t, answered)
		})
	}
}
