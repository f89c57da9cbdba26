package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wait bounds every blocking step of a test; nothing here sleeps.
const wait = 5 * time.Second

type msg = map[string]any

func system(s string) msg { return msg{"role": "system", "content": s} }
func user(s string) msg   { return msg{"role": "user", "content": s} }
func assistant(s string) msg {
	return msg{"role": "assistant", "content": s}
}
func toolResult(id, s string) msg { return msg{"role": "tool", "tool_call_id": id, "content": s} }

type chatOpts struct {
	stream       bool
	includeUsage bool
	model        string
}

func chatBody(t *testing.T, o chatOpts, msgs ...msg) []byte {
	t.Helper()
	if o.model == "" {
		o.model = DefaultModel
	}
	body := map[string]any{"model": o.model, "messages": msgs, "stream": o.stream}
	if o.includeUsage {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	return data
}

// serve runs one request through ServeHTTP in-process.
func serve(t *testing.T, s *Server, o chatOpts, msgs ...msg) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(chatBody(t, o, msgs...)))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// The OpenAI wire format, declared here independently of the server's types
// so a mistake in those is not mirrored by the test.
type sseChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type gotToolCall struct {
	ID, Name, Args string
}

type streamed struct {
	chunks    []sseChunk
	role      string
	text      string
	toolCalls []gotToolCall
	finish    string
	usages    int // chunks carrying usage
	lastUsage [2]int
}

// parseSSE reads an OpenAI chat-completions event stream the way a client
// assembles it, and checks its framing.
func parseSSE(t *testing.T, r io.Reader) streamed {
	t.Helper()
	var out streamed
	sc := bufio.NewScanner(r)
	done := false
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			require.Empty(t, line, "every event ends with a blank line")
			expectBlank = false
			continue
		}
		require.False(t, done, "nothing may follow [DONE], got %q", line)
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, "line %q is not a data line", line)
		expectBlank = true
		if data == "[DONE]" {
			done = true
			continue
		}
		var c sseChunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		require.Equal(t, "chat.completion.chunk", c.Object)
		require.NotEmpty(t, c.ID)
		out.chunks = append(out.chunks, c)
		if c.Usage != nil {
			out.usages++
			out.lastUsage = [2]int{c.Usage.PromptTokens, c.Usage.CompletionTokens}
			require.Equal(t, c.Usage.PromptTokens+c.Usage.CompletionTokens, c.Usage.TotalTokens)
		}
		for _, ch := range c.Choices {
			require.Empty(t, out.finish, "no delta after the finish chunk")
			if ch.Delta.Role != "" {
				out.role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				out.text += *ch.Delta.Content
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == len(out.toolCalls) {
					require.NotEmpty(t, tc.ID, "a tool call's first delta carries its id")
					require.Equal(t, "function", tc.Type)
					out.toolCalls = append(out.toolCalls, gotToolCall{ID: tc.ID})
				}
				require.Less(t, tc.Index, len(out.toolCalls), "tool call index out of order")
				got := &out.toolCalls[tc.Index]
				got.Name += tc.Function.Name
				got.Args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				out.finish = *ch.FinishReason
			}
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, done, "stream ends with data: [DONE]")
	return out
}

func TestStreamText(t *testing.T) {
	long := strings.Repeat("héllo wörld ✓ ", 20) + "\n```horizon-report\n{\"status\":\"satisfied\"}\n```"
	s := New(&Script{Rules: []Rule{{Name: "r", When: []string{"talk"}, Replies: []Reply{{Text: long}}}}})
	rec := serve(t, s, chatOpts{stream: true, includeUsage: true}, system("sys"), user("talk to me"))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))

	got := parseSSE(t, rec.Body)
	require.Equal(t, "assistant", got.role)
	require.Equal(t, long, got.text)
	require.Greater(t, len(got.chunks), 4, "long text is streamed in several deltas")
	require.Empty(t, got.toolCalls)
	require.Equal(t, "stop", got.finish)
	require.Equal(t, 2, got.usages, "usage in the finish chunk and in the include_usage chunk")
	last := got.chunks[len(got.chunks)-1]
	require.Empty(t, last.Choices, "the include_usage chunk has no choices")
	require.NotNil(t, last.Usage)
	require.Positive(t, got.lastUsage[0])
	require.Positive(t, got.lastUsage[1])
	for _, c := range got.chunks {
		require.Equal(t, got.chunks[0].ID, c.ID, "one id per completion")
		require.Equal(t, DefaultModel, c.Model)
	}
}

