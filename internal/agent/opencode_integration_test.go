package agent

// Integration tests: the real `opencode serve` with internal/fakemodel as
// the language model. Skipped under -short and when opencode is not found
// (HORIZON_OPENCODE_BIN, PATH, <module root>/node_modules/.bin/opencode).
// Every opencode gets its own HOME and XDG directories.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

func openCodeBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the opencode binary (skipped with -short)")
	}
	bin, err := FindOpenCode(moduleRoot(t))
	if err != nil {
		t.Skip(err.Error())
	}
	return bin
}

// ocHarness is one opencode environment: a scratch HOME, a config dir, a
// session DB and the fake model as its only provider.
type ocHarness struct {
	t       *testing.T
	bin     string
	fake    *fakemodel.Server
	env     []string
	confDir string
	dbPath  string
	extra   string
	pidFile string
	logPath string
}

func newHarness(t *testing.T, script string) *ocHarness {
	t.Helper()
	bin := openCodeBin(t)
	sc, err := fakemodel.ParseScript([]byte(script))
	require.NoError(t, err)
	fake := fakemodel.New(sc)
	require.NoError(t, fake.Start("127.0.0.1:0"))
	t.Cleanup(func() { fake.Close() })

	base := t.TempDir()
	home := filepath.Join(base, "home")
	// OpenCode also npm-installs its plugin package into the user's global
	// config dir in the background (and then ignores SIGTERM until that
	// ends); seed the scratch one as horizon seeds its own config dir.
	require.NoError(t, SeedConfigDeps(filepath.Join(home, ".config", "opencode")))
	h := &ocHarness{
		t: t, bin: bin, fake: fake,
		env:     append(os.Environ(), fakemodel.OpenCodeEnv(home, "")...),
		confDir: filepath.Join(base, "config"),
		dbPath:  filepath.Join(base, "state", "opencode.db"),
		extra:   filepath.Join(base, "opencode.json"),
		pidFile: filepath.Join(base, "state", "opencode.pids"),
		logPath: filepath.Join(base, "state", "opencode.log"),
	}
	require.NoError(t, fakemodel.WriteOpenCodeConfig(h.extra, fake.URL(), "fake-coder"))
	return h
}

func (h *ocHarness) start(ctx context.Context) *Server {
	h.t.Helper()
	began := time.Now()
	s, err := StartServer(ctx, ServerOptions{
		Bin: h.bin, ConfigDir: h.confDir, DBPath: h.dbPath, ExtraConfig: h.extra,
		Env: h.env, LogPath: h.logPath, PIDFile: h.pidFile,
		Logger: zerolog.New(zerolog.NewTestWriter(h.t)).Level(zerolog.InfoLevel),
	})
	require.NoError(h.t, err)
	h.t.Logf("opencode serve ready in %s (pid %d, %s)", time.Since(began).Round(time.Millisecond), s.PID(), s.URL())
	h.t.Cleanup(func() {
		_ = s.Close()
		if h.t.Failed() {
			h.t.Logf("opencode log tail:\n%s", s.logTail())
		}
	})
	return s
}

// gitRepo makes a lane-like directory: a git repository with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	run("init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# lane\n"), 0o644))
	run("add", ".")
	run("commit", "-q", "-m", "init")
	return dir
}

