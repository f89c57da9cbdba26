package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// DefaultModel is the model id WriteOpenCodeConfig configures when given
// none, and the one GET /v1/models lists before any request names another.
const DefaultModel = "fake-coder"

// maxBody caps a request body; OpenCode's first request is about 30 KB.
const maxBody = 64 << 20

// The wire protocols the server speaks (Request.Protocol).
const (
	// ProtocolChat is OpenAI chat completions, POST /v1/chat/completions
	// (OpenCode).
	ProtocolChat = "chat"
	// ProtocolAnthropic is the Anthropic Messages API, POST /v1/messages
	// (Claude Code).
	ProtocolAnthropic = "anthropic"
	// ProtocolResponses is the OpenAI Responses API, POST /v1/responses
	// (Codex CLI).
	ProtocolResponses = "responses"
)

// Request is what the server recorded about one model request.
type Request struct {
	Rule     string // matched rule; "" when the fallback answered
	Step     int
	Protocol string // ProtocolChat, ProtocolAnthropic or ProtocolResponses
	Model    string
	Stream   bool
	At       time.Time
	LastUser string
	Held     bool // the reply had a Hold
	Title    bool // an OpenCode title request (see TitleMarker)
	// Aux names an auxiliary request of the agent's own that is not part
	// of the conversation (see ClaudeHelperMarker); "" for the conversation's
	// requests.
	Aux     string
	Workdir string
	// Session is the conversation id the agent sent in a header:
	// x-session-id (OpenCode), X-Claude-Code-Session-Id (Claude Code) or
	// session-id (Codex, the thread id).
	Session string
	// Authorization is the request's Authorization header (OpenCode sends
	// "Bearer <the provider's API key>", Codex "Bearer <$env_key>").
	Authorization string
	// APIKey is the request's x-api-key header (Claude Code sends
	// $ANTHROPIC_API_KEY there).
	APIKey string
	// ToolResults are the texts of the tool results after the last user
	// message: the output of the tools the agent ran for this conversation.
	ToolResults []string
	// Tools are the names of the tools the request offers the model (an
	// MCP server's tools among them, as OpenCode names them:
	// <server>_<tool>; in the Responses API a namespace's tools as
	// <namespace>.<tool> and built-in tools such as web_search by type).
	Tools []string
}

// Server serves a Script. It is safe for concurrent requests.
type Server struct {
	rules    []Rule
	fallback Reply
	seq      atomic.Uint64
	inFlight atomic.Int64

	mu     sync.Mutex
	served map[string]int // step-0 requests served per rule
	// bound remembers which rule began each conversation, keyed by the
	// session id header and the prompt the steps count from (bindKey), so
	// a conversation's later steps stay with the rule that served its
	// step 0 even when an earlier rule with the same "when" also matches.
	bound   map[string]string
	reqs    []Request
	changed chan struct{} // closed and replaced on every new request
	holds   map[string]chan struct{}
	models  []string
	closed  chan struct{}
	http    *http.Server
	url     string
	addr    string // where Start listened, for Up after Down
	// failing, when set, answers every model request with this status
	// and failMsg (an outage: Fail and Recover).
	failing int
	failMsg string
}

// New returns a server for s (nil: an empty script, everything gets the
// fallback). The script is copied; it is not validated again.
func New(s *Script) *Server {
	if s == nil {
		s = &Script{}
	}
	srv := &Server{
		rules:    append([]Rule(nil), s.Rules...),
		fallback: Reply{Text: "ok"},
		served:   map[string]int{},
		bound:    map[string]string{},
		changed:  make(chan struct{}),
		holds:    map[string]chan struct{}{},
		closed:   make(chan struct{}),
	}
	if s.Fallback != nil {
		srv.fallback = *s.Fallback
	}
	for _, m := range s.Models {
		srv.noteModel(m)
	}
	return srv
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
func (s *Server) Start(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http != nil {
		return errors.New("fakemodel: server already started")
	}
	select {
	case <-s.closed:
		return errors.New("fakemodel: server closed")
	default:
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakemodel: listen on %s: %w", addr, err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	s.url = "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port)) + "/v1"
	s.addr = tcp.String()
	s.serve(ln)
	return nil
}

func (s *Server) serve(ln net.Listener) {
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go s.http.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
}

// Down stops listening and drops every open connection, as a provider
// that went away does: requests meet "connection refused" until Up.
func (s *Server) Down() error {
	s.mu.Lock()
	h := s.http
	s.http = nil
	s.mu.Unlock()
	if h == nil {
		return errors.New("fakemodel: server is not up")
	}
	return h.Close()
}

