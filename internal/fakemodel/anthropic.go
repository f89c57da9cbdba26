package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The subset of the Anthropic Messages API the server reads and writes
// (Claude Code's POST /v1/messages?beta=true).

type anthropicRequest struct {
	Model    string             `json:"model"`
	System   json.RawMessage    `json:"system"` // a string or a list of text blocks
	Messages []anthropicMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool_result's: a string or a list of blocks
}

// anthropicBlocks reads content that is either a string (one text block)
// or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

// anthropicText joins the text blocks of content.
func anthropicText(raw json.RawMessage) string {
	var texts []string
	for _, b := range anthropicBlocks(raw) {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// readAnthropic reads a Messages API conversation. A user message that
// carries tool_result blocks is the agent returning tool output, not a
// prompt: its results are tool results and any text beside them (Claude
// Code's system reminders) is context. So is a user message whose text is
// nothing but <system-reminder> blocks. The prompt recorded as LastUser is
// the user message's text without its reminder blocks.
func readAnthropic(req anthropicRequest) conversation {
	var turns []turn
	if sys := anthropicText(req.System); sys != "" {
		turns = append(turns, turn{kind: turnSystem, text: sys})
	}
	for _, m := range req.Messages {
		blocks := anthropicBlocks(m.Content)
		if m.Role == "assistant" {
			var parts []string
			for _, b := range blocks {
				parts = append(parts, b.Text, b.Thinking, b.Name, string(b.Input))
			}
			turns = append(turns, turn{kind: turnAssistant, text: strings.Join(parts, "")})
			continue
		}
		if m.Role != "user" {
			continue
		}
		var texts, prompts []string
		results := false
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
				if !isReminder(b.Text) {
					prompts = append(prompts, b.Text)
				}
			case "tool_result":
				results = true
				turns = append(turns, turn{kind: turnToolResult, text: anthropicText(b.Content)})
			}
		}
		if len(texts) == 0 {
			continue
		}
		t := turn{kind: turnUser, text: strings.Join(texts, "\n"), prompt: strings.Join(prompts, "\n")}
		if results || len(prompts) == 0 {
			t.kind = turnContext
		}
		turns = append(turns, t)
	}
	c := summarize(turns)
	if c.aux = claudeAux(req); c.aux != "" {
		c.haystack = c.aux + "\n" + c.haystack
	}
	return c
}

// isReminder reports text that is one <system-reminder> block, which
// Claude Code adds to user messages (environment, date, tools, git
// status) and to tool results.
func isReminder(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<system-reminder>") && strings.HasSuffix(t, "</system-reminder>")
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	var req anthropicRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid messages request: "+err.Error())
		return
	}
	tools := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		if t.Name != "" {
			tools = append(tools, t.Name)
		}
	}
	ex := exchange{
		protocol: ProtocolAnthropic,
		model:    req.Model,
		stream:   req.Stream,
		conv:     readAnthropic(req),
		tools:    tools,
	}
	s.answer(w, r, ex, anthropicDialect{model: req.Model, stream: req.Stream})
}

// countTokens answers POST /v1/messages/count_tokens with the estimate
// the replies use; it is not a model turn, so it is not recorded.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid count_tokens request: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": readAnthropic(req).size/4 + 1})
}

// anthropicDialect writes Messages API replies: server-sent events when
// the request streams, one message otherwise.
type anthropicDialect struct {
	model  string
	stream bool
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type anthropicOutBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anthropicOutMessage struct {
	ID           string              `json:"id"`
	Type         string              `json:"type"`
	Role         string              `json:"role"`
	Model        string              `json:"model"`
	Content      []anthropicOutBlock `json:"content"`
	StopReason   *string             `json:"stop_reason"`
	StopSequence *string             `json:"stop_sequence"`
	Usage        anthropicUsage      `json:"usage"`
}

// blocks are the reply's content blocks: its text (also when empty and
// there is nothing else), then one tool_use per tool call.
func (d anthropicDialect) blocks(out rendered) []anthropicOutBlock {
	var blocks []anthropicOutBlock
	if out.text != "" || len(out.toolCalls) == 0 {
		text := out.text
		blocks = append(blocks, anthropicOutBlock{Type: "text", Text: &text})
	}
	for i, tc := range out.toolCalls {
		blocks = append(blocks, anthropicOutBlock{
			Type:  "tool_use",
			ID:    fmt.Sprintf("toolu_fake_%d_%d", out.seq, i),
			Name:  tc.name,
			Input: json.RawMessage(tc.json),
		})
	}
	return blocks
}

func stopReason(out rendered) string {
	if len(out.toolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func (d anthropicDialect) writeReply(w http.ResponseWriter, out rendered) {
	usage := anthropicUsage{InputTokens: out.usage.PromptTokens, OutputTokens: out.usage.CompletionTokens}
	id := fmt.Sprintf("msg_fake_%d", out.seq)
	stop := stopReason(out)
	if !d.stream {
		writeJSON(w, http.StatusOK, anthropicOutMessage{
			ID: id, Type: "message", Role: "assistant", Model: d.model,
			Content: d.blocks(out), StopReason: &stop, Usage: usage,
		})
		return
	}
	send := sseWriter(w)
	start := usage
	start.OutputTokens = 1
	if !send("message_start", map[string]any{"type": "message_start", "message": anthropicOutMessage{
		ID: id, Type: "message", Role: "assistant", Model: d.model, Content: []anthropicOutBlock{}, Usage: start,
	}}) {
		return
	}
	if !send("ping", map[string]string{"type": "ping"}) {
		return
	}
	for i, b := range d.blocks(out) {
		var deltas []map[string]string
		head := b
		switch b.Type {
		case "text":
			empty := ""
			head.Text = &empty
			for _, p := range textPieces(*b.Text) {
				deltas = append(deltas, map[string]string{"type": "text_delta", "text": p})
			}
		case "tool_use":
			head.Input = json.RawMessage("{}")
			for _, p := range textPieces(string(b.Input)) {
				deltas = append(deltas, map[string]string{"type": "input_json_delta", "partial_json": p})
			}
		}
		if !send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": head}) {
			return
		}
		for _, delta := range deltas {
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}) {
				return
			}
		}
		if !send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if !send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": usage,
	}) {
		return
	}
	send("message_stop", map[string]string{"type": "message_stop"})
}

func (anthropicDialect) writeError(w http.ResponseWriter, status int, msg string) {
	writeAnthropicError(w, status, msg)
}

// writeAnthropicError writes an error as the Messages API does:
// {"type": "error", "error": {"type": ..., "message": ...}}, the type
// chosen by status.
func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": anthropicErrorType(status), "message": msg},
	})
}

// anthropicErrorType is the error type the Messages API gives a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// sseWriter starts a server-sent event stream; send writes one event
// with its "event:" line and flushes, reporting false once the client is
// gone.
func sseWriter(w http.ResponseWriter) func(event string, data any) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	return func(event string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
}
