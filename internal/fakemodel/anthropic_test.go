package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Messages API conversations, built the way Claude Code sends them.
func aUser(blocks ...msg) msg { return msg{"role": "user", "content": blocks} }
func aAssistant(blocks ...msg) msg {
	return msg{"role": "assistant", "content": blocks}
}
func aText(s string) msg     { return msg{"type": "text", "text": s} }
func aReminder(s string) msg { return aText("<system-reminder>\n" + s + "\n</system-reminder>") }
func aToolUse(id, name string, input msg) msg {
	return msg{"type": "tool_use", "id": id, "name": name, "input": input}
}
func aToolResult(id string, content any) msg {
	return msg{"type": "tool_result", "tool_use_id": id, "content": content}
}

var claudeTools = []msg{{"name": "Write", "input_schema": msg{}}, {"name": "Bash", "input_schema": msg{}}}

func anthropicBody(t *testing.T, system any, tools []msg, msgs ...msg) []byte {
	t.Helper()
	body := msg{"model": claudeModel, "max_tokens": 32000, "stream": true, "messages": msgs}
	if system != nil {
		body["system"] = system
	}
	if tools != nil {
		body["tools"] = tools
	}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	return data
}

func readAnthropicBody(t *testing.T, body []byte) conversation {
	t.Helper()
	var req anthropicRequest
	require.NoError(t, json.Unmarshal(body, &req))
	return readAnthropic(req)
}

// Step counting in the Messages API: tool results come back in user
// messages, which are not prompts; neither is a user message of nothing
// but system reminders.
func TestAnthropicConversation(t *testing.T) {
	env := aReminder("# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /work/repo\n - Is a git repository: true")
	prompt := aUser(env, aReminder("Today's date is 2026-12-02."), aText("Create hello.txt"))
	write := aAssistant(aToolUse("t1", "Write", msg{"file_path": "/work/repo/hello.txt", "content": "hi"}))
	written := aUser(aToolResult("t1", "File created successfully at: /work/repo/hello.txt\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>"))
	bash := aAssistant(aText("Checking."), aToolUse("t2", "Bash", msg{"command": "cat hello.txt"}))
	catted := aUser(aToolResult("t2", []msg{aText("hi")}), aReminder("The file was modified"))
	done := aAssistant(aText("Done."))
	tests := []struct {
		name     string
		system   any
		msgs     []msg
		step     int
		lastUser string
		results  []string
		workdir  string
	}{
		{"string system and prompt", "You are Claude.", []msg{{"role": "user", "content": "hello"}}, 0, "hello", nil, ""},
		{"first turn: reminders are not the prompt", []msg{aText("You are a Claude agent.")}, []msg{prompt}, 0, "Create hello.txt", nil, "/work/repo"},
		{"a tool result is not a user message", nil, []msg{prompt, write, written}, 1, "Create hello.txt", []string{"File created successfully at: /work/repo/hello.txt\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>"}, "/work/repo"},
		{"text beside a tool result is context", nil, []msg{prompt, write, written, bash, catted}, 2, "Create hello.txt", []string{"File created successfully at: /work/repo/hello.txt\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>", "hi"}, "/work/repo"},
		{"a message of reminders only is context", nil, []msg{prompt, done, aUser(aReminder("<total_tokens>9 left</total_tokens>"))}, 1, "Create hello.txt", nil, "/work/repo"},
		{"resume: the new prompt restarts the count", nil, []msg{prompt, write, written, done, aUser(aReminder("<total_tokens>9 left</total_tokens>"), aText("Now read it back"))}, 0, "Now read it back", nil, "/work/repo"},
		{"resume, one step on", nil, []msg{prompt, write, written, done, aUser(aText("Now read it back")), bash, catted}, 1, "Now read it back", []string{"hi"}, "/work/repo"},
		{"an advisor's note is no prompt", nil, []msg{prompt, done, aUser(aText("[horizon advisor · concern r1.1]\nAdd a test"))}, 1, "Create hello.txt", nil, "/work/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readAnthropicBody(t, anthropicBody(t, tt.system, claudeTools, tt.msgs...))
			require.Equal(t, tt.step, c.step)
			require.Equal(t, tt.lastUser, c.lastUser)
			require.Equal(t, tt.results, c.tools)
			require.Equal(t, tt.workdir, c.workdir)
			require.Empty(t, c.aux)
			if s, ok := tt.system.(string); ok {
				require.Contains(t, c.haystack, s, "the system prompt is matched")
			}
		})
	}
}