func requireNoGroup(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(groupMembers(pgid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Empty(t, groupMembers(pgid), "processes of opencode's group %d survived", pgid)
}

const sharedScript = `{
  "rules": [
    {"name": "worker-write", "when": ["TASK-WRITE-HELLO"], "replies": [
      {"tool_calls": [{"name": "write", "args": {"filePath": "{{workdir}}/hello.txt", "content": "hello\n"}}], "usage": {"prompt_tokens": 120, "completion_tokens": 30}},
      {"text": "Wrote hello.txt.\n\n` + "```" + `horizon-report\n{\"status\": \"satisfied\", \"summary\": \"wrote hello.txt\"}\n` + "```" + `\n", "usage": {"prompt_tokens": 150, "completion_tokens": 40}}
    ]},
    {"name": "auditor-write", "when": ["TASK-AUDIT-WRITE"], "replies": [
      {"tool_calls": [{"name": "write", "args": {"filePath": "{{workdir}}/audited.txt", "content": "an auditor must not write\n"}}]},
      {"text": "` + "```" + `horizon-audit\n{\"verdict\": \"reject\", \"findings\": [{\"file\": \"README.md\", \"line\": 1, \"severity\": \"concern\", \"note\": \"no tests\"}]}\n` + "```" + `"}
    ]},
    {"name": "hold", "when": ["TASK-HOLD"], "replies": [{"text": "never sent", "hold": "cancel-gate"}]},
    {"name": "ask-bash", "when": ["TASK-ASK-BASH"], "replies": [
      {"tool_calls": [{"name": "bash", "args": {"command": "echo hi > bashed.txt", "description": "write a file"}}]},
      {"text": "` + "```" + `horizon-report\n{\"status\": \"blocked\", \"summary\": \"bash was refused\", \"blocker\": {\"type\": \"platform\", \"evidence\": \"permission rejected\"}}\n` + "```" + `"}
    ]},
    {"name": "ask-question", "when": ["TASK-ASK-QUESTION"], "replies": [
      {"tool_calls": [{"name": "question", "args": {"questions": [{"question": "Which database should I use?", "header": "db", "options": [{"label": "sqlite", "description": "a file"}]}]}}]},
      {"text": "not reached: a rejected question ends the turn"}
    ]}
  ]
}`

// askerAgent has OpenCode's interactive settings (bash: ask, question
// allowed), to prove RunSession answers what horizon's own agents never ask.
const askerAgent = `---
description: "test agent that asks"
mode: primary
permission:
  bash: ask
  question: allow
---
You are a test agent.
`

func TestOpenCodeSessions(t *testing.T) {
	h := newHarness(t, sharedScript)
	require.NoError(t, os.MkdirAll(filepath.Join(h.confDir, "agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(h.confDir, "agent", "test-asker.md"), []byte(askerAgent), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := h.start(ctx)
	pgid := s.PID()

	t.Run("agents as opencode sees them", func(t *testing.T) {
		repo := gitRepo(t)
		agents, err := s.Agents(ctx, repo)
		require.NoError(t, err)
		byName := map[string]AgentInfo{}
		for _, a := range agents {
			byName[a.Name] = a
		}
		for _, name := range AgentNames() {
			a, ok := byName[name]
			require.True(t, ok, "opencode does not list %s", name)
			require.Equal(t, "primary", a.Mode, "%s: a broken frontmatter would show up as mode all", name)
		}
		for _, name := range []string{AgentAuditor, AgentLead, AgentConsultant} {
			a := byName[name]
			// horizon_consult_advisor stands for every MCP tool: "*": deny covers it.
			for _, p := range []string{"edit", "write", "bash", "task", "webfetch", "question", "todowrite", "external_directory", "doom_loop", "horizon_consult_advisor"} {
				require.Equal(t, "deny", a.Action(p, "anything"), "%s: %s", name, p)
			}
			for _, p := range []string{"read", "grep", "glob", "list"} {
				require.Equal(t, "allow", a.Action(p, "src/a.go"), "%s: %s", name, p)
			}
			require.Equal(t, "deny", a.Action("read", ".env"))
		}
		adv := byName[AgentAdvisor]
		for _, p := range []string{"edit", "write", "bash", "task", "webfetch", "question", "todowrite", "list"} {
			require.Equal(t, "deny", adv.Action(p, "anything"), "advisor: %s", p)
		}
		for _, p := range []string{"read", "grep", "glob"} {
			require.Equal(t, "allow", adv.Action(p, "src/a.go"), "advisor: %s", p)
		}
		res := byName[AgentResearcher]
		for _, p := range []string{"edit", "write", "bash", "task", "websearch", "question", "todowrite", "external_directory", "horizon_consult_advisor"} {
			require.Equal(t, "deny", res.Action(p, "anything"), "researcher: %s", p)
		}
		for _, p := range []string{"read", "grep", "glob", "list", "webfetch"} {
			require.Equal(t, "allow", res.Action(p, "https://pkg.go.dev/strconv"), "researcher: %s", p)
		}
		w := byName[AgentWorker]
		for p, want := range map[string]string{"edit": "allow", "bash": "allow", "read": "allow", "webfetch": "deny", "task": "deny", "question": "deny", "doom_loop": "deny", "external_directory": "deny"} {
			require.Equal(t, want, w.Action(p, "x"), "worker: %s", p)
		}
		for _, a := range agents {
			for _, r := range a.Permission {
				if strings.HasPrefix(a.Name, "horizon-") && r.Action == "ask" {
					require.Equal(t, "deny", a.Action(r.Permission, r.Pattern), "%s leaves %s %s at ask", a.Name, r.Permission, r.Pattern)
				}
			}
		}
	})

	t.Run("models", func(t *testing.T) {
		repo := gitRepo(t)
		models, err := s.Models(ctx, repo)
		require.NoError(t, err)
		require.Contains(t, models, "fake/fake-coder")
		require.NoError(t, s.ValidateModel(ctx, repo, "fake/fake-coder"))
		err = s.ValidateModel(ctx, repo, "fake/no-such-model")
		var um *UnknownModelError
		require.ErrorAs(t, err, &um)
		require.Contains(t, um.Available, "fake/fake-coder")
		require.Contains(t, err.Error(), "fake/fake-coder")

		_, err = s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: "nope/model", Prompt: "x"}, nil)
		require.ErrorAs(t, err, &um)

		// Another process of the home asks the running server through
		// its endpoint file, and gets the same answer; one configured
		// with another binary or config file does not use it.
		ep := filepath.Join(t.TempDir(), EndpointFile)
		e := s.Endpoint()
		e.Bin, e.Config = h.bin, h.extra
		require.NoError(t, WriteEndpoint(ep, e))
		st, err := os.Stat(ep)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "it holds the server's password")
		via, err := ModelsFromEndpoint(ctx, ep, h.bin, h.extra, repo)
		require.NoError(t, err)
		require.Equal(t, models, via)
		_, err = ModelsFromEndpoint(ctx, ep, "/other/opencode", h.extra, repo)
		require.ErrorIs(t, err, ErrNoEndpoint)
		_, err = ModelsFromEndpoint(ctx, ep, h.bin, "", repo)
		require.ErrorIs(t, err, ErrNoEndpoint)
		_, err = ModelsFromEndpoint(ctx, filepath.Join(t.TempDir(), "none.json"), h.bin, h.extra, repo)
		require.ErrorIs(t, err, ErrNoEndpoint)
	})

	t.Run("worker writes and reports", func(t *testing.T) {
		repo := gitRepo(t)
		var progress []Progress
		began := time.Now()
		res, err := s.RunSession(ctx, SessionRequest{
			Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder", Title: "worker test",
			Prompt: "TASK-WRITE-HELLO: create hello.txt containing hello.",
		}, func(p Progress) { progress = append(progress, p) })
		require.NoError(t, err)
		t.Logf("worker session took %s", time.Since(began).Round(time.Millisecond))
		got, err := os.ReadFile(filepath.Join(repo, "hello.txt"))
		require.NoError(t, err)
		require.Equal(t, "hello\n", string(got))
		rep, _, err := ParseReport(res.Text)
		require.NoError(t, err, "text: %q", res.Text)
		require.Equal(t, horizon.ReportSatisfied, rep.Status)
		require.Equal(t, int64(270), res.Usage.Input)
		require.Equal(t, int64(70), res.Usage.Output)
		require.Greater(t, res.Usage.Cost, 0.0)
		require.False(t, res.Resumed)
		require.Empty(t, res.Asked)
		require.Equal(t, "stop", res.Finish)
		require.GreaterOrEqual(t, res.Messages, 3, "user, tool step, final step")
		require.NotEmpty(t, progress)
		require.Equal(t, "created", progress[0].Phase)
		require.Equal(t, res.SessionID, progress[0].SessionID)
		for _, r := range h.fake.Requests() {
			require.False(t, r.Title, "a titled session makes no (paid) title request")
		}
	})

	t.Run("auditor cannot write", func(t *testing.T) {
		repo := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{
			Directory: repo, Agent: AgentAuditor, Model: "fake/fake-coder",
			Prompt: "TASK-AUDIT-WRITE: review the change.",
		}, nil)
		require.NoError(t, err)
		require.NoFileExists(t, filepath.Join(repo, "audited.txt"))
		au, _, err := ParseAudit(res.Text)
		require.NoError(t, err)
		require.Equal(t, horizon.VerdictReject, au.Verdict)
		// What the model got back for its write call: OpenCode does not
		// offer the tool to a deny agent and records the call as failed.
		var raw []struct {
			Parts []struct {
				Type  string `json:"type"`
				Tool  string `json:"tool"`
				State struct {
					Status string `json:"status"`
					Error  string `json:"error"`
				} `json:"state"`
			} `json:"parts"`
		}
		require.NoError(t, s.call(ctx, "GET", "/session/"+res.SessionID+"/message", dirQuery(repo), nil, &raw))
		var refused []string
		for _, m := range raw {
			for _, p := range m.Parts {
				if p.Type == "tool" {
					require.Equal(t, "error", p.State.Status, "tool %s ran", p.Tool)
					refused = append(refused, p.State.Error)
				}
			}
		}
		require.Len(t, refused, 1)
		t.Logf("opencode's answer to the auditor's write: %s", refused[0])
		_, avail, ok := strings.Cut(refused[0], "Available tools: ")
		require.True(t, ok, "opencode names the tools it offers: %s", refused[0])
		tools := strings.Split(strings.TrimSuffix(strings.TrimSpace(avail), "."), ", ")
		require.Subset(t, []string{"glob", "grep", "list", "read"}, tools, "the auditor is offered read-only tools only")
		for _, banned := range []string{"write", "edit", "bash", "task", "webfetch", "question", "todowrite"} {
			require.NotContains(t, tools, banned)
		}
	})

	t.Run("permission requests are rejected", func(t *testing.T) {
		repo := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{
			Directory: repo, Agent: "test-asker", Model: "fake/fake-coder",
			Prompt: "TASK-ASK-BASH: run a command.",
		}, nil)
		require.NoError(t, err)
		require.NoFileExists(t, filepath.Join(repo, "bashed.txt"))
		require.Len(t, res.Asked, 1)
		require.Equal(t, horizon.AskPermission, res.Asked[0].Kind)
		require.Contains(t, res.Asked[0].Text, "bash")
		rep, _, err := ParseReport(res.Text)
		require.NoError(t, err, "the model is told why and goes on to report")
		require.Equal(t, horizon.ReportBlocked, rep.Status)
	})

	t.Run("questions are rejected", func(t *testing.T) {
		repo := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{
			Directory: repo, Agent: "test-asker", Model: "fake/fake-coder",
			Prompt: "TASK-ASK-QUESTION: pick a database.",
		}, nil)
		require.NoError(t, err)
		require.Equal(t, []horizon.Ask{{Kind: horizon.AskQuestion, Text: "Which database should I use?"}}, res.Asked)
		require.Equal(t, "tool-calls", res.Finish, "a rejected question ends the turn")
		_, _, err = ParseReport(res.Text)
		require.ErrorIs(t, err, ErrProtocol)
	})

	t.Run("cancellation aborts", func(t *testing.T) {
		repo := gitRepo(t)
		rctx, rcancel := context.WithCancel(ctx)
		defer rcancel()
		type out struct {
			res SessionResult
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := s.RunSession(rctx, SessionRequest{
				Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder", Prompt: "TASK-HOLD: wait.",
			}, nil)
			done <- out{res, err}
		}()
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		_, err := h.fake.WaitForRequest(wctx, func(r fakemodel.Request) bool { return r.Rule == "hold" && r.Held })
		require.NoError(t, err)
		began := time.Now()
		rcancel()
		var o out
		select {
		case o = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("RunSession did not return after cancellation")
		}
		t.Logf("RunSession returned %s after cancel", time.Since(began).Round(time.Millisecond))
		require.ErrorIs(t, o.err, context.Canceled)
		require.NotEmpty(t, o.res.SessionID)
		// The session really stopped: idle, and its step ended as aborted.
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := s.status(ctx, repo, o.res.SessionID)
			require.NoError(t, err)
			msgs, err := s.messages(ctx, repo, o.res.SessionID, 0)
			require.NoError(t, err)
			last := msgs[len(msgs)-1].Info
			if st.Type == "idle" && last.Role == "assistant" && last.Error != nil {
				require.Equal(t, "MessageAbortedError", last.Error.Name)
				break
			}
			require.True(t, time.Now().Before(deadline), "session not aborted: %s, last %+v", st.Type, last)
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("close leaves no process", func(t *testing.T) {
		require.NoError(t, s.Close())
		select {
		case <-s.Exited():
		default:
			t.Fatal("Close returned before the server exited")
		}
		requireNoGroup(t, pgid)
		b, err := os.ReadFile(h.pidFile)
		require.NoError(t, err)
		require.NotContains(t, string(b), fmt.Sprintf("%d %d", pgid, pgid), "Close forgets its pid line")
		_, err = s.Models(ctx, "/tmp")
		require.ErrorIs(t, err, ErrServerExited)
	})
}

const crashScript = `{
  "rules": [
    {"name": "resume", "when": ["TASK-CRASH", "You were interrupted"], "replies": [
      {"tool_calls": [{"name": "write", "args": {"filePath": "{{workdir}}/crash.txt", "content": "done after resume\n"}}]},
      {"text": "` + "```" + `horizon-report\n{\"status\": \"satisfied\", \"summary\": \"finished after the crash\"}\n` + "```" + `"}
    ]},
    {"name": "crash-hold", "when": ["TASK-CRASH"], "unless": ["You were interrupted"], "replies": [
      {"text": "never sent", "hold": "crash-gate"}
    ]}
  ]
}`

// TestOpenCodeCrashResume kills opencode mid-step, starts a new server on the
// same session store, and continues the same session.
func TestOpenCodeCrashResume(t *testing.T) {
	h := newHarness(t, crashScript)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	repo := gitRepo(t)
	s1 := h.start(ctx)
	req := SessionRequest{Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder", Prompt: "TASK-CRASH: write crash.txt."}

	ids := make(chan string, 8)
	errc := make(chan error, 1)
	go func() {
		_, err := s1.RunSession(ctx, req, func(p Progress) { ids <- p.SessionID })
		errc <- err
	}()
	sid := <-ids
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	_, err := h.fake.WaitForRequest(wctx, func(r fakemodel.Request) bool { return r.Rule == "crash-hold" && r.Held })
	require.NoError(t, err)

	pgid := s1.PID()
	require.NoError(t, syscall.Kill(-pgid, syscall.SIGKILL))
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrServerExited)
	case <-time.After(30 * time.Second):
		t.Fatal("RunSession did not notice the server died")
	}
	requireNoGroup(t, pgid)

	s2 := h.start(ctx)
	require.NotEqual(t, pgid, s2.PID())
	req.ResumeSessionID = sid
	res, err := s2.RunSession(ctx, req, nil)
	require.NoError(t, err)
	require.Equal(t, sid, res.SessionID, "the same session continues")
	require.True(t, res.Resumed)
	rep, _, err := ParseReport(res.Text)
	require.NoError(t, err)
	require.Equal(t, horizon.ReportSatisfied, rep.Status)
	require.FileExists(t, filepath.Join(repo, "crash.txt"))
	var sawContinuation bool
	for _, r := range h.fake.Requests() {
		if r.Rule == "resume" && strings.Contains(r.LastUser, "You were interrupted") {
			sawContinuation = true
		}
	}
	require.True(t, sawContinuation, "the model got the continuation prompt")

	// Asking again returns the finished turn without another model call.
	before := len(h.fake.Requests())
	again, err := s2.RunSession(ctx, req, nil)
	require.NoError(t, err)
	require.Equal(t, res.Text, again.Text)
	require.Equal(t, before, len(h.fake.Requests()), "a finished session is not prompted again")
}

