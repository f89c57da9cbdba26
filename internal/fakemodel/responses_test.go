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

// Responses API input items, built the way Codex sends them.
func rMessage(role, partType, text string) msg {
	return msg{"type": "message", "role": role, "content": []msg{{"type": partType, "text": text}}}
}
func rUser(text string) msg      { return rMessage("user", "input_text", text) }
func rDeveloper(text string) msg { return rMessage("developer", "input_text", text) }
func rAssistant(text string) msg { return rMessage("assistant", "output_text", text) }
func rCall(id, name, args string) msg {
	return msg{"type": "function_call", "call_id": id, "name": name, "arguments": args}
}
func rOutput(id string, output any) msg {
	return msg{"type": "function_call_output", "call_id": id, "output": output}
}
func rCustomCall(id, name, input string) msg {
	return msg{"type": "custom_tool_call", "call_id": id, "name": name, "input": input}
}
func rCustomOutput(id, output string) msg {
	return msg{"type": "custom_tool_call_output", "call_id": id, "output": output}
}
func rEnv(cwd string) msg {
	inner := "  <shell>bash</shell>"
	if cwd != "" {
		inner = "  <cwd>" + cwd + "</cwd>\n" + inner
	}
	return rUser("<environment_context>\n" + inner + "\n</environment_context>")
}

var codexTools = []msg{
	{"type": "function", "name": "exec_command", "parameters": msg{}},
	{"type": "custom", "name": "apply_patch", "format": msg{"type": "grammar"}},
	{"type": "namespace", "name": "multi_agent_v1", "tools": []msg{{"type": "function", "name": "spawn_agent"}}},
	{"type": "web_search"},
}

func responsesBody(t *testing.T, instructions string, tools []msg, input ...msg) []byte {
	t.Helper()
	body := msg{"model": codexModel, "stream": true, "input": input, "tool_choice": "auto", "store": false}
	if instructions != "" {
		body["instructions"] = instructions
	}
	if tools != nil {
		body["tools"] = tools
	}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	return data
}

// Step counting in the Responses API: the items one response produced are
// one turn, tool outputs and Codex's own context messages are not prompts.
func TestResponsesConversation(t *testing.T) {
	head := []msg{rDeveloper("You are Codex."), rEnv("/work/repo"), rUser("Create hello.txt")}
	with := func(items ...msg) []msg { return append(append([]msg(nil), head...), items...) }
	patched := []msg{rCustomCall("c1", "apply_patch", "*** Begin Patch"), rCustomOutput("c1", "Success.")}
	tests := []struct {
		name         string
		instructions string
		input        []msg
		step         int
		lastUser     string
		results      []string
		workdir      string
	}{
		{"first turn", "", head, 0, "Create hello.txt", nil, "/work/repo"},
		{"a function call and its output", "", with(rCall("c1", "exec_command", `{"cmd":"ls"}`), rOutput("c1", "hello.txt")), 1, "Create hello.txt", []string{"hello.txt"}, "/work/repo"},
		{"a custom tool call and its output", "", with(patched...), 1, "Create hello.txt", []string{"Success."}, "/work/repo"},
		{"one response with text and two calls is one step", "", with(
			msg{"type": "reasoning", "summary": []msg{{"type": "summary_text", "text": "thinking"}}},
			rAssistant("Looking."), rCall("c1", "exec_command", "{}"), rCall("c2", "exec_command", "{}"),
			rOutput("c1", "one"), rOutput("c2", []msg{{"type": "input_text", "text": "two"}})), 1, "Create hello.txt", []string{"one", "two"}, "/work/repo"},
		{"two responses", "", with(append(patched, rCall("c2", "exec_command", "{}"), rOutput("c2", "ok"))...), 2, "Create hello.txt", []string{"Success.", "ok"}, "/work/repo"},
		{"context after a turn is no prompt", "", with(rAssistant("Done."), rEnv("")), 1, "Create hello.txt", nil, "/work/repo"},
		{"resume: the new prompt restarts the count", "", with(append(patched, rAssistant("Done."),
			rDeveloper("<permissions instructions>read-only</permissions instructions>"), rEnv(""), rUser("Now read it back"))...), 0, "Now read it back", nil, "/work/repo"},
		{"resumed elsewhere: the last cwd wins", "", with(rAssistant("Done."), rEnv("/elsewhere"), rUser("Again"), rCall("c3", "exec_command", "{}"), rOutput("c3", "x")), 1, "Again", []string{"x"}, "/elsewhere"},
		{"instructions and a string input", "You are a test.", nil, 0, "", nil, ""},
		{"AGENTS.md instructions are context", "", with(rAssistant("Done."), rUser("# AGENTS.md instructions for /work/repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>")), 1, "Create hello.txt", nil, "/work/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := responsesBody(t, tt.instructions, codexTools, tt.input...)
			if tt.input == nil {
				body = []byte(`{"model":"m","instructions":"You are a test.","input":"plain prompt"}`)
				tt.lastUser = "plain prompt"
			}
			var req responsesRequest
			require.NoError(t, json.Unmarshal(body, &req))
			c := readResponses(req)
			require.Equal(t, tt.step, c.step)
			require.Equal(t, tt.lastUser, c.lastUser)
			require.Equal(t, tt.results, c.tools)
			require.Equal(t, tt.workdir, c.workdir)
			if tt.instructions != "" {
				require.Contains(t, c.haystack, tt.instructions, "instructions are system text")
			}
		})
	}
}

