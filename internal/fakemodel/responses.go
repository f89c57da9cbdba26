package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The subset of the OpenAI Responses API the server reads and writes
// (Codex CLI's POST /v1/responses).

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"` // a string or a list of items
	Tools        []responsesTool `json:"tools"`
	Stream       bool            `json:"stream"`
}

type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"` // a "namespace" tool's
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or a list of parts
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"` // a string or a list of parts
	Summary   json.RawMessage `json:"summary"`
}

// responsesText reads content or output that is a string or a list of
// parts, of which the text parts count (input_text, output_text, text).
func responsesText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text", "summary_text":
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// harnessContext matches a user message that is one tag Codex wraps its
// own context in (<environment_context>, <user_instructions>,
// <turn_aborted>, ...), or AGENTS.md's instructions: such a message is
// context, not a prompt.
var harnessContext = regexp.MustCompile(`(?s)^(<([a-z_]+)(?:\s[^>]*)?>.*</([a-z_]+)>|# AGENTS\.md instructions for .*)$`)

func isHarnessContext(text string) bool {
	m := harnessContext.FindStringSubmatch(strings.TrimSpace(text))
	return m != nil && m[2] == m[3]
}

// readResponses reads a Responses API conversation. instructions and
// developer or system messages are system text. The model's output items
// (assistant messages, function and custom tool calls, reasoning) that
// follow one another are one assistant turn, as one response produced
// them; the outputs of the calls are tool results. A user message that is
// Codex's own context (<environment_context> and the like) does not
// restart the step count.
func readResponses(req responsesRequest) conversation {
	var turns []turn
	if req.Instructions != "" {
		turns = append(turns, turn{kind: turnSystem, text: req.Instructions})
	}
	var items []responsesItem
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		items = []responsesItem{{Type: "message", Role: "user", Content: req.Input}}
	} else {
		_ = json.Unmarshal(req.Input, &items)
	}
	model := func(text string) {
		if n := len(turns); n > 0 && turns[n-1].kind == turnAssistant {
			turns[n-1].text += text
			return
		}
		turns = append(turns, turn{kind: turnAssistant, text: text})
	}
	for _, it := range items {
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			text := responsesText(it.Content)
			switch it.Role {
			case "system", "developer":
				turns = append(turns, turn{kind: turnSystem, text: text})
			case "assistant":
				model(text)
			case "user":
				kind := turnUser
				if isHarnessContext(text) {
					kind = turnContext
				}
				turns = append(turns, turn{kind: kind, text: text})
			}
		case "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call", "tool_search_call":
			model(it.Name + it.Arguments + it.Input + responsesText(it.Summary))
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output":
			turns = append(turns, turn{kind: turnToolResult, text: responsesText(it.Output)})
		}
	}
	return summarize(turns)
}

// responsesToolNames lists the tools a request offers: function and
// custom tools by name, a namespace's tools as <namespace>.<tool>, built-in
// tools (web_search) by type. custom are the names of the custom
// (freeform) tools, Codex's apply_patch among them.
func responsesToolNames(tools []responsesTool) (names []string, custom map[string]bool) {
	custom = map[string]bool{}
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			for _, sub := range t.Tools {
				names = append(names, t.Name+"."+sub.Name)
			}
		case t.Name != "":
			names = append(names, t.Name)
			if t.Type == "custom" {
				custom[t.Name] = true
			}
		case t.Type != "":
			names = append(names, t.Type)
		}
	}
	return names, custom
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	var req responsesRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
		writeResponsesError(w, http.StatusBadRequest, "invalid responses request: "+err.Error())
		return
	}
	tools, custom := responsesToolNames(req.Tools)
	ex := exchange{
		protocol: ProtocolResponses,
		model:    req.Model,
		stream:   req.Stream,
		conv:     readResponses(req),
		tools:    tools,
	}
	s.answer(w, r, ex, responsesDialect{model: req.Model, stream: req.Stream, custom: custom})
}

// writeResponsesError writes an error as the Responses API does, the
// same body as chat completions.
func writeResponsesError(w http.ResponseWriter, status int, msg string) {
	writeError(w, status, msg)
}

// responsesDialect writes Responses API replies: server-sent events when
// the request streams, one response object otherwise. A tool call to one
// of the request's custom tools becomes a custom_tool_call whose input is
// the call's "input" argument; any other a function_call.
type responsesDialect struct {
	model  string
	stream bool
	custom map[string]bool
}

func (responsesDialect) writeError(w http.ResponseWriter, status int, msg string) {
	writeResponsesError(w, status, msg)
}

type responsesOutItem struct {
	ID        string              `json:"id"`
	Type      string              `json:"type"`
	Status    string              `json:"status"`
	Role      string              `json:"role,omitempty"`
	Content   *[]responsesOutPart `json:"content,omitempty"`
	CallID    string              `json:"call_id,omitempty"`
	Name      string              `json:"name,omitempty"`
	Arguments *string             `json:"arguments,omitempty"`
	Input     *string             `json:"input,omitempty"`
}

type responsesOutPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type responsesObject struct {
	ID        string             `json:"id"`
	Object    string             `json:"object"`
	CreatedAt int64              `json:"created_at"`
	Status    string             `json:"status"`
	Model     string             `json:"model"`
	Output    []responsesOutItem `json:"output"`
	Usage     *responsesUsage    `json:"usage"`
}

// items are the reply's output items: a message with its text (also when
// empty and there is nothing else), then one call per tool call.
func (d responsesDialect) items(out rendered) []responsesOutItem {
	var items []responsesOutItem
	if out.text != "" || len(out.toolCalls) == 0 {
		items = append(items, responsesOutItem{
			ID: fmt.Sprintf("msg_fake_%d", out.seq), Type: "message", Role: "assistant",
			Content: &[]responsesOutPart{{Type: "output_text", Text: out.text, Annotations: []any{}}},
		})
	}
	for i, tc := range out.toolCalls {
		callID := fmt.Sprintf("call_fake_%d_%d", out.seq, i)
		if d.custom[tc.name] {
			input, ok := tc.args["input"].(string)
			if !ok {
				input = tc.json
			}
			items = append(items, responsesOutItem{ID: fmt.Sprintf("ctc_fake_%d_%d", out.seq, i), Type: "custom_tool_call", CallID: callID, Name: tc.name, Input: &input})
			continue
		}
		args := tc.json
		items = append(items, responsesOutItem{ID: fmt.Sprintf("fc_fake_%d_%d", out.seq, i), Type: "function_call", CallID: callID, Name: tc.name, Arguments: &args})
	}
	for i := range items {
		items[i].Status = "completed"
	}
	return items
}

func (d responsesDialect) writeReply(w http.ResponseWriter, out rendered) {
	usage := &responsesUsage{InputTokens: out.usage.PromptTokens, OutputTokens: out.usage.CompletionTokens, TotalTokens: out.usage.TotalTokens}
	resp := responsesObject{
		ID: fmt.Sprintf("resp_fake_%d", out.seq), Object: "response", CreatedAt: time.Now().Unix(),
		Status: "completed", Model: d.model, Output: d.items(out), Usage: usage,
	}
	if !d.stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	sse := sseWriter(w)
	seq := 0
	send := func(typ string, fields map[string]any) bool {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return sse(typ, fields)
	}
	pending := resp
	pending.Status, pending.Output, pending.Usage = "in_progress", []responsesOutItem{}, nil
	if !send("response.created", map[string]any{"response": pending}) ||
		!send("response.in_progress", map[string]any{"response": pending}) {
		return
	}
	for i, item := range resp.Output {
		if !d.streamItem(send, i, item) {
			return
		}
	}
	send("response.completed", map[string]any{"response": resp})
}

// streamItem sends one output item as the Responses API streams it: added
// (empty), its text, arguments or input in deltas, the matching done
// event, and the item done.
func (d responsesDialect) streamItem(send func(string, map[string]any) bool, index int, item responsesOutItem) bool {
	at := func(fields map[string]any) map[string]any {
		fields["item_id"] = item.ID
		fields["output_index"] = index
		return fields
	}
	head := item
	head.Status = "in_progress"
	empty := ""
	switch item.Type {
	case "message":
		head.Content = &[]responsesOutPart{}
	case "function_call":
		head.Arguments = &empty
	case "custom_tool_call":
		head.Input = &empty
	}
	if !send("response.output_item.added", map[string]any{"output_index": index, "item": head}) {
		return false
	}
	switch item.Type {
	case "message":
		part := (*item.Content)[0]
		if !send("response.content_part.added", at(map[string]any{"content_index": 0, "part": responsesOutPart{Type: "output_text", Text: "", Annotations: []any{}}})) {
			return false
		}
		for _, p := range textPieces(part.Text) {
			if !send("response.output_text.delta", at(map[string]any{"content_index": 0, "delta": p, "logprobs": []any{}})) {
				return false
			}
		}
		if !send("response.output_text.done", at(map[string]any{"content_index": 0, "text": part.Text, "logprobs": []any{}})) ||
			!send("response.content_part.done", at(map[string]any{"content_index": 0, "part": part})) {
			return false
		}
	case "function_call":
		for _, p := range textPieces(*item.Arguments) {
			if !send("response.function_call_arguments.delta", at(map[string]any{"delta": p})) {
				return false
			}
		}
		if !send("response.function_call_arguments.done", at(map[string]any{"name": item.Name, "arguments": *item.Arguments})) {
			return false
		}
	case "custom_tool_call":
		for _, p := range textPieces(*item.Input) {
			if !send("response.custom_tool_call_input.delta", at(map[string]any{"delta": p})) {
				return false
			}
		}
		if !send("response.custom_tool_call_input.done", at(map[string]any{"input": *item.Input})) {
			return false
		}
	}
	return send("response.output_item.done", map[string]any{"output_index": index, "item": item})
}
