package agent

// The advisor's access to a worker session it watches (activities/advisor.go):
// find the session, read its transcript, follow its events, and deliver
// notes into it. Relies on (opencode 1.18.33):
//
//   - GET /session?directory= → [Session{id, title}].
//   - POST /session/{id}/prompt_async accepts messageID (an ascending
//     "msg_" ID the caller makes), noReply (store the message, do not run
//     the model) and per-part metadata, which GET /session/{id}/message
//     returns with the part. A message posted again with the same ID
//     replaces itself, and GET /session/{id}/message/{messageID} is 404
//     until it exists: the ID is the delivery's idempotency key.
//   - A noReply message, like any user message, is read by the running
//     loop at its next step; its agent and model become the session's
//     last user's, so a delivery names the worker's agent and model.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Advice tags: the metadata key of an advisor's message part, and the text
// prefix every advisor message starts with (so the tag survives a server
// that drops metadata, and a reader sees who spoke).
const (
	adviceKey    = "horizon_advice"      // the note ID
	adviceWake   = "horizon_advice_wake" // true on a waking message
	AdvicePrefix = "[horizon advisor"
)

// Message is one message of a session's transcript, as the advisor reads it.
type Message struct {
	ID        string
	Role      string // user | assistant
	Agent     string
	Text      string   // the message's own text (no synthetic parts)
	Tools     []string // tools the step called
	Completed bool     // an assistant step that ended
	Finish    string
	Cost      float64
	// Advice is the note ID of an advisor's message ("" for anyone
	// else's); Wake says it was delivered as a waking prompt.
	Advice string
	Wake   bool
	// Edited are the files the step's file tools (edit, write, patch)
	// changed, as the tools named them. Diagnostics is what OpenCode's
	// language servers reported after them, by file (OpenCode's absolute
	// path), the step's last report of each file: errors and warnings
	// only. Nil when no server is configured for the files.
	Edited      []string
	Diagnostics map[string][]Diagnostic
}

// Delivery is one advisor note to put into a session.
type Delivery struct {
	MessageID string // AdviceMessageID: the idempotency key
	NoteID    string
	Text      string
	// Wake delivers a prompt the worker answers; otherwise the note is
	// stored without a reply (noReply) and read at the worker's next step.
	Wake  bool
	Agent string // the worker's agent and model: the message becomes the session's last user message
	Model string
}

// FindSession returns the ID of the newest session in dir titled title, or
// "" when there is none yet.
func (s *Server) FindSession(ctx context.Context, dir, title string) (string, error) {
	var all []ocSession
	if err := s.call(ctx, http.MethodGet, "/session", dirQuery(dir), nil, &all); err != nil {
		return "", err
	}
	best := ""
	for _, ses := range all {
		if ses.Title == title && ses.ID > best {
			best = ses.ID
		}
	}
	return best, nil
}

// Transcript reads a session's messages in order.
func (s *Server) Transcript(ctx context.Context, dir, sid string) ([]Message, error) {
	msgs, err := s.messages(ctx, dir, sid, 0)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, readMessage(m))
	}
	return out, nil
}

func readMessage(m ocMessage) Message {
	msg := Message{ID: m.Info.ID, Role: m.Info.Role, Agent: m.Info.Agent, Finish: m.Info.Finish, Cost: m.Info.Cost,
		Completed: m.Info.Role == "assistant" && m.Info.Time.Completed > 0}
	var b strings.Builder
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if id, wake, ok := adviceTag(p); ok {
				msg.Advice, msg.Wake = id, wake
			}
			if !p.Synthetic && !p.Ignored {
				b.WriteString(p.Text)
			}
		case "tool":
			msg.Tools = append(msg.Tools, p.Tool)
			edited, diags := toolDiagnostics(p)
			msg.Edited = append(msg.Edited, edited...)
			for file, list := range diags {
				if msg.Diagnostics == nil {
					msg.Diagnostics = map[string][]Diagnostic{}
				}
				msg.Diagnostics[file] = list // a later tool's report is newer
			}
		}
	}
	msg.Text = b.String()
	return msg
}

