package consult

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/agent"
)

// fakeBackend stands in for OpenCode's API.
type fakeBackend struct {
	calls    []agent.RunningCall
	findErr  error
	msgs     []agent.ConsultMessage
	answer   string
	usage    agent.Usage
	runErr   error
	requests []agent.SessionRequest
	asked    int // RecentMessages' n
}

func (f *fakeBackend) RunningCalls(_ context.Context, _, tool string) ([]agent.RunningCall, error) {
	if tool != ToolID {
		return nil, errors.New("asked for the wrong tool " + tool)
	}
	return f.calls, f.findErr
}

// running is one running call of the tool in the worker's session.
func running(call, question string) agent.RunningCall {
	in, _ := json.Marshal(map[string]string{"question": question})
	return agent.RunningCall{Session: "ses_worker", CallID: call, Input: in}
}

func (f *fakeBackend) RecentMessages(_ context.Context, _, _ string, n int) ([]agent.ConsultMessage, error) {
	f.asked = n
	return f.msgs, nil
}

func (f *fakeBackend) RunSession(_ context.Context, req agent.SessionRequest, _ func(agent.Progress)) (agent.SessionResult, error) {
	f.requests = append(f.requests, req)
	return agent.SessionResult{SessionID: "ses_advisor", Text: f.answer, Usage: f.usage}, f.runErr
}

// connect serves a's tool over the SDK's in-memory transport and returns a
// connected client session.
func connect(t *testing.T, a *Advisor) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(a, "test").Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "content is %T", res.Content[0])
	return tc.Text
}