// Claude Code's helper requests (no tools) get the fallback unless a rule
// asks for them, and use up no rule's Times.
func TestClaudeHelperRequests(t *testing.T) {
	s := New(&Script{
		Rules:    []Rule{{Name: "work", When: []string{"Create hello.txt"}, Times: 1, Replies: []Reply{{Text: "working"}}}},
		Fallback: &Reply{Text: "Hello file"},
	})
	title := anthropicBody(t, []msg{aText("Generate a concise, sentence-case title for this session.")}, nil, aUser(aText("Create hello.txt")))
	require.Equal(t, "Hello file", anthropicSSE(t, postAnthropic(t, s, title, nil)).text)
	work := anthropicBody(t, "You are Claude.", claudeTools, aUser(aText("Create hello.txt")))
	require.Equal(t, "working", anthropicSSE(t, postAnthropic(t, s, work, nil)).text)
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, ClaudeHelperMarker, reqs[0].Aux)
	require.Empty(t, reqs[0].Rule)
	require.Empty(t, reqs[1].Aux)
	require.Equal(t, "work", reqs[1].Rule)

	s = New(&Script{Rules: []Rule{{Name: "title", When: []string{ClaudeHelperMarker, "title"}, Replies: []Reply{{Text: `{"title": "Hello file"}`}}}}})
	require.Equal(t, `{"title": "Hello file"}`, anthropicSSE(t, postAnthropic(t, s, title, nil)).text)
}

