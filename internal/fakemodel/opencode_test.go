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
)

func TestWriteOpenCodeConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "opencode.json")
	require.NoError(t, WriteOpenCodeConfig(path, "http://127.0.0.1:1234/v1", "fake-coder", "fake-reader"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg struct {
		Schema   string `json:"$schema"`
		Provider map[string]struct {
			NPM     string `json:"npm"`
			Options struct {
				BaseURL string `json:"baseURL"`
				APIKey  string `json:"apiKey"`
			} `json:"options"`
			Models map[string]struct {
				ToolCall bool `json:"tool_call"`
				Limit    struct {
					Context int `json:"context"`
					Output  int `json:"output"`
				} `json:"limit"`
			} `json:"models"`
		} `json:"provider"`
		Model      string `json:"model"`
		SmallModel string `json:"small_model"`
	}
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, "https://opencode.ai/config.json", cfg.Schema)
	p := cfg.Provider["fake"]
	require.Equal(t, "@ai-sdk/openai-compatible", p.NPM)
	require.Equal(t, "http://127.0.0.1:1234/v1", p.Options.BaseURL)
	require.NotEmpty(t, p.Options.APIKey)
	require.Len(t, p.Models, 2)
	require.True(t, p.Models["fake-reader"].ToolCall)
	require.Equal(t, 128000, p.Models["fake-coder"].Limit.Context)
	require.Equal(t, "fake/fake-coder", cfg.Model)
	require.Equal(t, "fake/fake-coder", cfg.SmallModel)

	require.NoError(t, WriteOpenCodeConfig(path, "http://x/v1"))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"fake/`+DefaultModel+`"`)
}

// findOpenCode looks for the opencode binary: $HORIZON_OPENCODE_BIN, then
// PATH, then node_modules/.bin/opencode at the module root.
func findOpenCode(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HORIZON_OPENCODE_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("HORIZON_OPENCODE_BIN=%s: %v", p, err)
		}
		return p
	}
	if p, err := exec.LookPath("opencode"); err == nil {
		return p
	}
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "node_modules", ".bin", "opencode")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Skip("opencode binary not found: set HORIZON_OPENCODE_BIN, put opencode on PATH, or run `npm install` at the module root")
	return ""
}

// event is one line of `opencode run --format json`.
type event struct {
	Type string `json:"type"`
	Part struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string         `json:"status"`
			Input  map[string]any `json:"input"`
			Output string         `json:"output"`
			Error  string         `json:"error"`
		} `json:"state"`
	} `json:"part"`
}

// runOpenCode runs the real `opencode run` in repo against srv, isolated
// from the machine's own OpenCode configuration and data.
func runOpenCode(t *testing.T, srv *Server, repo, prompt string) []event {
	t.Helper()
	bin := findOpenCode(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	scratch := t.TempDir()
	cfg := filepath.Join(scratch, "opencode.json")
	require.NoError(t, WriteOpenCodeConfig(cfg, srv.URL()))

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--format", "json", "-m", ProviderID+"/"+DefaultModel, prompt)
	cmd.Dir = repo
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENCODE_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, OpenCodeEnv(filepath.Join(scratch, "home"), repo)...), "OPENCODE_CONFIG="+cfg)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "opencode run: %v\nstdout:\n%s\nstderr:\n%s", errors.Join(err, ctx.Err()), stdout.String(), stderr.String())

	var events []event
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		events = append(events, e)
	}
	require.NoError(t, sc.Err())
	return events
}

func gitRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	out, err := exec.Command("git", "init", "-q", repo).CombinedOutput()
	require.NoError(t, err, string(out))
	// Resolve symlinks (e.g. a /tmp symlink) so paths compare with what
	// OpenCode reports.
	repo, err = filepath.EvalSymlinks(repo)
	require.NoError(t, err)
	return repo
}

func toolEvents(events []event) []event {
	var out []event
	for _, e := range events {
		if e.Type == "tool_use" {
			out = append(out, e)
		}
	}
	return out
}

func lastText(events []event) string {
	text := ""
	for _, e := range events {
		if e.Type == "text" {
			text = e.Part.Text
		}
	}
	return text
}

const report = "Done.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"wrote hello.txt\"}\n```\n"

// TestOpenCodeRun drives the real OpenCode through one write and a final
// report.
func TestOpenCodeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real opencode binary")
	}
	srv := New(&Script{
		Rules: []Rule{{
			Name:  "write-hello",
			When:  []string{"Create hello.txt"},
			Times: 1,
			Replies: []Reply{
				{ToolCalls: []ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/hello.txt", "content": "hello from the fake model\n"}}}},
				{Text: report},
			},
		}},
		Fallback: &Reply{Text: "Hello file creation"},
	})
	start(t, srv)
	repo := gitRepo(t)

	events := runOpenCode(t, srv, repo, "Create hello.txt with a greeting")

	data, err := os.ReadFile(filepath.Join(repo, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from the fake model\n", string(data))
	tools := toolEvents(events)
	require.Len(t, tools, 1)
	require.Equal(t, "write", tools[0].Part.Tool)
	require.Equal(t, "completed", tools[0].Part.State.Status)
	require.Contains(t, lastText(events), "```horizon-report\n")
	require.Equal(t, report, lastText(events))

	// The conversation took steps 0 and 1 of the rule; a title request, if
	// OpenCode made one, got the fallback and left the steps alone.
	var steps []int
	titles := 0
	for _, r := range srv.Requests() {
		switch {
		case r.Title:
			titles++
			require.Empty(t, r.Rule, "title requests get the fallback")
		case r.Rule == "write-hello":
			steps = append(steps, r.Step)
			require.Equal(t, repo, r.Workdir)
			require.Contains(t, r.LastUser, "Create hello.txt with a greeting")
			require.True(t, r.Stream)
			require.Equal(t, DefaultModel, r.Model)
		default:
			t.Errorf("unexpected request: %+v", r)
		}
	}
	require.Equal(t, []int{0, 1}, steps)
	require.LessOrEqual(t, titles, 1)
	t.Logf("requests: %+v", srv.Requests())
}

// TestOpenCodeToolArgs pins down what the package doc says about OpenCode's
// tools: relative filePaths for write, read and edit resolve against the
// working directory, edit works on a file the session never read, and bash
// accepts (ignores) a description argument.
func TestOpenCodeToolArgs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real opencode binary")
	}
	srv := New(&Script{Rules: []Rule{{
		Name: "tools",
		When: []string{"Exercise the tools"},
		Replies: []Reply{
			{ToolCalls: []ToolCall{{Name: "write", Args: map[string]any{"filePath": "notes/rel.txt", "content": "one\ntwo\n"}}}},
			{ToolCalls: []ToolCall{{Name: "edit", Args: map[string]any{"filePath": "existing.txt", "oldString": "alpha", "newString": "beta"}}}},
			{ToolCalls: []ToolCall{{Name: "read", Args: map[string]any{"filePath": "notes/rel.txt"}}}},
			{ToolCalls: []ToolCall{{Name: "edit", Args: map[string]any{"filePath": "notes/rel.txt", "oldString": "two", "newString": "three"}}}},
			{ToolCalls: []ToolCall{{Name: "bash", Args: map[string]any{"command": "cp notes/rel.txt {{workdir}}/copied.txt", "description": "Copy the notes"}}}},
			{Text: "All tools ran."},
		},
	}}})
	start(t, srv)
	repo := gitRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "existing.txt"), []byte("alpha\n"), 0o644))

	events := runOpenCode(t, srv, repo, "Exercise the tools")

	tools := toolEvents(events)
	var names []string
	for _, e := range tools {
		names = append(names, e.Part.Tool)
		require.Equal(t, "completed", e.Part.State.Status, "%s %v: %s", e.Part.Tool, e.Part.State.Input, e.Part.State.Error)
	}
	require.Equal(t, []string{"write", "edit", "read", "edit", "bash"}, names)
	for f, want := range map[string]string{
		"notes/rel.txt": "one\nthree\n",
		"copied.txt":    "one\nthree\n",
		"existing.txt":  "beta\n",
	} {
		data, err := os.ReadFile(filepath.Join(repo, f))
		require.NoError(t, err)
		require.Equal(t, want, string(data), f)
	}
	require.Equal(t, "All tools ran.", lastText(events))
}