// TestReapOrphansKillsOpenCode: a server whose daemon "died" (never closed)
// is found through the PID file and killed, group and all.
func TestReapOrphansKillsOpenCode(t *testing.T) {
	h := newHarness(t, `{"rules": []}`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := h.start(ctx)
	n, err := ReapOrphans(h.pidFile, zerolog.New(zerolog.NewTestWriter(t)))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("reaped server still running")
	}
	requireNoGroup(t, s.PID())
	b, err := os.ReadFile(h.pidFile)
	require.NoError(t, err)
	require.Empty(t, b)
}

// TestServerDiesWithDaemon: a daemon that dies without Close (os.Exit here,
// a crash in real life) takes its opencode with it (Pdeathsig).
func TestServerDiesWithDaemon(t *testing.T) {
	bin := openCodeBin(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	require.NoError(t, SeedConfigDeps(filepath.Join(home, ".config", "opencode")))
	cmd := exec.Command(os.Args[0], "-test.run=^TestDaemonHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), fakemodel.OpenCodeEnv(home, "")...)
	cmd.Env = append(cmd.Env, "HORIZON_AGENT_DAEMON_HELPER="+dir, "HORIZON_OPENCODE_BIN="+bin)
	out, err := cmd.CombinedOutput()
	// Whatever happens below, leave no opencode behind.
	t.Cleanup(func() { _, _ = ReapOrphans(filepath.Join(dir, "pids"), zerolog.Nop()) })
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "helper output:\n%s", out)
	require.Equal(t, 7, ee.ExitCode(), "helper output:\n%s", out)
	b, err := os.ReadFile(filepath.Join(dir, "pids"))
	require.NoError(t, err)
	var pid, pgid int
	_, err = fmt.Sscanf(string(b), "%d %d", &pid, &pgid)
	require.NoError(t, err, "pid file: %q", b)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, alive := cmdline(pid); !alive {
			break
		}
		require.True(t, time.Now().Before(deadline), "opencode (pid %d) outlived its daemon", pid)
		time.Sleep(20 * time.Millisecond)
	}
	// Tools it ran could outlive it; ReapOrphans is there for those.
	_, err = ReapOrphans(filepath.Join(dir, "pids"), zerolog.Nop())
	require.NoError(t, err)
	requireNoGroup(t, pgid)
}

// TestDaemonHelper is the "daemon" of TestServerDiesWithDaemon, run in a
// child process: it starts opencode and exits without closing it.
func TestDaemonHelper(t *testing.T) {
	dir := os.Getenv("HORIZON_AGENT_DAEMON_HELPER")
	if dir == "" {
		t.Skip("helper process of TestServerDiesWithDaemon")
	}
	_, err := StartServer(context.Background(), ServerOptions{
		Bin: os.Getenv("HORIZON_OPENCODE_BIN"), ConfigDir: filepath.Join(dir, "config"),
		DBPath: filepath.Join(dir, "opencode.db"), LogPath: filepath.Join(dir, "opencode.log"),
		PIDFile: filepath.Join(dir, "pids"), Logger: zerolog.Nop(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(7) // die as a crashed daemon would: no Close
}