func TestHarnessContext(t *testing.T) {
	for text, want := range map[string]bool{
		"<environment_context>\n  <cwd>/a</cwd>\n</environment_context>":    true,
		"  <user_instructions>be brief</user_instructions>\n":               true,
		"<turn_aborted>\nThe user interrupted.\n</turn_aborted>":            true,
		"# AGENTS.md instructions for /a\n\n<INSTRUCTIONS>x</INSTRUCTIONS>": true,
		"Create hello.txt":                   false,
		"<b>bold</b> and more text after":    false,
		"<a>one</a> <b>two</b>":              false,
		"Fix <environment_context> handling": false,
	} {
		require.Equal(t, want, isHarnessContext(text), text)
	}
}

// responsesStream is a Responses API event stream as a client assembles it.
type responsesStream struct {
	events    []string
	text      string
	items     []map[string]any // output_item.done items
	completed map[string]any   // response.completed's response
}

// responsesSSE reads a Responses API stream and checks its framing: event
// and data lines, sequence numbers in order, each item added before its
// deltas and done after them.
func responsesSSE(t *testing.T, rec *httptest.ResponseRecorder) responsesStream {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	var out responsesStream
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(nil, 1<<20)
	open := map[float64]string{} // output_index -> item type
	deltas := map[string]string{}
	seq := 0.0
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		require.True(t, ok, "want an event line, got %q", sc.Text())
		require.True(t, sc.Scan())
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		require.True(t, ok, "want a data line, got %q", sc.Text())
		require.True(t, sc.Scan())
		require.Empty(t, sc.Text())
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &e), data)
		require.Equal(t, name, e["type"])
		require.Equal(t, seq, e["sequence_number"])
		seq++
		out.events = append(out.events, name)
		switch name {
		case "response.created", "response.in_progress":
			resp := e["response"].(map[string]any)
			require.Equal(t, "in_progress", resp["status"])
		case "response.output_item.added":
			item := e["item"].(map[string]any)
			open[e["output_index"].(float64)] = item["type"].(string)
			require.Equal(t, "in_progress", item["status"])
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			require.Contains(t, open, e["output_index"])
			deltas[e["item_id"].(string)] += e["delta"].(string)
		case "response.output_item.done":
			item := e["item"].(map[string]any)
			require.Equal(t, open[e["output_index"].(float64)], item["type"])
			delete(open, e["output_index"].(float64))
			require.Equal(t, "completed", item["status"])
			id := item["id"].(string)
			switch item["type"] {
			case "message":
				text := item["content"].([]any)[0].(map[string]any)["text"].(string)
				require.Equal(t, text, deltas[id])
				out.text += text
			case "function_call":
				require.Equal(t, item["arguments"], deltas[id])
			case "custom_tool_call":
				require.Equal(t, item["input"], deltas[id])
			}
			out.items = append(out.items, item)
		case "response.completed":
			out.completed = e["response"].(map[string]any)
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, open, "every item done")
	require.Equal(t, "response.created", out.events[0])
	require.Equal(t, "response.completed", out.events[len(out.events)-1])
	return out
}

