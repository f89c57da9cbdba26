package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// Claude Code and Codex CLI as appliers, through the daemon: the real
// CLIs against the scripted model, which speaks the Anthropic Messages API
// to Claude Code and the Responses API to Codex. Each CLI is configured as
// a person's machine would be: Claude Code by ANTHROPIC_BASE_URL and a key
// in the environment, Codex by a provider in the person's config.toml.

const (
	claudeRoute = "claude-code/claude-sonnet-4-5"
	// gpt-5.5 is in Codex's catalogue: it is offered its full tool set.
	codexRoute = "codex/gpt-5.5"
)

// applierCLIs finds the pinned CLIs `make test` installs; without them the
// test skips, except under CI=true.
func applierCLIs(t *testing.T) (claude, codex string) {
	t.Helper()
	root, err := moduleRoot()
	require.NoError(t, err)
	bins := map[string]string{}
	for _, name := range []string{"claude", "codex"} {
		p := filepath.Join(root, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found at %s: `make test-tools` installs it", name, p)
			}
			t.Skipf("%s not found at %s: `make test-tools` installs it", name, p)
		}
		bins[name] = p
	}
	return bins["claude"], bins["codex"]
}

// applierWorld points both CLIs at the scripted model and ranks the
// models of lb (a leaderboard's JSON) for the run.
func applierWorld(t *testing.T, script *fakemodel.Script, lb string, env ...string) *world {
	t.Helper()
	claude, codex := applierCLIs(t)
	w := newWorld(t, script)
	home := w.userHome()
	for _, kv := range fakemodel.ClaudeEnv(home, w.model.URL()) {
		if !strings.HasPrefix(kv, "HOME=") {
			w.env = append(w.env, kv)
		}
	}
	codexHome := filepath.Join(home, ".codex")
	require.NoError(t, fakemodel.WriteCodexConfig(codexHome, w.model.URL()))
	path := filepath.Join(t.TempDir(), "leaderboard.json")
	require.NoError(t, os.WriteFile(path, []byte(lb), 0o644))
	w.env = append(w.env,
		"CODEX_HOME="+codexHome,
		fakemodel.CodexKeyEnv+"="+fakemodel.CodexAPIKey,
		"HORIZON_AGENT_CLAUDE_BIN="+claude,
		"HORIZON_AGENT_CODEX_BIN="+codex,
		"HORIZON_MODELS_FILE="+path,
	)
	w.env = append(w.env, env...)
	return w
}

// leaderboardFor ranks build's route first for building, leading and
// exploring and audit's first for analyze (the auditor's role): the worker
// and the lead run on one applier, the auditor on the other. extra models
// (JSON objects) are appended.
func leaderboardFor(build, audit string, extra ...string) string {
	model := func(route string, first, second []string, cost string) string {
		roles := map[string]map[string]int{}
		for _, r := range first {
			roles[r] = map[string]int{"rank": 1}
		}
		for _, r := range second {
			roles[r] = map[string]int{"rank": 2}
		}
		b, _ := json.Marshal(map[string]any{
			"name": strings.SplitN(route, "/", 2)[1], "routes": []string{route}, "roles": roles,
			"capabilities": map[string]any{"contextLength": 200000, "toolCall": true, "cost": cost},
		})
		return string(b)
	}
	building := []string{"build", "lead", "explore", "quick", "research"}
	models := []string{model(build, building, []string{"analyze"}, "medium")}
	if audit != build {
		models = append(models, model(audit, []string{"analyze"}, nil, "medium"))
	}
	models = append(models, extra...)
	return `{"revision": 1, "models": [` + strings.Join(models, ", ") + `]}`
}

// writeFile is the tool call that writes path in the lane in route's
// applier: Claude Code's Write, Codex's shell.
func writeFile(route, path, content string) fakemodel.ToolCall {
	if strings.HasPrefix(route, "claude-code/") {
		return fakemodel.ToolCall{Name: "Write", Args: map[string]any{"file_path": path, "content": content}}
	}
	return fakemodel.ToolCall{Name: "exec_command", Args: map[string]any{
		"cmd": fmt.Sprintf("mkdir -p %s && cat > %s <<'HORIZON_EOF'\n%sHORIZON_EOF", filepath.Dir(path), path, content)}}
}