func TestStreamUsageWithoutIncludeUsage(t *testing.T) {
	s := New(&Script{Fallback: &Reply{Text: "hi", Usage: &Usage{PromptTokens: 7, CompletionTokens: 3}}})
	got := parseSSE(t, serve(t, s, chatOpts{stream: true}, user("x")).Body)
	require.Equal(t, 1, got.usages, "usage rides on the finish chunk anyway")
	require.Equal(t, [2]int{7, 3}, got.lastUsage)
	require.Equal(t, "hi", got.text)
}

func TestStreamToolCalls(t *testing.T) {
	s := New(&Script{Rules: []Rule{{
		Name: "tools",
		When: []string{"do it"},
		Replies: []Reply{{
			Text: "Writing now.",
			ToolCalls: []ToolCall{
				{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/a.txt", "content": "A\n"}},
				{Name: "bash", Args: map[string]any{"command": "ls {{workdir}}", "description": "List", "nested": map[string]any{"paths": []any{"{{workdir}}/x", 3.0}}}},
			},
		}},
	}}})
	sys := "You are opencode.\n<env>\n  Working directory: /tmp/some dir/repo\n  Workspace root folder: /tmp/some dir/repo\n</env>"
	got := parseSSE(t, serve(t, s, chatOpts{stream: true, includeUsage: true}, system(sys), user(`"do it"`)).Body)

	require.Equal(t, "tool_calls", got.finish)
	require.Equal(t, "Writing now.", got.text)
	require.Len(t, got.toolCalls, 2)
	require.NotEqual(t, got.toolCalls[0].ID, got.toolCalls[1].ID)
	require.Equal(t, "write", got.toolCalls[0].Name)
	require.Equal(t, "bash", got.toolCalls[1].Name)
	var write, bash map[string]any
	require.NoError(t, json.Unmarshal([]byte(got.toolCalls[0].Args), &write))
	require.NoError(t, json.Unmarshal([]byte(got.toolCalls[1].Args), &bash))
	require.Equal(t, map[string]any{"filePath": "/tmp/some dir/repo/a.txt", "content": "A\n"}, write)
	require.Equal(t, map[string]any{
		"command": "ls /tmp/some dir/repo", "description": "List",
		"nested": map[string]any{"paths": []any{"/tmp/some dir/repo/x", 3.0}},
	}, bash)

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/tmp/some dir/repo", reqs[0].Workdir)
	// The script itself is not rewritten by the expansion.
	require.Equal(t, "{{workdir}}/a.txt", s.rules[0].Replies[0].ToolCalls[0].Args["filePath"])
}

func TestWorkdirUnknownBecomesDot(t *testing.T) {
	s := New(&Script{Fallback: &Reply{ToolCalls: []ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/go.mod"}}}}})
	got := parseSSE(t, serve(t, s, chatOpts{stream: true}, user("read")).Body)
	require.Len(t, got.toolCalls, 1)
	require.JSONEq(t, `{"filePath": "./go.mod"}`, got.toolCalls[0].Args)
}

func TestNonStreaming(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "text", When: []string{"say"}, Replies: []Reply{{Text: "said"}}},
		{Name: "tool", When: []string{"run"}, Replies: []Reply{{ToolCalls: []ToolCall{{Name: "bash", Args: map[string]any{"command": "true"}}}}}},
	}})
	var text struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	rec := serve(t, s, chatOpts{}, user("say something"))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &text))
	require.Equal(t, "chat.completion", text.Object)
	require.Len(t, text.Choices, 1)
	require.Equal(t, "assistant", text.Choices[0].Message.Role)
	require.Equal(t, "said", *text.Choices[0].Message.Content)
	require.Equal(t, "stop", text.Choices[0].FinishReason)
	require.Positive(t, text.Usage.TotalTokens)

	tool := text
	tool.Choices = nil
	rec = serve(t, s, chatOpts{}, user("run it"))
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tool))
	require.Equal(t, "tool_calls", tool.Choices[0].FinishReason)
	require.Nil(t, tool.Choices[0].Message.Content)
	require.Len(t, tool.Choices[0].Message.ToolCalls, 1)
	call := tool.Choices[0].Message.ToolCalls[0]
	require.NotEmpty(t, call.ID)
	require.Equal(t, "function", call.Type)
	require.Equal(t, "bash", call.Function.Name)
	require.JSONEq(t, `{"command": "true"}`, call.Function.Arguments)

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	require.False(t, reqs[0].Stream)
}