func postResponses(t *testing.T, s *Server, body []byte, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/responses", bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

func TestResponsesStream(t *testing.T) {
	s := New(&Script{Rules: []Rule{{
		Name: "write", When: []string{"Create hello.txt"},
		Replies: []Reply{
			{Text: "Writing it.", ToolCalls: []ToolCall{
				{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: {{workdir}}/hello.txt\n+hi\n*** End Patch\n"}},
				{Name: "exec_command", Args: map[string]any{"cmd": "ls", "workdir": "{{workdir}}"}},
			}},
			{Text: "Done.", Usage: &Usage{PromptTokens: 11, CompletionTokens: 2}},
		},
	}}})
	head := []msg{rDeveloper("You are Codex."), rEnv("/work/repo"), rUser("Create hello.txt")}
	h := http.Header{"Session-Id": {"thread-1"}, "Authorization": {"Bearer k"}}
	got := responsesSSE(t, postResponses(t, s, responsesBody(t, "", codexTools, head...), h))
	require.Equal(t, "Writing it.", got.text)
	require.Len(t, got.items, 3)
	require.Equal(t, "message", got.items[0]["type"])
	require.Equal(t, "assistant", got.items[0]["role"])
	patch := got.items[1]
	require.Equal(t, "custom_tool_call", patch["type"], "apply_patch is a custom tool in the request")
	require.Equal(t, "apply_patch", patch["name"])
	require.Equal(t, "*** Begin Patch\n*** Add File: /work/repo/hello.txt\n+hi\n*** End Patch\n", patch["input"])
	shell := got.items[2]
	require.Equal(t, "function_call", shell["type"])
	require.Equal(t, "exec_command", shell["name"])
	require.JSONEq(t, `{"cmd": "ls", "workdir": "/work/repo"}`, shell["arguments"].(string))
	require.NotEqual(t, patch["call_id"], shell["call_id"])
	require.Equal(t, []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}, squeeze(got.events))
	require.Equal(t, "completed", got.completed["status"])
	require.Len(t, got.completed["output"], 3)
	usage := got.completed["usage"].(map[string]any)
	require.Positive(t, usage["input_tokens"])
	require.Equal(t, usage["input_tokens"].(float64)+usage["output_tokens"].(float64), usage["total_tokens"])
	require.Equal(t, map[string]any{"cached_tokens": 0.0}, usage["input_tokens_details"])

	step1 := append(head, rAssistant("Writing it."),
		rCustomCall(patch["call_id"].(string), "apply_patch", patch["input"].(string)),
		rCall(shell["call_id"].(string), "exec_command", shell["arguments"].(string)),
		rCustomOutput(patch["call_id"].(string), "Success."), rOutput(shell["call_id"].(string), "hello.txt"))
	got = responsesSSE(t, postResponses(t, s, responsesBody(t, "", codexTools, step1...), h))
	require.Equal(t, "Done.", got.text)
	require.Equal(t, map[string]any{"input_tokens": 11.0, "output_tokens": 2.0, "total_tokens": 13.0,
		"input_tokens_details": map[string]any{"cached_tokens": 0.0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0.0}},
		got.completed["usage"])

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	r := reqs[1]
	require.Equal(t, ProtocolResponses, r.Protocol)
	require.Equal(t, 1, r.Step)
	require.Equal(t, []string{"Success.", "hello.txt"}, r.ToolResults)
	require.Equal(t, "thread-1", r.Session)
	require.Equal(t, "Bearer k", r.Authorization)
	require.Equal(t, "/work/repo", r.Workdir)
	require.Equal(t, []string{"exec_command", "apply_patch", "multi_agent_v1.spawn_agent", "web_search"}, r.Tools)
}

// Without a custom tool of that name, a call is a function call; a custom
// call without an "input" argument gets its arguments as JSON.
func TestResponsesCallKinds(t *testing.T) {
	s := New(&Script{Fallback: &Reply{ToolCalls: []ToolCall{
		{Name: "apply_patch", Args: map[string]any{"patch": "x"}},
		{Name: "shell", Args: map[string]any{"command": []any{"ls"}}},
	}}})
	tools := []msg{{"type": "custom", "name": "apply_patch"}}
	got := responsesSSE(t, postResponses(t, s, responsesBody(t, "", tools, rUser("go")), nil))
	require.Len(t, got.items, 2, "no message item when there is no text")
	require.Equal(t, "custom_tool_call", got.items[0]["type"])
	require.JSONEq(t, `{"patch": "x"}`, got.items[0]["input"].(string))
	require.Equal(t, "function_call", got.items[1]["type"])
	require.JSONEq(t, `{"command": ["ls"]}`, got.items[1]["arguments"].(string))

	// Not streaming: one response object.
	body, err := json.Marshal(msg{"model": "m", "input": "go", "tools": tools})
	require.NoError(t, err)
	rec := postResponses(t, s, body, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var resp struct {
		Object string           `json:"object"`
		Status string           `json:"status"`
		Output []map[string]any `json:"output"`
		Usage  map[string]any   `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Equal(t, "response", resp.Object)
	require.Equal(t, "completed", resp.Status)
	require.Len(t, resp.Output, 2)
	require.Contains(t, resp.Usage, "total_tokens")
}

// A Codex thread (session-id header) stays with the rule that served its
// step 0.
func TestCodexSessionStaysWithItsRule(t *testing.T) {
	s := New(&Script{Rules: []Rule{
		{Name: "first", When: []string{"TASK"}, Times: 1, Replies: []Reply{{Text: "first-0"}, {Text: "first-1"}}},
		{Name: "second", When: []string{"TASK"}, Replies: []Reply{{Text: "second-0"}, {Text: "second-1"}}},
	}})
	post := func(thread string, items ...msg) string {
		h := http.Header{"Session-Id": {thread}}
		return responsesSSE(t, postResponses(t, s, responsesBody(t, "", codexTools, items...), h)).text
	}
	step := []msg{rUser("TASK"), rCall("c", "exec_command", "{}"), rOutput("c", "ok")}
	require.Equal(t, "first-0", post("t1", rUser("TASK")))
	require.Equal(t, "second-0", post("t2", rUser("TASK")))
	require.Equal(t, "second-1", post("t2", step...))
	require.Equal(t, "first-1", post("t1", step...))
}