// applierToolsScript is the tools plan of the planned runs with the
// worker's writes in the worker's applier: the lead plans, every worker
// writes its tool and test, the auditor accepts.
func applierToolsScript(t *testing.T, worker string) *fakemodel.Script {
	rules := []fakemodel.Rule{{Name: "lead", When: []string{"# Plan"}, Replies: []fakemodel.Reply{{Text: toolsLeadPlan(t)}}}}
	for _, tl := range allTools() {
		task := "Feature " + tl.id + ":"
		rules = append(rules,
			fakemodel.Rule{Name: "worker-" + tl.id, When: []string{"# Task (attempt 1)", task}, Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{writeFile(worker, "lib/"+tl.name+".sh", tl.code), writeFile(worker, "tests/test_"+tl.name+".sh", tl.test)}},
				{Text: report("added lib/" + tl.name + ".sh and its test")},
			}},
			fakemodel.Rule{Name: "auditor-" + tl.id, When: []string{"# Audit (attempt 1)", task}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		)
	}
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"the scripted model has no rule for this request (fakemodel fallback)\"}}\n```"}
	s := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, s.Validate())
	return s
}

// A planned run whose worker (and lead) is one applier and whose auditor
// is the other completes with one commit per feature; each role's
// requests went to its applier's API, and the attempts name the applier.
func TestAppliersPlannedRun(t *testing.T) {
	needsE2E(t)
	for _, c := range []struct{ name, worker, auditor string }{
		{"claude worker, codex auditor", claudeRoute, codexRoute},
		{"codex worker, claude auditor", codexRoute, claudeRoute},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := applierWorld(t, applierToolsScript(t, c.worker), leaderboardFor(c.worker, c.auditor), "HORIZON_RUN_PLANNED=true")
			repo, head := toolsRepo(t)
			if c.worker == claudeRoute {
				checkAppliersShown(t, w, repo)
			}
			out, code := w.run(context.Background(), "start", "--repo", repo, toolsGoal)
			require.Equal(t, 0, code, out)
			id := runIDRe.FindString(out)
			require.NotEmpty(t, id, out)

			_, features := featureCommits(t, repo, id)
			require.Equal(t, []string{"f1", "f2", "f3", "f4"}, features)
			require.Equal(t, head, git(t, repo, "rev-parse", "main"))
			s := w.status(id)
			require.Equal(t, horizon.StatusCompleted, s.Status)

			protocol := map[string]string{claudeRoute: fakemodel.ProtocolAnthropic, codexRoute: fakemodel.ProtocolResponses}
			for _, r := range w.model.Requests() {
				switch {
				case strings.HasPrefix(r.Rule, "worker-"), r.Rule == "lead":
					require.Equal(t, protocol[c.worker], r.Protocol, "%s went to the wrong applier", r.Rule)
				case strings.HasPrefix(r.Rule, "auditor-"):
					require.Equal(t, protocol[c.auditor], r.Protocol, "%s went to the wrong applier", r.Rule)
				default:
					t.Fatalf("a request no rule answered: %+v", r)
				}
			}
			for id, f := range planFeatures(s.Plan) {
				for _, a := range f.Attempts {
					require.Equal(t, c.worker, a.Model, "feature %s", id)
					require.Equal(t, strings.SplitN(c.worker, "/", 2)[0], a.Applier, "feature %s", id)
				}
			}
			require.Greater(t, s.Usage.Cost, 0.0, "the appliers' sessions cost nothing")
		})
	}
}

// applierPIDs are the running processes of an applier CLI (name) whose
// working directory is under dir.
func applierPIDs(name, dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), name) {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			out = append(out, pid)
		}
	}
	return out
}

