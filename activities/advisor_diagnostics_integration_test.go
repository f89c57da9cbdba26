package activities

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/fakemodel"
)

// moduleDir is the module's root, above the test's directory.
func moduleDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the test directory")
		dir = parent
	}
}

// needTool finds a binary the test drives: $env, then <module>/bin/name
// (where `make test-tools` installs it), then PATH. Missing, the test is
// skipped on a developer's machine and fails under CI=true, where a
// missing tool must fail the run.
func needTool(t *testing.T, env, name, install string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs " + name + " (skipped with -short)")
	}
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p := filepath.Join(moduleDir(t), "bin", name); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	missing(t, name+" not found: set $"+env+", put it on PATH or "+install)
	return ""
}

// missing skips the test for want of a tool, or fails it under CI=true.
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// The diagnostics on a real OpenCode with a real language server (gopls,
// configured under the config's `lsp` key): the worker's edit breaks
// calc/add.go, OpenCode's gopls reports it in the edit's part, and the
// advisor's review brief, as the advisor's model receives it, names the
// error at its file:line:col.
func TestAdvisorReviewCarriesDiagnostics(t *testing.T) {
	gopls := needTool(t, "HORIZON_GOPLS_BIN", "gopls", "run `make test-tools`")
	bin, err := agent.FindOpenCode(moduleDir(t))
	if err != nil {
		missing(t, err.Error())
	}

	const model = "fake/fake-coder"
	review := "Review 1 of the worker's session"
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		// First: the brief quotes the worker's prompt.
		{Name: "advisor", When: []string{review}, Replies: []fakemodel.Reply{
			{Text: "Checked.\n\n```horizon-advice\n{\"notes\": []}\n```"},
		}},
		{Name: "advisor-rest", When: []string{"of the worker's session"}, Replies: []fakemodel.Reply{
			{Text: "```horizon-advice\n{\"notes\": []}\n```"},
		}},
		{Name: "worker", When: []string{"DIAG-TASK"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "edit", Args: map[string]any{
				"filePath": "{{workdir}}/calc/add.go", "oldString": "return a + b", "newString": "return a + c"}}}},
			{Text: "Edited.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"edited add.go\"}\n```"},
		}},
	}}
	fake := fakemodel.New(script)
	require.NoError(t, fake.Start("127.0.0.1:0"))
	t.Cleanup(func() { fake.Close() })

	base := t.TempDir()
	home := filepath.Join(base, "home")
	require.NoError(t, agent.SeedConfigDeps(filepath.Join(home, ".config", "opencode")))
	extra := filepath.Join(base, "opencode.json")
	require.NoError(t, fakemodel.WriteOpenCodeConfig(extra, fake.URL(), "fake-coder"))
	// A language server for Go files, as a person configures one.
	var cfg map[string]any
	raw, err := os.ReadFile(extra)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &cfg))
	cfg["lsp"] = map[string]any{"gopls": map[string]any{"command": []string{gopls}, "extensions": []string{".go"}}}
	raw, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(extra, raw, 0o644))

	lane := filepath.Join(base, "lane")
	require.NoError(t, os.MkdirAll(filepath.Join(lane, "calc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lane, "go.mod"), []byte("module example.com/calc\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(lane, "calc", "add.go"), []byte("package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = lane
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// gopls keeps its caches under the scratch home; GOFLAGS and the
	// proxy are the machine's, and the lane needs no module.
	env := append(os.Environ(), fakemodel.OpenCodeEnv(home, "")...)
	env = append(env, "GOTOOLCHAIN=local", "GOPROXY=off")
	srv, err := agent.StartServer(ctx, agent.ServerOptions{
		Bin: bin, ConfigDir: filepath.Join(base, "config"), DBPath: filepath.Join(base, "state", "opencode.db"),
		ExtraConfig: extra, Env: env, LogPath: filepath.Join(base, "state", "opencode.log"),
		PIDFile: filepath.Join(base, "state", "opencode.pids"),
		Logger:  zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = srv.Close()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(base, "state", "opencode.log")); err == nil {
				t.Logf("opencode log tail:\n%s", lastBytes(string(b), 6000))
			}
		}
	})

	in := AdvisorInput{RunID: "run-1", Feature: "f1", Attempt: 1, Lane: lane, BaseCommit: "HEAD", WorkerModel: model, Model: model,
		Brief: "Keep Add adding.", Settings: AdvisorSettings{Enabled: true, ReviewMode: "execution", ReviewInterval: 1,
			MaxToolSteps: 3, MaxNotes: 3, Timeout: time.Minute, RequireEvidence: true}}
	worker := make(chan error, 1)
	go func() {
		_, err := srv.RunSession(ctx, agent.SessionRequest{Directory: lane, Agent: agent.AgentWorker, Model: model,
			Title: SessionTitle(in.RunID, in.Feature, in.Attempt, "worker"), Prompt: "DIAG-TASK: change calc/add.go."}, nil)
		worker <- err
	}()
	old := advisorPoll
	advisorPoll = 100 * time.Millisecond
	t.Cleanup(func() { advisorPoll = old })
	var s testsuite.WorkflowTestSuite
	tenv := s.NewTestActivityEnvironment()
	tenv.SetTestTimeout(4 * time.Minute)
	acts := &Activities{Home: filepath.Join(base, "horizon"), Sessions: srv}
	tenv.RegisterActivity(acts)
	v, err := tenv.ExecuteActivity(acts.AdvisorWatch, in)
	require.NoError(t, err)
	require.NoError(t, <-worker)
	var out AdvisorOutput
	require.NoError(t, v.Get(&out))
	for _, r := range out.Records {
		require.NotEqual(t, "failed", string(r.Verdict), "%+v", r)
	}

	var brief string
	for _, r := range fake.Requests() {
		if r.Rule == "advisor" {
			brief = r.LastUser
		}
	}
	require.NotEmpty(t, brief, "the advisor never reviewed")
	t.Logf("the review's brief:\n%s", brief)
	require.Contains(t, brief, "## Language server diagnostics")
	require.Contains(t, brief, "- calc/add.go:5:13: error: undefined: c")
}
