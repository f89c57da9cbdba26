package activities

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

// fakeResearcher is an OpenCode whose researcher session answers text and
// whose parts are the tool calls it made.
type fakeResearcher struct {
	mu    sync.Mutex
	text  string
	parts []agent.Part
	reqs  []agent.SessionRequest
}

func (f *fakeResearcher) RunSession(_ context.Context, req agent.SessionRequest, _ func(agent.Progress)) (agent.SessionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	return agent.SessionResult{SessionID: "ses_r", Text: f.text, Usage: agent.Usage{Input: 50, Output: 5, Cost: 0.002}}, nil
}
func (f *fakeResearcher) ValidateModel(context.Context, string, string) error { return nil }
func (f *fakeResearcher) Models(context.Context, string) ([]string, error)    { return nil, nil }
func (f *fakeResearcher) Parts(_ context.Context, _, sid string) ([]agent.Part, error) {
	if sid != "ses_r" {
		return nil, nil
	}
	return f.parts, nil
}

func toolPart(tool, status, output string, input any) agent.Part {
	b, _ := json.Marshal(input)
	return agent.Part{ID: "p" + tool + output, Role: "assistant", Type: "tool", Tool: tool, Status: status, Input: b, Output: output}
}

func runResearch(t *testing.T, f *fakeResearcher, home string, in ResearchInput) ResearchOutput {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Home: home, Sessions: f}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.Research, in)
	require.NoError(t, err)
	var out ResearchOutput
	require.NoError(t, v.Get(&out))
	return out
}

// The researcher's session runs on the research agent; the pages it
// fetched, and the ones it could not, are its sources, in the output and
// in runs/<run>/research/<feature>.md; a retry writes the same file.
func TestResearchRecordsSourcesFetchedAndFailed(t *testing.T) {
	home, lane := t.TempDir(), t.TempDir()
	f := &fakeResearcher{
		text: "strconv.Atoi rejects a leading plus before Go 1.x (https://pkg.go.dev/strconv).\n\nSources: calc/parse.go:3, https://pkg.go.dev/strconv",
		parts: []agent.Part{
			{ID: "u1", Role: "user", Type: "text", Text: "the brief"},
			toolPart("read", "completed", "package calc", map[string]string{"filePath": filepath.Join(lane, "calc", "parse.go")}),
			toolPart("webfetch", "error", "Unable to connect. Is the computer able to access the url?", map[string]string{"url": "https://go.dev/doc/strconv", "format": "markdown"}),
			toolPart("webfetch", "completed", "# strconv\n\nAtoi is ParseInt(s, 10, 0)", map[string]string{"url": "https://pkg.go.dev/strconv"}),
			toolPart("webfetch", "error", "again", map[string]string{"url": "https://go.dev/doc/strconv"}),
			toolPart("grep", "completed", "x", map[string]string{"pattern": "Atoi"}),
		},
	}
	in := ResearchInput{RunID: "run-1", Feature: "f2", Attempt: 5, Task: "Feature f2: parse numbers", Lane: lane, BaseCommit: "HEAD", Model: "fake/research",
		Prev: &horizon.Attempt{N: 4, Outcome: horizon.OutcomeGateFailed, Gate: &horizon.GateRun{Command: "go test ./...", Verdict: "fail", ExitCode: 1, Tail: "FAIL TestParsePlus"}}}
	out := runResearch(t, f, home, in)

	require.Len(t, f.reqs, 1)
	req := f.reqs[0]
	require.Equal(t, agent.AgentResearcher, req.Agent)
	require.Equal(t, "fake/research", req.Model)
	require.Equal(t, lane, req.Directory)
	require.Contains(t, req.Prompt, "Feature f2: parse numbers")
	require.Contains(t, req.Prompt, "FAIL TestParsePlus", "the last attempt's evidence is what to research")
	require.Contains(t, req.Prompt, "webfetch")

	require.Equal(t, "runs/run-1/research/f2.md", out.Path)
	require.Equal(t, []horizon.Source{
		{URL: "https://go.dev/doc/strconv", Error: "Unable to connect. Is the computer able to access the url?"},
		{URL: "https://pkg.go.dev/strconv", OK: true},
	}, out.Sources, "each URL once, in the order first asked; a failed fetch is a source with its error")
	require.Equal(t, f.text, out.Text)
	require.Equal(t, 0.002, out.Usage.Cost)

	b, err := os.ReadFile(filepath.Join(home, "runs", "run-1", "research", "f2.md"))
	require.NoError(t, err)
	md := string(b)
	require.Contains(t, md, "strconv.Atoi rejects a leading plus")
	require.Contains(t, md, "- https://pkg.go.dev/strconv (fetched)\n")
	require.Contains(t, md, "- https://go.dev/doc/strconv (failed: Unable to connect. Is the computer able to access the url?)\n")
	require.Contains(t, md, "## Files read\n\n- calc/parse.go\n")
	require.FileExists(t, filepath.Join(home, "runs", "run-1", "transcripts", "f2-attempt-5-research.md"))

	// A retry (the same session, continued) writes the same file.
	again := runResearch(t, f, home, in)
	require.Equal(t, out, again)
	b2, err := os.ReadFile(filepath.Join(home, "runs", "run-1", "research", "f2.md"))
	require.NoError(t, err)
	require.Equal(t, md, string(b2))
}

// Long notes are cut for the brief, which then names the file; the file
// keeps them whole. A session runtime without parts lists no sources and
// says so in the file.
func TestResearchBoundsTheNotes(t *testing.T) {
	home, lane := t.TempDir(), t.TempDir()
	long := strings.Repeat("a fact with its source. ", 200)
	out := runResearch(t, &fakeResearcher{text: long}, home, ResearchInput{RunID: "run-2", Attempt: 3, Lane: lane, Model: "m"})
	require.Equal(t, "runs/run-2/research/f1.md", out.Path, "a one-feature run's feature is f1")
	require.LessOrEqual(t, len(out.Text), horizon.MaxResearchText)
	require.Contains(t, out.Text, "the whole notes are in runs/run-2/research/f1.md")
	b, err := os.ReadFile(filepath.Join(home, "runs", "run-2", "research", "f1.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), strings.TrimSpace(long))
	require.Contains(t, string(b), "- no web page was fetched\n")
}

func TestResearchWithoutParts(t *testing.T) {
	home, lane := t.TempDir(), t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Home: home, Sessions: &fakeWorker{reviews: []string{"notes"}}}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.Research, ResearchInput{RunID: "run-3", Feature: "f1", Attempt: 3, Lane: lane, Model: "m"})
	require.NoError(t, err)
	var out ResearchOutput
	require.NoError(t, v.Get(&out))
	require.Empty(t, out.Sources)
	b, err := os.ReadFile(filepath.Join(home, "runs", "run-3", "research", "f1.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), "sources are not listed")
}