// adviceTag reads an advisor's tag off a text part: its metadata, else its
// text prefix.
func adviceTag(p ocPart) (id string, wake, ok bool) {
	if v, has := p.Metadata[adviceKey]; has {
		id, _ = v.(string)
		wake, _ = p.Metadata[adviceWake].(bool)
		return id, wake, true
	}
	if strings.HasPrefix(p.Text, AdvicePrefix) {
		return "?", strings.Contains(firstLine(p.Text), "blocker"), true
	}
	return "", false, false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isNote reports an advisor's non-waking message: the worker never
// answers it, so a turn is judged as if it were not there.
func isNote(m ocMessage) bool {
	if m.Info.Role != "user" {
		return false
	}
	for _, p := range m.Parts {
		if p.Type == "text" {
			if _, wake, ok := adviceTag(p); ok && !wake {
				return true
			}
		}
	}
	return false
}

// withoutNotes drops the advisor's non-waking notes from a session's
// messages: a note stored after the worker's last step would otherwise
// read as a prompt still waiting for its reply.
func withoutNotes(msgs []ocMessage) []ocMessage {
	out := msgs[:0:0]
	for _, m := range msgs {
		if !isNote(m) {
			out = append(out, m)
		}
	}
	return out
}

// Deliver posts an advisor's note into a session, idempotently: a message
// that already exists under d.MessageID is not posted again.
func (s *Server) Deliver(ctx context.Context, dir, sid string, d Delivery) error {
	if has, err := s.HasMessage(ctx, dir, sid, d.MessageID); err != nil || has {
		return err
	}
	providerID, modelID, err := splitModel(d.Model)
	if err != nil {
		return err
	}
	body := map[string]any{
		"messageID": d.MessageID,
		"agent":     d.Agent,
		"model":     map[string]string{"providerID": providerID, "modelID": modelID},
		"parts": []map[string]any{{"type": "text", "text": d.Text,
			"metadata": map[string]any{adviceKey: d.NoteID, adviceWake: d.Wake}}},
	}
	if !d.Wake {
		body["noReply"] = true
	}
	return s.call(ctx, http.MethodPost, "/session/"+url.PathEscape(sid)+"/prompt_async", dirQuery(dir), body, nil)
}

// HasMessage reports whether the session holds message msgID.
func (s *Server) HasMessage(ctx context.Context, dir, sid, msgID string) (bool, error) {
	var m ocMessage
	err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(sid)+"/message/"+url.PathEscape(msgID), dirQuery(dir), nil, &m)
	switch {
	case err == nil:
		return m.Info.ID != "", nil
	case IsNotFound(err):
		return false, nil
	}
	// Some versions answer a missing message with a 400 naming it.
	var ae *APIError
	if errors.As(err, &ae) && ae.StatusCode >= 400 && ae.StatusCode < 500 && strings.Contains(strings.ToLower(ae.Body), "not found") {
		return false, nil
	}
	return false, err
}

// Idle reports whether the session is idle.
func (s *Server) Idle(ctx context.Context, dir, sid string) (bool, error) {
	st, err := s.status(ctx, dir, sid)
	return st.Type == "idle", err
}

// Follow wakes the caller on each event of the session (GET /event), until
// ctx ends. It never decides anything: the caller reads the transcript.
func (s *Server) Follow(ctx context.Context, dir, sid string) <-chan struct{} {
	return s.watch(ctx, dir, sid).wake
}

// AdviceMessageID makes the OpenCode message ID of an advisor's note: in
// OpenCode's ascending form ("msg_" + 12 hex digits of time + 14 more), so
// it sorts where it was delivered, with the tail taken from key (run,
// attempt, note) so two notes never share one. The caller fixes at before
// the first try and keeps it, so every retry posts the same ID.
func AdviceMessageID(key string, at time.Time) string {
	n := (uint64(at.UnixMilli())*0x1000 + 1) & (1<<48 - 1)
	var t [6]byte
	for i := range t {
		t[i] = byte(n >> (40 - 8*i))
	}
	sum := sha256.Sum256([]byte(key))
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	tail := make([]byte, 14)
	for i := range tail {
		tail[i] = base62[int(sum[i])%62]
	}
	return "msg_" + hex.EncodeToString(t[:]) + string(tail)
}