// A SIGKILL of the daemon while an applier's worker session waits on the
// model takes the CLI down with it; after `horizon resume` the retry
// continues the same session (same ID, the continuation sent in the same
// conversation) and the change lands once.
func TestApplierCrashAndResume(t *testing.T) {
	needsE2E(t)
	for _, c := range []struct{ name, worker, auditor, bin string }{
		{"claude-code", claudeRoute, codexRoute, "claude"},
		{"codex", codexRoute, claudeRoute, "codex"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := allTools()[0]
			script := &fakemodel.Script{Rules: []fakemodel.Rule{
				{Name: "continue", When: []string{"You were interrupted"}, Replies: []fakemodel.Reply{{Text: report("added lib/upper.sh and its test")}}},
				{Name: "worker", When: []string{"# Task (attempt 1"}, Times: 1, Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{writeFile(c.worker, "lib/"+tl.name+".sh", tl.code), writeFile(c.worker, "tests/test_"+tl.name+".sh", tl.test)}},
					{Hold: "crash", Text: "never sent"},
				}},
				{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
			}}
			w := applierWorld(t, script, leaderboardFor(c.worker, c.auditor))
			repo, head := toolsRepo(t)
			out, code := w.stdout("start", "--detach", "--repo", repo, "Add lib/upper.sh, which prints its argument in upper case, with a test under tests/.")
			require.Equal(t, 0, code, out)
			id := strings.TrimSpace(out)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			held, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Held })
			require.NoError(t, err)
			before := w.waitStatus(id, time.Minute, func(s horizon.RunState) bool {
				return len(s.Attempts) == 1 && s.Attempts[0].WorkerSession != ""
			})
			session := before.Attempts[0].WorkerSession
			require.NotEmpty(t, applierPIDs(c.bin, w.home), "no %s process while its session runs", c.bin)

			pid := w.daemonPID()
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			require.Eventually(t, func() bool { return !alive(pid) }, 30*time.Second, 50*time.Millisecond)
			require.Eventually(t, func() bool { return len(applierPIDs(c.bin, w.home)) == 0 }, 15*time.Second, 100*time.Millisecond,
				"%s outlived the daemon", c.bin)

			out, code = w.run(ctx, "resume")
			require.Equal(t, 0, code, out)
			require.Contains(t, out, id)
			final := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
			require.Equal(t, horizon.StatusCompleted, final.Status, "%+v", final)
			require.Equal(t, session, final.Attempts[0].WorkerSession, "the crashed session was not continued")
			require.True(t, final.Attempts[0].Resumed)

			var cont, worker0 int
			for _, r := range w.model.Requests() {
				if r.Rule == "continue" {
					cont++
					require.Equal(t, held.Session, r.Session, "the continuation went to another session")
				}
				if r.Rule == "worker" && r.Step == 0 {
					worker0++
				}
			}
			require.Equal(t, 1, cont)
			require.Equal(t, 1, worker0, "a second session was started for the attempt")
			commits := strings.Fields(git(t, repo, "rev-list", "main..horizon/"+id))
			require.Len(t, commits, 1, "the change must land exactly once")
			require.Equal(t, head, git(t, repo, "rev-parse", "main"))
		})
	}
}

// A bounded card gets two attempts on the local OpenCode model, which
// fails both with the same failing test; the ladder climbs to T3, which
// is Claude Code, and Claude Code fixes it.
func TestLadderClimbsFromLocalToClaudeCode(t *testing.T) {
	needsE2E(t)
	const fixed = "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "local-noop", When: []string{"# Task (attempt "}, Unless: []string{"# Task (attempt 3 of"},
			Replies: []fakemodel.Reply{{Text: report("looked at it")}}},
		{Name: "claude-fix", When: []string{"# Task (attempt 3 of"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "Bash", Args: map[string]any{"command": "printf '%s' '" + fixed + "' > add.sh"}}}},
			{Text: report("add.sh subtracted; it now adds")},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 3)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}}
	local := `{"name": "fake-local", "routes": ["fake/fake-local"], "roles": {"build": {"rank": 2}}, "capabilities": {"contextLength": 32000, "toolCall": true, "cost": "local"}}`
	w := applierWorld(t, script, leaderboardFor(claudeRoute, claudeRoute, local))
	w.configureModels("fake-local")
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--max-attempts", "4", goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status, "%+v", s)
	require.Len(t, s.Attempts, 3)
	require.Equal(t, []string{"T1", "T1", "T3"}, []string{s.Attempts[0].Tier, s.Attempts[1].Tier, s.Attempts[2].Tier})
	require.Equal(t, "fake/fake-local", s.Attempts[0].Model)
	require.Equal(t, "opencode", s.Attempts[0].Applier)
	require.Equal(t, claudeRoute, s.Attempts[2].Model)
	require.Equal(t, "claude-code", s.Attempts[2].Applier)
	for _, r := range w.model.Requests() {
		switch r.Rule {
		case "local-noop":
			require.Equal(t, fakemodel.ProtocolChat, r.Protocol)
		case "claude-fix", "auditor":
			require.Equal(t, fakemodel.ProtocolAnthropic, r.Protocol)
		}
	}
	require.Contains(t, git(t, repo, "show", "horizon/"+id+":add.sh"), "$1 + $2")
}