func TestRuleMatching(t *testing.T) {
	script := &Script{
		Rules: []Rule{
			{Name: "both", When: []string{"alpha", "beta"}, Replies: []Reply{{Text: "both"}}},
			{Name: "alpha-not-gamma", When: []string{"alpha"}, Unless: []string{"gamma"}, Replies: []Reply{{Text: "alpha"}}},
			{Name: "system-and-user", When: []string{"You are the auditor", "audit f1"}, Replies: []Reply{{Text: "audit"}}},
			{Name: "case", When: []string{"Delta"}, Replies: []Reply{{Text: "Delta"}}},
		},
		Fallback: &Reply{Text: "fb"},
	}
	tests := []struct {
		name string
		msgs []msg
		want string // rule name, "" for fallback
	}{
		{"every when must occur", []msg{user("alpha and beta")}, "both"},
		{"when across user messages", []msg{user("alpha"), assistant("beta?"), user("beta")}, "both"},
		{"assistant text does not count", []msg{user("alpha gamma"), assistant("beta")}, ""},
		{"tool results do not count", []msg{user("alpha gamma"), assistant(""), toolResult("c1", "beta")}, ""},
		{"first matching rule wins", []msg{user("alpha")}, "alpha-not-gamma"},
		{"unless blocks", []msg{user("alpha gamma")}, ""},
		{"unless looks at system too", []msg{system("gamma"), user("alpha")}, ""},
		{"system and user together", []msg{system("You are the auditor."), user("audit f1 now")}, "system-and-user"},
		{"case-sensitive", []msg{user("delta")}, ""},
		{"case-sensitive match", []msg{user("Delta")}, "case"},
		{"content parts", []msg{{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "alpha"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "beta"}},
			map[string]any{"type": "text", "text": "beta"},
		}}}, "both"},
		{"no match", []msg{user("nothing")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(script)
			rec := serve(t, s, chatOpts{}, tt.msgs...)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			reqs := s.Requests()
			require.Len(t, reqs, 1)
			require.Equal(t, tt.want, reqs[0].Rule)
		})
	}
}

func TestSteps(t *testing.T) {
	s := New(&Script{Rules: []Rule{{
		Name: "steps", When: []string{"go"},
		Replies: []Reply{{Text: "zero"}, {Text: "one"}, {Text: "two"}},
	}}})
	tests := []struct {
		msgs     []msg
		wantStep int
		wantText string
	}{
		{[]msg{system("s"), user("go")}, 0, "zero"},
		{[]msg{user("go"), assistant(""), toolResult("c", "ok")}, 1, "one"},
		{[]msg{user("go"), assistant(""), toolResult("c", "ok"), assistant(""), toolResult("d", "ok")}, 2, "two"},
		{[]msg{user("go"), assistant(""), assistant(""), assistant(""), assistant("")}, 4, "two"}, // the last reply repeats
		{[]msg{user("go"), assistant("a"), assistant("b"), user("again")}, 0, "zero"},             // steps count after the LAST user message
		{[]msg{user("go"), assistant("a"), user("again"), assistant("")}, 1, "one"},
	}
	for i, tt := range tests {
		got := parseSSE(t, serve(t, s, chatOpts{stream: true}, tt.msgs...).Body)
		require.Equal(t, tt.wantText, got.text, "case %d", i)
		r := s.Requests()[i]
		require.Equal(t, tt.wantStep, r.Step, "case %d", i)
		require.Equal(t, "steps", r.Rule)
	}
	require.Equal(t, "again", s.Requests()[5].LastUser)
}

