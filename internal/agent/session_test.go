package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// mockOpenCode mimics the few OpenCode endpoints RunSession uses, with state
// a test scripts directly. It checks basic auth and the directory parameter
// on every call, as the real server scopes by them.
type mockOpenCode struct {
	t   *testing.T
	dir string

	mu       sync.Mutex
	sessions map[string][]ocMessage
	status   map[string]string // missing → idle
	prompts  []string          // text of each prompt_async
	aborts   int
	perms    []map[string]any
	replies  []string // permission/question IDs answered
	events   chan string
	calls    []string
	// onPrompt runs (under mu) after a prompt is recorded; it may change state.
	onPrompt func(m *mockOpenCode, sid, text string)
	// onStatus runs (under mu) before each status answer; polls counts them.
	onStatus func(m *mockOpenCode, sid string, polls int)
	polls    int
	nextID   int
}

func newMock(t *testing.T) (*mockOpenCode, *Server) {
	m := &mockOpenCode{t: t, dir: "/lanes/r1/f1", sessions: map[string][]ocMessage{}, status: map[string]string{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	s := Connect(srv.URL, "pw", zerolog.Nop())
	s.pollInterval = 10 * time.Millisecond
	s.progressEvery = 20 * time.Millisecond
	s.idleGrace = 2 * time.Second
	s.confirmIdle = 50 * time.Millisecond
	s.wakeGap = time.Millisecond
	return m, s
}

func (m *mockOpenCode) id(prefix string) string {
	m.nextID++
	return fmt.Sprintf("%s_%04d", prefix, m.nextID)
}

func (m *mockOpenCode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u, p, ok := r.BasicAuth(); !ok || u != "opencode" || p != "pw" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if got := r.URL.Query().Get("directory"); got != m.dir {
		m.t.Errorf("%s %s: directory=%q, want %q", r.Method, r.URL.Path, got, m.dir)
	}
	m.mu.Lock()
	m.calls = append(m.calls, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == "GET" && r.URL.Path == "/event":
		m.serveEvents(w, r)
	case r.Method == "GET" && r.URL.Path == "/config/providers":
		writeJSONT(w, map[string]any{"providers": []any{
			map[string]any{"id": "fake", "models": map[string]any{"fake-coder": map[string]any{}}},
		}, "default": map[string]string{}})
	case r.Method == "POST" && r.URL.Path == "/session":
		m.mu.Lock()
		sid := m.id("ses")
		m.sessions[sid] = nil
		m.mu.Unlock()
		writeJSONT(w, map[string]any{"id": sid, "directory": m.dir, "title": "t"})
	case r.Method == "GET" && r.URL.Path == "/session/status":
		m.mu.Lock()
		out := map[string]any{}
		for sid := range m.sessions {
			m.polls++
			if m.onStatus != nil {
				m.onStatus(m, sid, m.polls)
			}
		}
		for sid, st := range m.status {
			if st != "idle" {
				out[sid] = map[string]string{"type": st}
			}
		}
		m.mu.Unlock()
		writeJSONT(w, out)
	case r.Method == "GET" && r.URL.Path == "/permission":
		m.mu.Lock()
		out := append([]map[string]any{}, m.perms...)
		m.mu.Unlock()
		writeJSONT(w, out)
	case r.Method == "GET" && r.URL.Path == "/question":
		writeJSONT(w, []any{})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "permission" && parts[2] == "reply":
		var body map[string]string
		require.NoError(m.t, json.NewDecoder(r.Body).Decode(&body))
		require.Equal(m.t, "reject", body["reply"])
		m.mu.Lock()
		m.replies = append(m.replies, parts[1])
		var keep []map[string]any
		for _, p := range m.perms {
			if p["id"] != parts[1] {
				keep = append(keep, p)
			}
		}
		m.perms = keep
		m.mu.Unlock()
		writeJSONT(w, true)
	case len(parts) >= 2 && parts[0] == "session":
		sid := parts[1]
		m.mu.Lock()
		msgs, ok := m.sessions[sid]
		m.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"name":"NotFoundError","data":{"message":"Session not found"}}`))
			return
		}
		switch {
		case r.Method == "GET" && len(parts) == 2:
			var u Usage
			for _, msg := range msgs {
				u.add(msg.Info.Tokens, msg.Info.Cost)
			}
			writeJSONT(w, map[string]any{"id": sid, "cost": u.Cost, "tokens": map[string]any{"input": u.Input, "output": u.Output, "reasoning": 0, "cache": map[string]int{"read": 0, "write": 0}}})
		case r.Method == "GET" && parts[2] == "message":
			if r.URL.Query().Get("limit") == "1" && len(msgs) > 0 {
				msgs = msgs[len(msgs)-1:]
			}
			writeJSONT(w, msgs)
		case r.Method == "POST" && parts[2] == "prompt_async":
			var body struct {
				Agent string `json:"agent"`
				Model struct {
					ProviderID string `json:"providerID"`
					ModelID    string `json:"modelID"`
				} `json:"model"`
				Parts []struct{ Type, Text string } `json:"parts"`
			}
			require.NoError(m.t, json.NewDecoder(r.Body).Decode(&body))
			require.Equal(m.t, "fake", body.Model.ProviderID)
			require.Equal(m.t, "fake-coder", body.Model.ModelID)
			require.Len(m.t, body.Parts, 1)
			m.mu.Lock()
			m.prompts = append(m.prompts, body.Parts[0].Text)
			if m.onPrompt != nil {
				m.onPrompt(m, sid, body.Parts[0].Text)
			}
			m.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		case r.Method == "POST" && parts[2] == "abort":
			m.mu.Lock()
			m.aborts++
			m.status[sid] = "idle"
			m.mu.Unlock()
			writeJSONT(w, true)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// serveEvents streams m.events when set; otherwise /event is missing and
// RunSession has to poll.
func (m *mockOpenCode) serveEvents(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	ch := m.events
	m.mu.Unlock()
	if ch == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
	}
}

func writeJSONT(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// message builders

func userMsg(id string) ocMessage {
	var m ocMessage
	m.Info.ID, m.Info.Role = id, "user"
	m.Info.Time.Created = 1
	m.Parts = []ocPart{{Type: "text", Text: "prompt"}}
	return m
}

func assistantMsg(id, text, finish string, completed bool, in, out int, cost float64) ocMessage {
	var m ocMessage
	m.Info.ID, m.Info.Role, m.Info.Finish = id, "assistant", finish
	m.Info.Time.Created = 2
	if completed {
		m.Info.Time.Completed = 3
	}
	m.Info.Tokens.Input, m.Info.Tokens.Output, m.Info.Cost = float64(in), float64(out), cost
	if text != "" {
		m.Parts = []ocPart{{Type: "step-start"}, {Type: "text", Text: text}, {Type: "step-finish"}}
	}
	return m
}

const reportText = "ok\n```horizon-report\n{\"status\":\"satisfied\",\"summary\":\"s\"}\n```"

func (m *mockOpenCode) add(sid string, msgs ...ocMessage) {
	m.sessions[sid] = append(m.sessions[sid], msgs...)
}

func req(m *mockOpenCode) SessionRequest {
	return SessionRequest{Directory: m.dir, Agent: AgentWorker, Model: "fake/fake-coder", Prompt: "do it", Title: "t"}
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRunSessionNewWaitsPastEarlyIdle(t *testing.T) {
	m, s := newMock(t)
	// The user message lands only after a few polls: until then the session
	// reads idle with no messages, which must not count as done.
	var target string
	m.onPrompt = func(m *mockOpenCode, sid, text string) { target = sid }
	m.onStatus = func(m *mockOpenCode, sid string, polls int) {
		if sid != target || len(m.sessions[sid]) > 0 {
			return
		}
		if polls > 5 {
			m.add(sid, userMsg("msg_1"), assistantMsg("msg_2", "", "tool-calls", true, 10, 5, 0.5),
				assistantMsg("msg_3", reportText, "stop", true, 20, 6, 0.25))
		}
	}
	var progress []Progress
	res, err := s.RunSession(runCtx(t), req(m), func(p Progress) { progress = append(progress, p) })
	require.NoError(t, err)
	require.Equal(t, target, res.SessionID)
	require.False(t, res.Resumed)
	require.Equal(t, reportText, res.Text)
	require.Equal(t, Usage{Input: 30, Output: 11, Cost: 0.75}, res.Usage)
	require.Equal(t, 3, res.Messages)
	require.Equal(t, "stop", res.Finish)
	require.Equal(t, []string{"do it"}, m.prompts)
	require.NotEmpty(t, progress)
	require.Equal(t, Progress{SessionID: target, Phase: "created"}, progress[0], "the session ID is reported before anything else")
	require.Equal(t, "done", progress[len(progress)-1].Phase)
}

func TestRunSessionResumeFinishedReturnsWithoutPrompt(t *testing.T) {
	m, s := newMock(t)
	m.add("ses_old", userMsg("msg_1"), assistantMsg("msg_2", "", "tool-calls", true, 10, 5, 0.5),
		assistantMsg("msg_3", reportText, "stop", true, 20, 6, 0.25))
	r := req(m)
	r.ResumeSessionID = "ses_old"
	res, err := s.RunSession(runCtx(t), r, nil)
	require.NoError(t, err)
	require.Equal(t, "ses_old", res.SessionID)
	require.True(t, res.Resumed)
	require.Equal(t, reportText, res.Text)
	require.Equal(t, Usage{Input: 30, Output: 11, Cost: 0.75}, res.Usage)
	require.Empty(t, m.prompts, "finished work is not prompted (and paid for) again")
}

func TestRunSessionResumeInterruptedContinues(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []ocMessage
	}{
		{"incomplete assistant", []ocMessage{userMsg("msg_1"), assistantMsg("msg_2", "", "", false, 0, 0, 0)}},
		{"user only", []ocMessage{userMsg("msg_1")}},
		{"tool step then stop", []ocMessage{userMsg("msg_1"), assistantMsg("msg_2", "", "tool-calls", true, 10, 5, 0.5)}},
		{"finished without text", []ocMessage{userMsg("msg_1"), assistantMsg("msg_2", "", "stop", true, 10, 5, 0.5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, s := newMock(t)
			m.add("ses_old", tc.msgs...)
			m.onPrompt = func(m *mockOpenCode, sid, text string) {
				m.add(sid, userMsg("msg_8"), assistantMsg("msg_9", reportText, "stop", true, 7, 3, 0.125))
			}
			r := req(m)
			r.ResumeSessionID = "ses_old"
			res, err := s.RunSession(runCtx(t), r, nil)
			require.NoError(t, err)
			require.True(t, res.Resumed)
			require.Equal(t, []string{ContinuationPrompt}, m.prompts)
			require.Equal(t, reportText, res.Text)
			require.Equal(t, len(tc.msgs)+2, res.Messages)
			var want Usage
			for _, msg := range tc.msgs {
				want.add(msg.Info.Tokens, msg.Info.Cost)
			}
			want.add(ocTokens{Input: 7, Output: 3}, 0.125)
			require.Equal(t, want, res.Usage, "a resumed session reports its whole usage")
		})
	}
}

func TestRunSessionResumeWithoutPromptSendsOriginal(t *testing.T) {
	m, s := newMock(t)
	m.sessions["ses_old"] = nil
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		m.add(sid, userMsg("msg_1"), assistantMsg("msg_2", reportText, "stop", true, 1, 1, 0))
	}
	r := req(m)
	r.ResumeSessionID = "ses_old"
	res, err := s.RunSession(runCtx(t), r, nil)
	require.NoError(t, err)
	require.True(t, res.Resumed)
	require.Equal(t, []string{"do it"}, m.prompts)
}

func TestRunSessionResumeBusyWaits(t *testing.T) {
	m, s := newMock(t)
	m.add("ses_old", userMsg("msg_1"), assistantMsg("msg_2", "", "", false, 0, 0, 0))
	m.status["ses_old"] = "busy"
	m.onStatus = func(m *mockOpenCode, sid string, polls int) {
		if sid == "ses_old" && polls == 8 {
			m.sessions[sid][1] = assistantMsg("msg_2", reportText, "stop", true, 5, 5, 0.5)
			m.status[sid] = "idle"
		}
	}
	r := req(m)
	r.ResumeSessionID = "ses_old"
	res, err := s.RunSession(runCtx(t), r, nil)
	require.NoError(t, err)
	require.True(t, res.Resumed)
	require.Empty(t, m.prompts, "a session that is still running is waited for, not prompted")
	require.Equal(t, reportText, res.Text)
}

func TestRunSessionResumeMissingCreates(t *testing.T) {
	m, s := newMock(t)
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		m.add(sid, userMsg("msg_1"), assistantMsg("msg_2", reportText, "stop", true, 1, 1, 0))
	}
	r := req(m)
	r.ResumeSessionID = "ses_gone"
	res, err := s.RunSession(runCtx(t), r, nil)
	require.NoError(t, err)
	require.False(t, res.Resumed)
	require.NotEqual(t, "ses_gone", res.SessionID)
	require.Equal(t, []string{"do it"}, m.prompts)
}

func TestRunSessionProviderError(t *testing.T) {
	m, s := newMock(t)
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		a := assistantMsg("msg_2", "", "", true, 0, 0, 0)
		a.Info.Error = &ocError{Name: "APIError"}
		a.Info.Error.Data.Message = "upstream overloaded"
		a.Info.Error.Data.StatusCode = 529
		m.add(sid, userMsg("msg_1"), a)
	}
	res, err := s.RunSession(runCtx(t), req(m), nil)
	var se *SessionError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "APIError", se.Name)
	require.Equal(t, 529, se.StatusCode)
	require.Equal(t, "upstream overloaded", se.Message)
	require.Equal(t, res.SessionID, se.SessionID)
	require.NotEmpty(t, res.SessionID)
}

func TestRunSessionErrorEventWithoutMessage(t *testing.T) {
	m, s := newMock(t)
	m.events = make(chan string, 4)
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		// As OpenCode does for an unknown agent: no message, just an event.
		m.events <- fmt.Sprintf(`{"type":"session.error","properties":{"sessionID":%q,"error":{"name":"UnknownError","data":{"message":"Agent not found: \"x\"\n    at stack"}}}}`, sid)
	}
	start := time.Now()
	_, err := s.RunSession(runCtx(t), req(m), nil)
	var se *SessionError
	require.ErrorAs(t, err, &se)
	require.Equal(t, `Agent not found: "x"`, se.Message)
	require.Less(t, time.Since(start), s.idleGrace, "the event ends the wait, not the idle grace")
}