// With today's spend at the day ceiling, a run whose worker is Claude
// Code pauses before the applier's first call; raised, it goes on, and
// what Claude Code reported it cost lands in the day's ledger.
func TestDayCeilingPausesBeforeApplier(t *testing.T) {
	needsE2E(t)
	tl := allTools()[0]
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "worker", When: []string{"# Task (attempt 1"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{writeFile(claudeRoute, "lib/"+tl.name+".sh", tl.code), writeFile(claudeRoute, "tests/test_"+tl.name+".sh", tl.test)}},
			{Text: report("added lib/upper.sh and its test")},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}}
	w := applierWorld(t, script, leaderboardFor(claudeRoute, codexRoute), "HORIZON_SPEND_DAY_CEILING=100")
	dir := filepath.Join(w.home, "spend")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	ledger := filepath.Join(dir, time.Now().UTC().Format(time.DateOnly)+".jsonl")
	rec := fmt.Sprintf(`{"key":"run-other/f1/1/worker","run":"run-other","cost":100,"at":%q}`+"\n", time.Now().UTC().Format(time.RFC3339))
	require.NoError(t, os.WriteFile(ledger, []byte(rec), 0o600))
	repo, _ := toolsRepo(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, "Add lib/upper.sh, which prints its argument in upper case, with a test under tests/.")
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	s := w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Phase == horizon.PhasePaused })
	require.Contains(t, s.Reason, "day ceiling", "%+v", s)
	time.Sleep(2 * time.Second) // a window in which a call that ignored the pause would have reached the model
	require.Empty(t, w.model.Requests(), "an applier was called at the day ceiling")

	out, code = w.run(t.Context(), "set-ceiling", "--day", id, "1000")
	require.Equal(t, 0, code, out)
	final := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, "%+v", final)
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	var applierSpend float64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Key  string  `json:"key"`
			Run  string  `json:"run"`
			Cost float64 `json:"cost"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		if r.Run == id {
			applierSpend += r.Cost
		}
	}
	require.Greater(t, applierSpend, 0.0, "the appliers' cost did not reach the day's ledger:\n%s", b)
}

// Outages and refusals get the treatment OpenCode's do: Claude Code's 401
// blocks the run missing_credential with the provider's words, without
// retrying; Codex failing on a 500 makes the run wait visibly (the
// provider named as unreachable) and go on once it answers again.
func TestApplierOutages(t *testing.T) {
	needsE2E(t)
	tl := allTools()[0]
	const goalUpper = "Add lib/upper.sh, which prints its argument in upper case, with a test under tests/."
	t.Run("claude-code 401", func(t *testing.T) {
		script := &fakemodel.Script{Rules: []fakemodel.Rule{{Name: "worker-401", When: []string{"# Task (attempt"},
			Replies: []fakemodel.Reply{{Status: 401, Error: refusedKey}}}}}
		w := applierWorld(t, script, leaderboardFor(claudeRoute, codexRoute))
		repo, _ := toolsRepo(t)
		out, code := w.stdout("start", "--detach", "--repo", repo, goalUpper)
		require.Equal(t, 0, code, out)
		id := strings.TrimSpace(out)
		s := w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusBlocked, s.Status, s.Reason)
		require.NotNil(t, s.Blocker)
		require.Equal(t, horizon.BlockerMissingCredential, s.Blocker.Type)
		require.Contains(t, s.Blocker.Evidence, "401")
		// horizon does not retry a refusal: one session asked. (Claude
		// Code itself asks its key helper again after a 401 and retries
		// within the session.)
		sessions := map[string]bool{}
		for _, r := range w.model.Requests() {
			sessions[r.Session] = true
		}
		require.Len(t, sessions, 1, "a refused key was retried in another session")
	})
	t.Run("codex 500", func(t *testing.T) {
		script := &fakemodel.Script{Rules: []fakemodel.Rule{
			{Name: "worker", When: []string{"# Task (attempt 1"}, Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{writeFile(codexRoute, "lib/"+tl.name+".sh", tl.code), writeFile(codexRoute, "tests/test_"+tl.name+".sh", tl.test)}},
				{Text: report("added lib/upper.sh and its test")},
			}},
			{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		}}
		w := applierWorld(t, script, leaderboardFor(codexRoute, claudeRoute))
		w.model.Fail(500, "upstream overloaded")
		repo, _ := toolsRepo(t)
		out, code := w.stdout("start", "--detach", "--repo", repo, goalUpper)
		require.Equal(t, 0, code, out)
		id := strings.TrimSpace(out)
		s := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Outage != nil || s.Status.Terminal() })
		require.False(t, s.Status.Terminal(), "the run ended on an outage: %s", s.Reason)
		require.Equal(t, "model provider unreachable", s.Outage.On, "%+v", s.Outage)
		w.model.Recover()
		final := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
		require.Nil(t, final.Outage)
	})
}

// checkAppliersShown: `horizon models` names each role's applier with its
// version and says why each CLI is connected; `horizon doctor` has a line
// for each.
func checkAppliersShown(t *testing.T, w *world, repo string) {
	t.Helper()
	out, code := w.run(t.Context(), "models", "--repo", repo)
	require.Equal(t, 0, code, out)
	t.Logf("horizon models:\n%s", out)
	require.Regexp(t, `(?m)^claude-code +connected: key in \$ANTHROPIC_API_KEY`, out)
	require.Regexp(t, `(?m)^codex +connected: config.toml provider "fake" with its key in \$FAKE_KEY`, out)
	require.Regexp(t, `(?m)^build +`+claudeRoute+` +claude-code 2\.1\.328`, out)
	require.Regexp(t, `(?m)^analyze +`+codexRoute+` +codex codex-cli 0\.169\.0`, out)
	out, code = w.run(t.Context(), "doctor", "--repo", repo, "--json")
	require.Equal(t, 0, code, out)
	var checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &checks), out)
	seen := map[string]string{}
	for _, c := range checks {
		seen[c.Name] = c.Detail
	}
	require.Contains(t, seen["claude-code"], "connected: key in $ANTHROPIC_API_KEY")
	require.Contains(t, seen["codex"], "codex-cli 0.169.0, connected")
}

// The advisor's watchdog on a Claude Code worker: it reviews the session
// from its event stream (the session log), and its blocker, true in the
// lane, reaches the worker with its next turn: the worker had reported,
// the note continues the same session, and the turn that answers it fixes
// add.sh. The advice record says the note woke the worker.
func TestAdvisorWatchesAnApplierWorker(t *testing.T) {
	needsE2E(t)
	const fixed = "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"
	worker, blocker := "# Task (attempt 1 of", "[horizon advisor · blocker"
	review1 := adviceReply(adviceNote("blocker", "add.sh subtracts: the goal wants the sum, use + instead of -", evidence("add.sh", 3, "`echo $(( $1 - $2 ))`")))
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{review1}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "worker-answers", When: []string{worker, blocker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "Bash", Args: map[string]any{"command": "printf '%s' '" + fixed + "' > add.sh"}}}},
			{Text: report("fixed the operator as the advisor said")},
		}},
		{Name: "worker", When: []string{worker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "Read", Args: map[string]any{"file_path": "add.sh"}}}},
			{Hold: "worker-step-2", Text: "Done without advice.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"nothing changed\"}\n```"},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}}
	w := applierWorld(t, script, leaderboardFor(claudeRoute, codexRoute),
		"HORIZON_ADVISOR_ENABLED=true",
		"HORIZON_ADVISOR_WATCHDOG_MODEL="+demo.Model,
		"HORIZON_ADVISOR_REVIEW_MODE=step",
		"HORIZON_ADVISOR_REVIEW_INTERVAL=1",
		"HORIZON_ADVISOR_IMMUNE_TURNS=0",
		"HORIZON_ADVISOR_TIMEOUT=60s",
	)
	repo, _ := fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)

	w.adviceFile(id, 3*time.Minute, "**r1.1** delivered · blocker")
	w.model.Release("worker-step-2")
	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.Len(t, s.Attempts, 1)
	var answered []fakemodel.Request
	for _, r := range w.model.Requests() {
		if r.Rule == "worker-answers" {
			answered = append(answered, r)
		}
	}
	require.NotEmpty(t, answered, "the blocker never reached the worker")
	require.Equal(t, fakemodel.ProtocolAnthropic, answered[0].Protocol)
	require.Equal(t, s.Attempts[0].WorkerSession, answered[0].Session, "the note started another session instead of the worker's next turn")
	require.Contains(t, git(t, repo, "show", "horizon/"+id+":add.sh"), "$1 + $2")
	w.adviceFile(id, 10*time.Second, "woke the worker")
}