func TestTimesCountsConversations(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "once", When: []string{"task"}, Times: 1, Replies: []Reply{{Text: "first-0"}, {Text: "first-1"}}},
		{Name: "later", When: []string{"task"}, Replies: []Reply{{Text: "later-0"}}},
	}})
	text := func(msgs ...msg) string {
		return parseSSE(t, serve(t, s, chatOpts{stream: true}, msgs...).Body).text
	}
	require.Equal(t, "first-0", text(user("task")))
	// Later steps of the conversation it already serves still come to it.
	require.Equal(t, "first-1", text(user("task"), assistant(""), toolResult("c", "done")))
	// A second conversation is past its Times.
	require.Equal(t, "later-0", text(user("task")))
	require.Equal(t, "later-0", text(user("task")))

	var rules []string
	for _, r := range s.Requests() {
		rules = append(rules, r.Rule)
	}
	require.Equal(t, []string{"once", "once", "later", "later"}, rules)
}

func TestTitleRequestsGetFallback(t *testing.T) {
	title := []msg{
		system(TitleMarker + ". You output ONLY a thread title."),
		user("Generate a title for this conversation:\n"),
		user(`"Create hello.txt please"`),
	}
	s := New(&Script{
		Rules:    []Rule{{Name: "work", When: []string{"Create hello.txt"}, Times: 1, Replies: []Reply{{Text: "working"}}}},
		Fallback: &Reply{Text: "Hello file"},
	})
	require.Equal(t, "Hello file", parseSSE(t, serve(t, s, chatOpts{stream: true}, title...).Body).text)
	// The title request did not use up the rule's one conversation.
	require.Equal(t, "working", parseSSE(t, serve(t, s, chatOpts{stream: true}, system("You are opencode"), user(`"Create hello.txt please"`)).Body).text)
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	require.True(t, reqs[0].Title)
	require.Empty(t, reqs[0].Rule)
	require.False(t, reqs[1].Title)
	require.Equal(t, "work", reqs[1].Rule)

	// A rule can ask for title requests explicitly.
	s = New(&Script{Rules: []Rule{{Name: "title", When: []string{"title generator", "hello.txt"}, Replies: []Reply{{Text: "Scripted title"}}}}})
	require.Equal(t, "Scripted title", parseSSE(t, serve(t, s, chatOpts{stream: true}, title...).Body).text)
}

func TestModelsEndpoint(t *testing.T) {
	s := New(&Script{Models: []string{"fake-reader"}})
	list := func() []string {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		var body struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		require.Equal(t, "list", body.Object)
		var ids []string
		for _, m := range body.Data {
			require.Equal(t, "model", m.Object)
			ids = append(ids, m.ID)
		}
		return ids
	}
	require.Equal(t, []string{"fake-reader"}, list())
	serve(t, s, chatOpts{model: "anything-goes"}, user("hi"))
	serve(t, s, chatOpts{model: "fake-reader"}, user("hi"))
	require.Equal(t, []string{"fake-reader", "anything-goes"}, list())
	require.Equal(t, "anything-goes", s.Requests()[0].Model)

	s = New(nil)
	require.Equal(t, []string{DefaultModel}, list(), "with nothing known, the default model")
}

func TestBadRequests(t *testing.T) {
	s := New(nil)
	tests := []struct {
		method, path, body string
		want               int
	}{
		{http.MethodPost, "/v1/chat/completions", "{not json", http.StatusBadRequest},
		{http.MethodGet, "/v1/chat/completions", "", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/models", "", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/completions", "{}", http.StatusNotFound},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		require.Equal(t, tt.want, rec.Code, "%s %s", tt.method, tt.path)
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
		require.NotEmpty(t, e.Error.Message)
	}
	require.Empty(t, s.Requests())
	// Without the /v1 prefix works too.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/chat/completions", bytes.NewReader(chatBody(t, chatOpts{}, user("x")))))
	require.Equal(t, http.StatusOK, rec.Code)
}