// Up listens again at the address of Start, after Down; the URL is the
// same.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http != nil || s.addr == "" {
		return errors.New("fakemodel: Up needs a server that was started and is down")
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("fakemodel: listen again on %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// Fail answers every model request, in any protocol, with HTTP status and
// an error body carrying msg, shaped as the protocol's provider shapes it,
// until Recover (e.g. 503 "Service Unavailable" for an outage). Requests
// are recorded.
func (s *Server) Fail(status int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing, s.failMsg = status, msg
}

// Recover ends Fail.
func (s *Server) Recover() { s.Fail(0, "") }

// URL is the base URL to configure as the provider's baseURL,
// "http://127.0.0.1:PORT/v1"; "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close stops the server, ending held and delayed replies.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	h := s.http
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.Close()
}

// Release lets every reply held on hold proceed, now and later: releasing
// before the request arrives means it is not held at all.
func (s *Server) Release(hold string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.holdLocked(hold)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *Server) holdLocked(hold string) chan struct{} {
	ch, ok := s.holds[hold]
	if !ok {
		ch = make(chan struct{})
		s.holds[hold] = ch
	}
	return ch
}

// Requests returns a copy of the recorded requests, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// WaitForRequest blocks until a request matching pred (nil: any) has been
// received, earlier ones included, and returns the first such request.
func (s *Server) WaitForRequest(ctx context.Context, pred func(Request) bool) (Request, error) {
	next := 0
	for {
		s.mu.Lock()
		for ; next < len(s.reqs); next++ {
			if pred == nil || pred(s.reqs[next]) {
				r := s.reqs[next]
				s.mu.Unlock()
				return r, nil
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("fakemodel: wait for request: %w", ctx.Err())
		}
	}
}

// ServeHTTP serves POST /v1/chat/completions, POST /v1/messages (and
// /v1/messages/count_tokens), POST /v1/responses and GET /v1/models (also
// without the /v1 prefix), so the server can be mounted in-process. HEAD or
// GET / and /api/hello answer 200: Claude Code checks it can reach its API
// with HEAD /api/hello.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	path = strings.TrimPrefix(path, "/v1")
	post := func(serve func(http.ResponseWriter, *http.Request), errf func(http.ResponseWriter, int, string)) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			errf(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		serve(w, r)
	}
	switch path {
	case "/chat/completions":
		post(s.chat, writeError)
	case "/messages":
		post(s.messages, writeAnthropicError)
	case "/messages/count_tokens":
		post(s.countTokens, writeAnthropicError)
	case "/responses":
		post(s.responses, writeResponsesError)
	case "/models":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		s.listModels(w)
	case "", "/api/hello":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "use GET or HEAD")
			return
		}
		w.WriteHeader(http.StatusOK)
	default:
		writeError(w, http.StatusNotFound, "no route for "+r.URL.Path)
	}
}

// InFlight is the number of model requests being answered right now (held,
// delayed or streaming), so a test can see a cancelled agent let go of its
// model request.
func (s *Server) InFlight() int {
	return int(s.inFlight.Load())
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	var req chatRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid chat completions request: "+err.Error())
		return
	}
	ex := exchange{
		protocol: ProtocolChat,
		model:    req.Model,
		stream:   req.Stream,
		conv:     readConversation(req.Messages),
		tools:    toolNames(req.Tools),
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.answer(w, r, ex, chatDialect{model: req.Model, stream: req.Stream, includeUsage: includeUsage})
}

// exchange is one model request, read from any of the wire formats.
type exchange struct {
	protocol string
	model    string
	stream   bool
	conv     conversation
	tools    []string
}

// dialect writes a reply, or an error, in one wire format.
type dialect interface {
	writeReply(w http.ResponseWriter, out rendered)
	writeError(w http.ResponseWriter, status int, msg string)
}

// sessionHeaders carry the conversation id, one agent each: OpenCode,
// Claude Code, Codex.
var sessionHeaders = []string{"x-session-id", "X-Claude-Code-Session-Id", "session-id"}

func sessionID(r *http.Request) string {
	for _, h := range sessionHeaders {
		if v := r.Header.Get(h); v != "" {
			return v
		}
	}
	return ""
}

// answer is what every protocol does with a request once read: record it,
// fail it during an outage, wait for its hold and delay, and write the
// scripted reply.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, ex exchange, d dialect) {
	reply, hold := s.record(ex, sessionID(r), r.Header)
	s.mu.Lock()
	failing, failMsg := s.failing, s.failMsg
	s.mu.Unlock()
	if failing != 0 {
		d.writeError(w, failing, failMsg)
		return
	}

	ctx := r.Context()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		}
	}
	if reply.DelayMs > 0 {
		t := time.NewTimer(time.Duration(reply.DelayMs) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		}
	}

	if reply.Status != 0 {
		d.writeError(w, reply.Status, reply.Error)
		return
	}
	d.writeReply(w, s.render(reply, ex.conv))
}