func TestRunSessionIdleWithoutReplyFails(t *testing.T) {
	m, s := newMock(t)
	s.idleGrace = 100 * time.Millisecond
	_, err := s.RunSession(runCtx(t), req(m), nil)
	require.ErrorContains(t, err, "without a reply to the prompt")
	require.Len(t, m.prompts, 1)
}

func TestRunSessionStoppedAfterToolCallsIsConfirmed(t *testing.T) {
	m, s := newMock(t)
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		m.add(sid, userMsg("msg_1"), assistantMsg("msg_2", "let me ask", "tool-calls", true, 1, 1, 0))
	}
	start := time.Now()
	res, err := s.RunSession(runCtx(t), req(m), nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), s.confirmIdle)
	require.Equal(t, "tool-calls", res.Finish)
	require.Equal(t, "let me ask", res.Text)
}

func TestRunSessionRejectsPermissions(t *testing.T) {
	m, s := newMock(t)
	var sid0 string
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		sid0 = sid
		m.status[sid] = "busy"
		m.add(sid, userMsg("msg_1"))
		m.perms = []map[string]any{
			{"id": "per_1", "sessionID": sid, "permission": "bash", "patterns": []string{"rm -rf build"}},
			{"id": "per_other", "sessionID": "ses_someone_else", "permission": "edit", "patterns": []string{"x"}},
		}
	}
	m.onStatus = func(m *mockOpenCode, sid string, polls int) {
		if sid == sid0 && len(m.replies) > 0 && m.status[sid] == "busy" {
			m.status[sid] = "idle"
			m.add(sid, assistantMsg("msg_2", reportText, "stop", true, 1, 1, 0))
		}
	}
	res, err := s.RunSession(runCtx(t), req(m), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"per_1"}, m.replies, "only this session's requests are answered")
	require.Equal(t, []horizon.Ask{{Kind: horizon.AskPermission, Text: "bash: rm -rf build"}}, res.Asked)
}