// start runs s on a real loopback port for the duration of the test.
func start(t *testing.T, s *Server) {
	t.Helper()
	require.NoError(t, s.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = s.Close() })
	require.True(t, strings.HasPrefix(s.URL(), "http://127.0.0.1:"), s.URL())
	require.True(t, strings.HasSuffix(s.URL(), "/v1"), s.URL())
}

func post(ctx context.Context, url string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

func TestOverHTTP(t *testing.T) {
	s := New(&Script{Fallback: &Reply{Text: "over the wire"}})
	start(t, s)
	require.Error(t, s.Start("127.0.0.1:0"), "a second Start fails")
	resp, err := post(t.Context(), s.URL(), chatBody(t, chatOpts{stream: true, includeUsage: true}, user("hi")))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "over the wire", parseSSE(t, resp.Body).text)

	mresp, err := http.Get(s.URL() + "/models")
	require.NoError(t, err)
	mresp.Body.Close()
	require.Equal(t, http.StatusOK, mresp.StatusCode)
}

func TestHoldAndRelease(t *testing.T) {
	s := New(&Script{Rules: []Rule{{Name: "held", When: []string{"wait"}, Replies: []Reply{{Text: "released", Hold: "gate"}}}}})
	start(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()

	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := post(ctx, s.URL(), chatBody(t, chatOpts{stream: true}, user("wait for it")))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		done <- result{text: string(body), err: err}
	}()

	r, err := s.WaitForRequest(ctx, func(r Request) bool { return r.Held })
	require.NoError(t, err)
	require.Equal(t, "held", r.Rule)
	require.Equal(t, 1, s.InFlight())
	select {
	case res := <-done:
		t.Fatalf("reply arrived before Release: %+v", res)
	default:
	}

	s.Release("gate")
	select {
	case res := <-done:
		require.NoError(t, res.err)
		require.Equal(t, "released", parseSSE(t, strings.NewReader(res.text)).text)
	case <-ctx.Done():
		t.Fatal("reply did not arrive after Release")
	}

	// Release is sticky: a later request on the same hold is not held.
	got := parseSSE(t, serve(t, s, chatOpts{stream: true}, user("wait again")).Body)
	require.Equal(t, "released", got.text)
}

// serveAsync runs ServeHTTP with a cancellable request context and reports
// when the handler returns.
func serveAsync(t *testing.T, s *Server, msgs ...msg) (cancel func(), done <-chan struct{}) {
	t.Helper()
	ctx, cancelCtx := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(chatBody(t, chatOpts{stream: true}, msgs...)))
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		s.ServeHTTP(httptest.NewRecorder(), req)
	}()
	return cancelCtx, ch
}

func requireDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("%s: handler did not return", what)
	}
}

func TestCancellation(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "hold", When: []string{"hold"}, Replies: []Reply{{Text: "x", Hold: "never"}}},
		{Name: "slow", When: []string{"slow"}, Replies: []Reply{{Text: "x", DelayMs: int(time.Hour / time.Millisecond)}}},
	}})
	for _, prompt := range []string{"hold", "slow"} {
		t.Run(prompt, func(t *testing.T) {
			n := len(s.Requests())
			cancel, done := serveAsync(t, s, user(prompt))
			ctx, stop := context.WithTimeout(t.Context(), wait)
			defer stop()
			_, err := s.WaitForRequest(ctx, func(r Request) bool { return r.Rule == prompt })
			require.NoError(t, err)
			require.Len(t, s.Requests(), n+1)
			cancel()
			requireDone(t, done, prompt)
		})
	}
	require.Zero(t, s.InFlight())
}