// bindKey names the conversation a request continues: its session and the
// prompt its steps count from. The prompt is part of the key because an
// agent's sub-agents (Claude Code's Agent tool) share the session header.
func bindKey(session string, c conversation) string {
	if session == "" || c.title || c.aux != "" {
		return ""
	}
	return session + "\x00" + c.lastUser
}

// record picks the reply, counts a conversation against the rule's Times and
// records the request, all under one lock so concurrent requests cannot
// overdraw a rule. It returns the hold channel to wait on, if any.
func (s *Server) record(ex exchange, session string, h http.Header) (Reply, <-chan struct{}) {
	conv := ex.conv
	key := bindKey(session, conv)
	s.mu.Lock()
	defer s.mu.Unlock()
	reply, name := s.fallback, ""
	bound := ""
	if conv.step > 0 && key != "" {
		bound = s.bound[key]
	}
	for i := range s.rules {
		rule := &s.rules[i]
		if bound != "" && rule.Name != bound {
			continue
		}
		if conv.step == 0 && rule.Times > 0 && s.served[rule.Name] >= rule.Times {
			continue
		}
		if !rule.matches(conv) {
			continue
		}
		if conv.step == 0 {
			s.served[rule.Name]++
			if key != "" {
				s.bound[key] = rule.Name
			}
		}
		reply, name = rule.reply(conv.step), rule.Name
		break
	}
	s.noteModel(ex.model)
	s.reqs = append(s.reqs, Request{
		Rule:     name,
		Step:     conv.step,
		Protocol: ex.protocol,
		Model:    ex.model,
		Stream:   ex.stream,
		At:       time.Now(),
		LastUser: conv.lastUser,
		Held:     reply.Hold != "",
		Title:    conv.title,
		Aux:      conv.aux,
		Workdir:  conv.workdir,
		Session:  session,

		Authorization: h.Get("Authorization"),
		APIKey:        h.Get("x-api-key"),
		ToolResults:   conv.tools,
		Tools:         ex.tools,
	})
	close(s.changed)
	s.changed = make(chan struct{})
	var hold <-chan struct{}
	if reply.Hold != "" {
		hold = s.holdLocked(reply.Hold)
	}
	return reply, hold
}

// noteModel adds a model id to the /v1/models list; callers hold s.mu (or
// own s exclusively).
func (s *Server) noteModel(id string) {
	if id == "" {
		return
	}
	for _, m := range s.models {
		if m == id {
			return
		}
	}
	s.models = append(s.models, id)
}

func (s *Server) listModels(w http.ResponseWriter) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	s.mu.Unlock()
	if len(ids) == 0 {
		ids = []string{DefaultModel}
	}
	list := modelList{Object: "list", Data: make([]modelInfo, len(ids))}
	for i, id := range ids {
		list.Data[i] = modelInfo{ID: id, Object: "model", OwnedBy: "fakemodel"}
	}
	writeJSON(w, http.StatusOK, list)
}

// rendered is a reply ready to send: templates expanded, ids assigned.
type rendered struct {
	seq       uint64 // makes the ids of this reply unique
	text      string
	toolCalls []renderedCall
	usage     wireUsage
}

// renderedCall is one tool call with its arguments expanded; args is a
// JSON object.
type renderedCall struct {
	name string
	args map[string]any
	json string
}

func (s *Server) render(reply Reply, conv conversation) rendered {
	n := s.seq.Add(1)
	workdir := conv.workdir
	if workdir == "" {
		workdir = "."
	}
	out := rendered{
		seq:  n,
		text: expand(reply.Text, workdir).(string),
	}
	completion := len(out.text)
	for _, tc := range reply.ToolCalls {
		args := map[string]any{}
		if tc.Args != nil {
			args = expand(tc.Args, workdir).(map[string]any)
		}
		raw, err := json.Marshal(args)
		if err != nil { // only from Args built in Go with unmarshalable values
			args, raw = map[string]any{}, []byte("{}")
		}
		out.toolCalls = append(out.toolCalls, renderedCall{name: tc.Name, args: args, json: string(raw)})
		completion += len(tc.Name) + len(raw)
	}
	if reply.Usage != nil {
		out.usage = wireUsage{PromptTokens: reply.Usage.PromptTokens, CompletionTokens: reply.Usage.CompletionTokens}
	} else {
		// About four bytes a token, like the usual rule of thumb.
		out.usage = wireUsage{PromptTokens: conv.size/4 + 1, CompletionTokens: completion/4 + 1}
	}
	out.usage.TotalTokens = out.usage.PromptTokens + out.usage.CompletionTokens
	return out
}