func TestRunSessionCancelAborts(t *testing.T) {
	m, s := newMock(t)
	m.onPrompt = func(m *mockOpenCode, sid, text string) {
		m.status[sid] = "busy"
		m.add(sid, userMsg("msg_1"), assistantMsg("msg_2", "", "", false, 0, 0, 0))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sid string
	res, err := s.RunSession(ctx, req(m), func(p Progress) {
		sid = p.SessionID
		if p.Phase == "running" {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, sid, res.SessionID)
	require.Equal(t, 1, m.aborts)
}

func TestRunSessionUnknownModel(t *testing.T) {
	m, s := newMock(t)
	r := req(m)
	r.Model = "fake/nope"
	_, err := s.RunSession(runCtx(t), r, nil)
	var um *UnknownModelError
	require.ErrorAs(t, err, &um)
	require.Equal(t, []string{"fake/fake-coder"}, um.Available)
	require.Contains(t, err.Error(), "available: fake/fake-coder")
	require.Empty(t, m.prompts)
}

func TestRunSessionBadRequest(t *testing.T) {
	_, s := newMock(t)
	for _, r := range []SessionRequest{
		{Directory: "relative", Agent: "a", Model: "p/m", Prompt: "x"},
		{Directory: "/abs", Model: "p/m", Prompt: "x"},
		{Directory: "/abs", Agent: "a", Model: "nomodel", Prompt: "x"},
		{Directory: "/abs", Agent: "a", Model: "p/m"},
	} {
		_, err := s.RunSession(context.Background(), r, nil)
		require.Error(t, err, "%+v", r)
	}
}

func TestAuthIsRequired(t *testing.T) {
	m, _ := newMock(t)
	s := Connect(strings.TrimSuffix(mustServerURL(t, m), "/"), "wrong", zerolog.Nop())
	_, err := s.Models(context.Background(), m.dir)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnauthorized, ae.StatusCode)
}

func mustServerURL(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTurnOutcome(t *testing.T) {
	u := userMsg("u")
	done := assistantMsg("a", "x", "stop", true, 0, 0, 0)
	tools := assistantMsg("a", "", "tool-calls", true, 0, 0, 0)
	running := assistantMsg("a", "", "", false, 0, 0, 0)
	failed := assistantMsg("a", "", "", true, 0, 0, 0)
	failed.Info.Error = &ocError{Name: "MessageAbortedError"}
	for _, tc := range []struct {
		name     string
		msgs     []ocMessage
		baseline int
		want     turnState
	}{
		{"empty", nil, 0, turnPending},
		{"only old turn", []ocMessage{u, done}, 2, turnPending},
		{"user only", []ocMessage{u}, 0, turnPending},
		{"running", []ocMessage{u, running}, 0, turnPending},
		{"done", []ocMessage{u, tools, done}, 0, turnFinished},
		{"stopped after tools", []ocMessage{u, tools}, 0, turnStopped},
		{"failed", []ocMessage{u, failed}, 0, turnFailed},
		{"new turn not admitted", []ocMessage{u, done}, 2, turnPending},
		{"new turn done", []ocMessage{u, done, u, done}, 2, turnFinished},
	} {
		require.Equal(t, tc.want, turnOutcome(tc.msgs, tc.baseline), tc.name)
	}
}

func TestFinalTextFallsBackWithinTurn(t *testing.T) {
	msgs := []ocMessage{userMsg("u1"), assistantMsg("a1", "old turn", "stop", true, 0, 0, 0),
		userMsg("u2"), assistantMsg("a2", "report here", "tool-calls", true, 0, 0, 0), assistantMsg("a3", "", "stop", true, 0, 0, 0)}
	require.Equal(t, "report here", finalText(msgs, 2))
	require.Equal(t, "", finalText(msgs[:3], 2), "never reaches into an earlier turn")
}

func TestServerEnvOwnsOpenCodeVariables(t *testing.T) {
	env := serverEnv(ServerOptions{Env: []string{"PATH=/bin", "OPENCODE_CONFIG=/home/me/oc.json", "OPENCODE_SERVER_USERNAME=me", "OPENCODE_DB=/x"}, DBPath: "/h/oc.db"}, "secret")
	require.Contains(t, env, "PATH=/bin")
	require.Contains(t, env, "OPENCODE_SERVER_PASSWORD=secret")
	require.Contains(t, env, "OPENCODE_SERVER_USERNAME=opencode")
	require.Contains(t, env, "OPENCODE_DB=/h/oc.db")
	require.Contains(t, env, "OPENCODE_DISABLE_AUTOUPDATE=1")
	require.Contains(t, env, "OPENCODE_DISABLE_MODELS_FETCH=1")
	for _, kv := range env {
		require.False(t, strings.HasPrefix(kv, "OPENCODE_CONFIG="), "a user's OPENCODE_CONFIG must not leak in: %s", kv)
		require.NotEqual(t, "OPENCODE_DB=/x", kv)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	var err error = &ProtocolError{Kind: horizon.BlockAudit, Reason: "r"}
	require.True(t, errors.Is(err, ErrProtocol))
	require.False(t, IsNotFound(err))
	require.True(t, IsNotFound(fmt.Errorf("wrapped: %w", &APIError{StatusCode: 404})))
}