func TestClientDisconnectOverHTTP(t *testing.T) {
	s := New(&Script{Fallback: &Reply{Text: "x", Hold: "never"}})
	start(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		resp, err := post(ctx, s.URL(), chatBody(t, chatOpts{stream: true}, user("hi")))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	wctx, stop := context.WithTimeout(t.Context(), wait)
	defer stop()
	_, err := s.WaitForRequest(wctx, nil)
	require.NoError(t, err)
	cancel()
	require.Error(t, <-errc)
	require.Eventually(t, func() bool { return s.InFlight() == 0 }, wait, 5*time.Millisecond, "the held handler lets go when the client disconnects")
}

func TestCloseEndsHeldReplies(t *testing.T) {
	s := New(&Script{Fallback: &Reply{Text: "x", Hold: "never"}})
	_, done := serveAsync(t, s, user("hi"))
	ctx, stop := context.WithTimeout(t.Context(), wait)
	defer stop()
	_, err := s.WaitForRequest(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	requireDone(t, done, "close")
	require.Error(t, s.Start("127.0.0.1:0"), "a closed server does not start")
}

func TestWaitForRequest(t *testing.T) {
	s := New(nil)
	serve(t, s, chatOpts{}, user("first"))
	serve(t, s, chatOpts{}, user("second"))

	// Earlier requests count.
	r, err := s.WaitForRequest(t.Context(), func(r Request) bool { return r.LastUser == "second" })
	require.NoError(t, err)
	require.Equal(t, "second", r.LastUser)

	// A later request wakes the waiter.
	got := make(chan Request, 1)
	go func() {
		r, err := s.WaitForRequest(t.Context(), func(r Request) bool { return r.LastUser == "third" })
		if err == nil {
			got <- r
		}
	}()
	serve(t, s, chatOpts{}, user("third"))
	select {
	case r := <-got:
		require.Equal(t, "third", r.LastUser)
	case <-time.After(wait):
		t.Fatal("waiter not woken")
	}

	// A context ends the wait.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.WaitForRequest(ctx, func(Request) bool { return false })
	require.ErrorIs(t, err, context.Canceled)
}

func TestConcurrentRequests(t *testing.T) {
	const n, times = 40, 7
	s := New(&Script{
		Rules:    []Rule{{Name: "limited", When: []string{"job"}, Times: times, Replies: []Reply{{Text: "rule", DelayMs: 1}}}},
		Fallback: &Reply{Text: "fallback"},
	})
	start(t, s)
	var wg sync.WaitGroup
	texts := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := post(t.Context(), s.URL(), chatBody(t, chatOpts{stream: i%2 == 0}, user(fmt.Sprintf("job %d", i))))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			errs[i] = err
			texts[i] = string(body)
		})
	}
	wg.Wait()
	ruled := 0
	for i := range n {
		require.NoError(t, errs[i])
		if strings.Contains(texts[i], `"rule"`) {
			ruled++
		}
	}
	require.Equal(t, times, ruled, "Times holds under concurrency")
	reqs := s.Requests()
	require.Len(t, reqs, n)
	byRule := map[string]int{}
	for i, r := range reqs {
		byRule[r.Rule]++
		if i > 0 {
			require.False(t, r.At.Before(reqs[i-1].At), "arrival order")
		}
	}
	require.Equal(t, map[string]int{"limited": times, "": n - times}, byRule)
}

// A conversation's later steps stay with the rule that served its step 0,
// even when an earlier, exhausted rule has the same "when".
func TestSessionStaysWithItsRule(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "first", When: []string{"TASK"}, Times: 1, Replies: []Reply{{Text: "first-0"}, {Text: "first-1"}}},
		{Name: "second", When: []string{"TASK"}, Replies: []Reply{{Text: "second-0"}, {Text: "second-1"}}},
	}})
	require.NoError(t, s.Start("127.0.0.1:0"))
	defer s.Close()
	post := func(session string, msgs ...map[string]any) string {
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions", bytes.NewReader(body))
		req.Header.Set("x-session-id", session)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out.Choices[0].Message.Content
	}
	user := map[string]any{"role": "user", "content": "TASK"}
	asst := map[string]any{"role": "assistant", "content": "x"}
	require.Equal(t, "first-0", post("s1", user))
	require.Equal(t, "second-0", post("s2", user))
	require.Equal(t, "second-1", post("s2", user, asst), "step 1 of s2 belongs to rule second")
	require.Equal(t, "first-1", post("s1", user, asst))
}