// chatDialect writes OpenAI chat completions.
type chatDialect struct {
	model        string
	stream       bool
	includeUsage bool
}

func (d chatDialect) writeReply(w http.ResponseWriter, out rendered) {
	if d.stream {
		writeStream(w, d.model, out, d.includeUsage)
		return
	}
	writeCompletion(w, d.model, out)
}

func (chatDialect) writeError(w http.ResponseWriter, status int, msg string) {
	writeError(w, status, msg)
}

func (r rendered) chatID() string { return fmt.Sprintf("chatcmpl-fake-%d", r.seq) }

func (r rendered) chatToolCalls() []wireToolCall {
	var calls []wireToolCall
	for i, tc := range r.toolCalls {
		calls = append(calls, wireToolCall{
			ID:       fmt.Sprintf("call_fake_%d_%d", r.seq, i),
			Type:     "function",
			Function: wireFunction{Name: tc.name, Arguments: tc.json},
		})
	}
	return calls
}

func (r rendered) finishReason() string {
	if len(r.toolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// textPiece is how much text one SSE chunk carries, so clients see a real
// stream of deltas.
const textPiece = 48

// textPieces cuts text into the deltas of a stream, at rune boundaries.
func textPieces(text string) []string {
	var pieces []string
	for text != "" {
		n := min(textPiece, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		pieces = append(pieces, text[:n])
		text = text[n:]
	}
	return pieces
}

// writeStream sends the reply as OpenAI server-sent events: a role chunk,
// text deltas, per tool call a chunk with its id and name and one with its
// arguments, a finish chunk carrying usage, an extra usage-only chunk when
// the client asked for include_usage, and [DONE].
func writeStream(w http.ResponseWriter, model string, out rendered, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	created := time.Now().Unix()
	id := out.chatID()
	send := func(choices []chunkChoice, usage *wireUsage) bool {
		if choices == nil {
			choices = []chunkChoice{}
		}
		data, _ := json.Marshal(chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: choices, Usage: usage})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	one := func(d delta) []chunkChoice { return []chunkChoice{{Delta: d}} }

	empty := ""
	if !send(one(delta{Role: "assistant", Content: &empty}), nil) {
		return
	}
	for _, piece := range textPieces(out.text) {
		if !send(one(delta{Content: &piece}), nil) {
			return
		}
	}
	for i, tc := range out.chatToolCalls() {
		head := toolCallDelta{Index: i, ID: tc.ID, Type: "function", Function: functionDelta{Name: tc.Function.Name}}
		if !send(one(delta{ToolCalls: []toolCallDelta{head}}), nil) {
			return
		}
		args := toolCallDelta{Index: i, Function: functionDelta{Arguments: tc.Function.Arguments}}
		if !send(one(delta{ToolCalls: []toolCallDelta{args}}), nil) {
			return
		}
	}
	reason := out.finishReason()
	usage := out.usage
	if !send([]chunkChoice{{Delta: delta{}, FinishReason: &reason}}, &usage) {
		return
	}
	if includeUsage && !send(nil, &usage) {
		return
	}
	if _, err := io.WriteString(w, "data: [DONE]\n\n"); err == nil {
		_ = rc.Flush()
	}
}

func writeCompletion(w http.ResponseWriter, model string, out rendered) {
	msg := completionMessage{Role: "assistant", ToolCalls: out.chatToolCalls()}
	if out.text != "" || len(out.toolCalls) == 0 {
		text := out.text
		msg.Content = &text
	}
	writeJSON(w, http.StatusOK, completion{
		ID:      out.chatID(),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
		Choices: []completionChoice{{Message: msg, FinishReason: out.finishReason()}},
		Usage:   out.usage,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an OpenAI error body (chat completions and the
// Responses API share it), its type and code chosen by status as OpenAI's
// are.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ, code := openAIErrorKind(status)
	body := apiErrorBody{Message: msg, Type: typ}
	if code != "" {
		body.Code = &code
	}
	writeJSON(w, status, apiError{Error: body})
}

func openAIErrorKind(status int) (typ, code string) {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error", "rate_limit_exceeded"
	case status == http.StatusServiceUnavailable:
		return "server_error", "server_overloaded"
	case status >= 500:
		return "server_error", ""
	default:
		return "invalid_request_error", ""
	}
}