func postAnthropic(t *testing.T, s *Server, body []byte, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/messages?beta=true", bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// anthropicStream is a Messages API event stream as a client assembles it.
type anthropicStream struct {
	events     []string
	id, model  string
	text       string
	toolUses   []gotToolCall // Args: the assembled input JSON
	stop       string
	usage      map[string]int
	startUsage map[string]int
}

// anthropicSSE reads a Messages API stream and checks its framing: each
// event an "event:" line naming the data's type, a "data:" line, a blank
// line; blocks started, filled and stopped in order.
func anthropicSSE(t *testing.T, rec *httptest.ResponseRecorder) anthropicStream {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	var out anthropicStream
	sc := bufio.NewScanner(rec.Body)
	open := -1
	var blockType string
	var input strings.Builder
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		require.True(t, ok, "want an event line, got %q", sc.Text())
		require.True(t, sc.Scan())
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		require.True(t, ok, "want a data line, got %q", sc.Text())
		require.True(t, sc.Scan())
		require.Empty(t, sc.Text(), "every event ends with a blank line")
		var e struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				ID    string         `json:"id"`
				Model string         `json:"model"`
				Role  string         `json:"role"`
				Usage map[string]int `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type string          `json:"type"`
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Text *string         `json:"text"`
				In   json.RawMessage `json:"input"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage map[string]int `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &e), data)
		require.Equal(t, name, e.Type, "the event line names the data's type")
		out.events = append(out.events, e.Type)
		switch e.Type {
		case "message_start":
			require.Len(t, out.events, 1, "message_start comes first")
			require.Equal(t, "assistant", e.Message.Role)
			out.id, out.model, out.startUsage = e.Message.ID, e.Message.Model, e.Message.Usage
		case "content_block_start":
			require.Equal(t, -1, open, "one block at a time")
			open, blockType = e.Index, e.ContentBlock.Type
			switch blockType {
			case "text":
				require.NotNil(t, e.ContentBlock.Text)
				require.Empty(t, *e.ContentBlock.Text)
			case "tool_use":
				require.JSONEq(t, "{}", string(e.ContentBlock.In))
				out.toolUses = append(out.toolUses, gotToolCall{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name})
				input.Reset()
			default:
				t.Fatalf("unexpected block %s", blockType)
			}
		case "content_block_delta":
			require.Equal(t, open, e.Index)
			switch e.Delta.Type {
			case "text_delta":
				require.Equal(t, "text", blockType)
				out.text += e.Delta.Text
			case "input_json_delta":
				require.Equal(t, "tool_use", blockType)
				input.WriteString(e.Delta.PartialJSON)
			}
		case "content_block_stop":
			require.Equal(t, open, e.Index)
			if blockType == "tool_use" {
				out.toolUses[len(out.toolUses)-1].Args = input.String()
			}
			open = -1
		case "message_delta":
			out.stop, out.usage = e.Delta.StopReason, e.Usage
		case "message_stop", "ping":
		default:
			t.Fatalf("unexpected event %s", e.Type)
		}
	}
	require.NoError(t, sc.Err())
	require.Equal(t, -1, open, "every block stopped")
	require.Equal(t, "message_stop", out.events[len(out.events)-1])
	return out
}

func TestAnthropicStream(t *testing.T) {
	long := strings.Repeat("é", 100) + " done"
	s := New(&Script{Rules: []Rule{{
		Name: "write", When: []string{"Create hello.txt"},
		Replies: []Reply{
			{Text: "Writing it.", ToolCalls: []ToolCall{
				{Name: "Write", Args: map[string]any{"file_path": "{{workdir}}/hello.txt", "content": "hi\n"}},
				{Name: "Bash", Args: map[string]any{"command": "ls"}},
			}},
			{Text: long, Usage: &Usage{PromptTokens: 7, CompletionTokens: 3}},
		},
	}}})
	prompt := aUser(aReminder(" - Primary working directory: /work/repo"), aText("Create hello.txt"))
	got := anthropicSSE(t, postAnthropic(t, s, anthropicBody(t, "sys", claudeTools, prompt), nil))
	require.Equal(t, "Writing it.", got.text)
	require.Equal(t, "tool_use", got.stop)
	require.Equal(t, claudeModel, got.model)
	require.True(t, strings.HasPrefix(got.id, "msg_"))
	require.Len(t, got.toolUses, 2)
	require.Equal(t, "Write", got.toolUses[0].Name)
	require.JSONEq(t, `{"file_path": "/work/repo/hello.txt", "content": "hi\n"}`, got.toolUses[0].Args)
	require.Equal(t, "Bash", got.toolUses[1].Name)
	require.JSONEq(t, `{"command": "ls"}`, got.toolUses[1].Args)
	require.True(t, strings.HasPrefix(got.toolUses[0].ID, "toolu_"))
	require.NotEqual(t, got.toolUses[0].ID, got.toolUses[1].ID)
	require.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, squeeze(got.events))
	require.Positive(t, got.usage["input_tokens"])
	require.Positive(t, got.usage["output_tokens"])

	step1 := []msg{prompt,
		aAssistant(aText("Writing it."), aToolUse(got.toolUses[0].ID, "Write", msg{}), aToolUse(got.toolUses[1].ID, "Bash", msg{})),
		aUser(aToolResult(got.toolUses[0].ID, "File created"), aToolResult(got.toolUses[1].ID, "hello.txt"))}
	got = anthropicSSE(t, postAnthropic(t, s, anthropicBody(t, "sys", claudeTools, step1...), nil))
	require.Equal(t, long, got.text, "multi-byte text survives the deltas")
	require.Equal(t, "end_turn", got.stop)
	require.Equal(t, map[string]int{"input_tokens": 7, "output_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}, got.usage)
	r := s.Requests()[1]
	require.Equal(t, 1, r.Step)
	require.Equal(t, []string{"File created", "hello.txt"}, r.ToolResults)
	require.Equal(t, []string{"Write", "Bash"}, r.Tools)
	require.Equal(t, ProtocolAnthropic, r.Protocol)
}

// squeeze collapses runs of the same event (a long text or input comes in
// several deltas).
func squeeze(events []string) []string {
	var out []string
	for i, e := range events {
		if i == 0 || e != events[i-1] {
			out = append(out, e)
		}
	}
	return out
}

func TestAnthropicNonStreaming(t *testing.T) {
	s := New(&Script{Fallback: &Reply{Text: "plain", ToolCalls: []ToolCall{{Name: "Read", Args: map[string]any{"file_path": "/a"}}}}})
	body, err := json.Marshal(msg{"model": "claude-haiku-4-5", "max_tokens": 1, "messages": []msg{{"role": "user", "content": "Hi"}}})
	require.NoError(t, err)
	rec := postAnthropic(t, s, body, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var m struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage map[string]int `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
	require.Equal(t, "message", m.Type)
	require.Equal(t, "assistant", m.Role)
	require.Equal(t, "claude-haiku-4-5", m.Model)
	require.Equal(t, "tool_use", m.StopReason)
	require.Len(t, m.Content, 2)
	require.Equal(t, "plain", m.Content[0].Text)
	require.Equal(t, "Read", m.Content[1].Name)
	require.JSONEq(t, `{"file_path": "/a"}`, string(m.Content[1].Input))
	require.Positive(t, m.Usage["input_tokens"])
	require.False(t, s.Requests()[0].Stream)
}

// Errors are shaped as each protocol's provider shapes them, whether they
// come from Fail or from a reply's Status.
func TestErrorShapes(t *testing.T) {
	tests := []struct {
		status    int
		anthropic string // error.type
		openai    string // error.type
		code      any    // error.code
	}{
		{400, "invalid_request_error", "invalid_request_error", nil},
		{401, "authentication_error", "invalid_request_error", "invalid_api_key"},
		{403, "permission_error", "invalid_request_error", nil},
		{429, "rate_limit_error", "rate_limit_error", "rate_limit_exceeded"},
		{500, "api_error", "server_error", nil},
		{503, "api_error", "server_error", "server_overloaded"},
		{529, "overloaded_error", "server_error", nil},
	}
	chat := chatBody(t, chatOpts{stream: true}, user("hi"))
	messages := anthropicBody(t, "sys", claudeTools, aUser(aText("hi")))
	responses := responsesBody(t, "", nil, rUser("hi"))
	for _, tt := range tests {
		for _, viaFail := range []bool{true, false} {
			s := New(&Script{Fallback: &Reply{Status: tt.status, Error: "scripted failure"}})
			if viaFail {
				s = New(nil)
				s.Fail(tt.status, "scripted failure")
			}
			for _, path := range []string{"/v1/messages", "/v1/chat/completions", "/v1/responses"} {
				body := map[string][]byte{"/v1/messages": messages, "/v1/chat/completions": chat, "/v1/responses": responses}[path]
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
				require.Equal(t, tt.status, rec.Code, "%s %d", path, tt.status)
				require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
				var e struct {
					Type  string `json:"type"`
					Error struct {
						Type    string `json:"type"`
						Message string `json:"message"`
						Code    any    `json:"code"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
				require.Equal(t, "scripted failure", e.Error.Message)
				if path == "/v1/messages" {
					require.Equal(t, "error", e.Type)
					require.Equal(t, tt.anthropic, e.Error.Type, "%d", tt.status)
					continue
				}
				require.Equal(t, tt.openai, e.Error.Type, "%s %d", path, tt.status)
				require.Equal(t, tt.code, e.Error.Code, "%s %d", path, tt.status)
			}
			require.Len(t, s.Requests(), 3, "failed requests are recorded")
		}
	}
}

// A Claude Code session (X-Claude-Code-Session-Id) stays with the rule that
// served its step 0, and its key is recorded.
func TestClaudeSessionStaysWithItsRule(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "first", When: []string{"TASK"}, Times: 1, Replies: []Reply{{Text: "first-0"}, {Text: "first-1"}}},
		{Name: "second", When: []string{"TASK"}, Replies: []Reply{{Text: "second-0"}, {Text: "second-1"}}},
	}})
	post := func(session string, msgs ...msg) string {
		h := http.Header{"X-Claude-Code-Session-Id": {session}, "X-Api-Key": {"k-" + session}}
		return anthropicSSE(t, postAnthropic(t, s, anthropicBody(t, "sys", claudeTools, msgs...), h)).text
	}
	task := aUser(aText("TASK"))
	step := aAssistant(aToolUse("t", "Bash", msg{}))
	result := aUser(aToolResult("t", "ok"))
	require.Equal(t, "first-0", post("s1", task))
	require.Equal(t, "second-0", post("s2", task))
	require.Equal(t, "second-1", post("s2", task, step, result))
	require.Equal(t, "first-1", post("s1", task, step, result))
	reqs := s.Requests()
	require.Equal(t, "s2", reqs[2].Session)
	require.Equal(t, "k-s2", reqs[2].APIKey)
}

func TestCountTokensAndHello(t *testing.T) {
	s := New(nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages/count_tokens", bytes.NewReader(anthropicBody(t, "sys", nil, aUser(aText("hello there"))))))
	require.Equal(t, http.StatusOK, rec.Code)
	var n struct {
		InputTokens int `json:"input_tokens"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &n))
	require.Positive(t, n.InputTokens)

	for _, method := range []string{http.MethodHead, http.MethodGet} {
		rec = httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(method, "/api/hello", nil))
		require.Equal(t, http.StatusOK, rec.Code)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Contains(t, rec.Body.String(), `"type":"error"`)
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader("{not json")))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), `"invalid_request_error"`)
	require.Empty(t, s.Requests())
}