func TestConsultAdvisorTool(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	history := []agent.ConsultMessage{
		{Role: "user", Agent: "horizon-worker", Text: "Feature f1: make add.sh add"},
		{Role: "assistant", Agent: "horizon-worker", Text: "I see two ways to fix it.", Tools: []agent.ToolSummary{
			{Tool: "read", Status: "completed", Input: `{"filePath":"add.sh"}`, Output: "echo $(( $1 - $2 ))"},
			{Tool: ToolID, Status: "running", Input: `{"question":"which way?"}`},
		}},
	}
	tests := []struct {
		name      string
		args      map[string]any
		backend   fakeBackend
		model     string // Options.Model; "" resolves
		maxTokens int
		register  bool
		// what the worker's model reads, and what the ledger holds
		wantError   string // substring of a tool error; "" for an answer
		wantCall    string // the call the consult is recorded under
		wantAnswer  string
		wantRuns    int
		wantLedger  int
		wantTrunc   bool
		wantCost    float64
		wantInBrief []string
		notInBrief  []string
	}{
		{
			name:    "answer comes back and is recorded with its cost",
			args:    map[string]any{"question": "Should I fix the operator or rewrite the script?", "context": "the gate runs tests/test_add.sh"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_1", "")}, msgs: history, answer: "Fix the operator on add.sh:2; keep the script.", usage: agent.Usage{Input: 900, Output: 40, Cost: 0.0123}},
			model:   "fake/advisor", maxTokens: 2000, register: true,
			wantAnswer: "Fix the operator on add.sh:2; keep the script.", wantCall: "call_1", wantRuns: 1, wantLedger: 1, wantCost: 0.0123,
			wantInBrief: []string{"Should I fix the operator or rewrite the script?", "the gate runs tests/test_add.sh", "Feature f1: make add.sh add", "I see two ways", "[tool read completed]", "echo $(( $1 - $2 ))", "at most 2000 tokens"},
			notInBrief:  []string{`"which way?"`},
		},
		{
			name:    "an answer over max_tokens is cut and marked",
			args:    map[string]any{"question": "Explain everything"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_2", "")}, answer: strings.Repeat("word ", 100), usage: agent.Usage{Cost: 0.5}},
			model:   "fake/advisor", maxTokens: 10, register: true,
			wantAnswer: strings.Repeat("word ", 8) + "\n…[answer cut at advisor.consult.max_tokens = 10]", wantCall: "call_2", wantRuns: 1, wantLedger: 1, wantTrunc: true, wantCost: 0.5,
		},
		{
			name:      "no model configured: the resolver picks it",
			args:      map[string]any{"question": "ok?"},
			backend:   fakeBackend{calls: []agent.RunningCall{running("call_3", "")}, answer: "yes"},
			maxTokens: 100, register: true,
			wantAnswer: "yes", wantCall: "call_3", wantRuns: 1, wantLedger: 1,
		},
		{
			name:    "an empty question is refused before any model call",
			args:    map[string]any{"question": "   "},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_4", "")}, answer: "unused"},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantError: "question is empty",
		},
		{
			name:    "a lane no attempt registered is refused",
			args:    map[string]any{"question": "ok?"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_5", "")}, answer: "unused"},
			model:   "fake/advisor", maxTokens: 100,
			wantError: "lane not registered for consults",
		},
		{
			name:    "no session runs the call",
			args:    map[string]any{"question": "ok?"},
			backend: fakeBackend{},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantError: "no session in",
		},
		{
			name:    "OpenCode's API unreachable",
			args:    map[string]any{"question": "ok?"},
			backend: fakeBackend{findErr: errors.New("opencode GET /session/status: connection refused")},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantError: "connection refused",
		},
		{
			name:    "parallel calls: the one asking this question is the caller",
			args:    map[string]any{"question": "Which test covers it?"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_7", "Is the operator wrong?"), running("call_8", "Which test covers it?")}, answer: "tests/test_add.sh"},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantAnswer: "tests/test_add.sh", wantCall: "call_8", wantRuns: 1, wantLedger: 1,
		},
		{
			name:    "parallel calls none of which asks this question",
			args:    map[string]any{"question": "Something else?"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_7", "Is the operator wrong?"), running("call_8", "Which test covers it?")}, answer: "unused"},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantError: "none asks this question",
		},
		{
			name:    "a failed consult model is a tool error, recorded with its cost",
			args:    map[string]any{"question": "ok?"},
			backend: fakeBackend{calls: []agent.RunningCall{running("call_6", "")}, runErr: errors.New("provider down"), usage: agent.Usage{Cost: 0.01}},
			model:   "fake/advisor", maxTokens: 100, register: true,
			wantError: "provider down", wantCall: "call_6", wantRuns: 1, wantLedger: 1, wantCost: 0.01,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home, lane := t.TempDir(), t.TempDir()
			ledger := LedgerPath(filepath.Join(home, "runs", "run-1"), "f1", 2)
			if tc.register {
				require.NoError(t, Register(home, Registration{RunID: "run-1", Feature: "f1", Attempt: 2, Lane: lane, Ledger: ledger}))
			}
			b := tc.backend
			a, err := NewAdvisor(&b, Options{
				Home: home, Dir: lane, Model: tc.model, ContextMessages: 6, MaxTokens: tc.maxTokens,
				ResolveModel: func(context.Context) (string, error) { return "fake/best-lead", nil },
				Now:          func() time.Time { return at },
			})
			require.NoError(t, err)
			cs := connect(t, a)

			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: tc.args})
			require.NoError(t, err, "tool failures are results the model reads, not protocol errors")
			got := text(t, res)
			if tc.wantError != "" {
				require.True(t, res.IsError)
				require.Contains(t, got, tc.wantError)
			} else {
				require.False(t, res.IsError, got)
				require.Equal(t, tc.wantAnswer, got)
			}
			require.Len(t, b.requests, tc.wantRuns)
			recs, err := Read(ledger)
			require.NoError(t, err)
			require.Len(t, recs, tc.wantLedger)
			if tc.wantRuns > 0 {
				req := b.requests[0]
				require.Equal(t, agent.AgentConsultant, req.Agent, "the consult runs read-only")
				require.Equal(t, lane, req.Directory)
				require.Equal(t, 6, b.asked)
				want := tc.model
				if want == "" {
					want = "fake/best-lead"
				}
				require.Equal(t, want, req.Model)
				for _, s := range tc.wantInBrief {
					require.Contains(t, req.Prompt, s)
				}
				for _, s := range tc.notInBrief {
					require.NotContains(t, req.Prompt, s)
				}
			}
			if tc.wantLedger > 0 {
				c := recs[0]
				require.Equal(t, tc.wantCall, c.ID)
				require.Equal(t, "ses_worker", c.Session)
				require.Equal(t, "ses_advisor", c.AdvisorSession)
				require.Equal(t, tc.wantCost, c.Usage.Cost)
				require.Equal(t, tc.wantTrunc, c.Truncated)
				require.Equal(t, at, c.At)
				if tc.wantError == "" {
					require.Equal(t, tc.wantAnswer, c.Answer)
				} else {
					require.Contains(t, c.Error, tc.wantError)
				}
			}
		})
	}
}

// The tool is listed with its input schema: question required, context
// optional.
func TestConsultAdvisorToolListed(t *testing.T) {
	a, err := NewAdvisor(&fakeBackend{}, Options{Home: t.TempDir(), Dir: t.TempDir(), Model: "fake/m", MaxTokens: 10})
	require.NoError(t, err)
	cs := connect(t, a)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	tool := tools.Tools[0]
	require.Equal(t, ToolName, tool.Name)
	schema, ok := tool.InputSchema.(map[string]any)
	require.True(t, ok, "input schema is %T", tool.InputSchema)
	require.Equal(t, []any{"question"}, schema["required"])
	props := schema["properties"].(map[string]any)
	require.Contains(t, props, "question")
	require.Contains(t, props, "context")
}

func TestNewAdvisorRefusesBadOptions(t *testing.T) {
	ok := Options{Home: "/h", Dir: "/lane", Model: "fake/m", MaxTokens: 10}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no home", func(o *Options) { o.Home = "" }, "home"},
		{"no model", func(o *Options) { o.Model = "" }, "advisor.consult_model"},
		{"zero max tokens", func(o *Options) { o.MaxTokens = 0 }, "advisor.consult.max_tokens"},
		{"negative context", func(o *Options) { o.ContextMessages = -1 }, "advisor.consult.include_context_messages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			_, err := NewAdvisor(&fakeBackend{}, o)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
