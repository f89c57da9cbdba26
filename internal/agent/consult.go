package agent

// What the consult tool (internal/consult, `horizon mcp`) needs from
// OpenCode: the read-only agent that answers, which session is calling the
// tool, and that session's latest messages.
//
// OpenCode 1.18.33 starts a local MCP server once per instance (per
// directory, with the directory as working directory) and calls its tools
// without saying which session asked: the caller is a session in that
// directory whose latest assistant message has a call of the tool running
// (RunningCalls); the call's arguments tell parallel calls apart.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// AgentConsultant answers the worker's consultations: read-only, a few tool
// rounds at most.
const AgentConsultant = "horizon-consultant"

// consultantSteps bounds the consultant's tool rounds: it may check a claim
// in the lane, not explore it.
const consultantSteps = 4

const consultantPrompt = `You are horizon's consultant. A worker agent implementing a feature in the
current working directory (a git worktree, the "lane") asks you one question
at a decision point: before committing to an approach, when stuck on a
recurring error, or before declaring the task done. You get its question,
optional context it chose to add, and its latest messages.

Rules:
- You are advisory only. You can read, grep, glob and list the lane; you
  cannot change anything, run commands or delegate.
- Check a claim in the lane before you rely on it; say what you checked.
- Answer the question asked, concretely: what to do, where (file and line),
  and why. Prefer one clear recommendation over a list of options.
- Stay within the length the request names. No preamble.
`

// ConsultMessage is one message of a session, as the consultant is shown it.
type ConsultMessage struct {
	Role  string // user | assistant
	Agent string
	Text  string        // the text parts, joined
	Tools []ToolSummary // the tool calls of an assistant message
}

// ToolSummary is one tool call of a message: its name, input and output
// (or error), as OpenCode stored them.
type ToolSummary struct {
	Tool   string
	Status string
	Input  string
	Output string
}

// wire types of the message fields the consult tool reads (ocPart keeps
// only what RunSession needs).
type consultMessage struct {
	Info struct {
		Role  string `json:"role"`
		Agent string `json:"agent"`
	} `json:"info"`
	Parts []struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Synthetic bool   `json:"synthetic"`
		Tool      string `json:"tool"`
		CallID    string `json:"callID"`
		State     *struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Output string          `json:"output"`
			Error  string          `json:"error"`
		} `json:"state"`
	} `json:"parts"`
}

// RunningCall is a call of a tool that a session is running now.
type RunningCall struct {
	Session string
	CallID  string
	Input   json.RawMessage // the call's arguments, as the model sent them
}

// RunningCalls lists the calls of tool running in dir now: in each session
// OpenCode reports busy (or retrying), the calls of tool pending or running
// in its latest assistant message, by session ID. The caller of an MCP tool
// is among them (OpenCode does not say which session calls).
func (s *Server) RunningCalls(ctx context.Context, dir, tool string) ([]RunningCall, error) {
	var all map[string]ocStatus
	if err := s.call(ctx, http.MethodGet, "/session/status", dirQuery(dir), nil, &all); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for id, st := range all {
		if st.Type == "busy" || st.Type == "retry" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []RunningCall
	for _, id := range ids {
		var msgs []consultMessage
		q := dirQuery(dir)
		q.Set("limit", "2")
		if err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(id)+"/message", q, nil, &msgs); err != nil {
			return nil, err
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Info.Role != "assistant" {
				continue
			}
			for _, p := range msgs[i].Parts {
				if p.Type == "tool" && p.Tool == tool && p.State != nil && (p.State.Status == "running" || p.State.Status == "pending") {
					out = append(out, RunningCall{Session: id, CallID: p.CallID, Input: p.State.Input})
				}
			}
			break
		}
	}
	return out, nil
}

// RecentMessages returns the last n messages of a session, oldest first.
// Synthetic text (what OpenCode adds on its own) is left out.
func (s *Server) RecentMessages(ctx context.Context, dir, sessionID string, n int) ([]ConsultMessage, error) {
	if n <= 0 {
		return nil, nil
	}
	var msgs []consultMessage
	q := dirQuery(dir)
	q.Set("limit", fmt.Sprint(n))
	if err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(sessionID)+"/message", q, nil, &msgs); err != nil {
		return nil, err
	}
	if len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	out := make([]ConsultMessage, 0, len(msgs))
	for _, m := range msgs {
		msg := ConsultMessage{Role: m.Info.Role, Agent: m.Info.Agent}
		var text []string
		for _, p := range m.Parts {
			switch {
			case p.Type == "text" && !p.Synthetic && strings.TrimSpace(p.Text) != "":
				text = append(text, p.Text)
			case p.Type == "tool" && p.State != nil:
				t := ToolSummary{Tool: p.Tool, Status: p.State.Status, Input: string(p.State.Input), Output: p.State.Output}
				if p.State.Error != "" {
					t.Output = p.State.Error
				}
				msg.Tools = append(msg.Tools, t)
			}
		}
		msg.Text = strings.Join(text, "\n")
		out = append(out, msg)
	}
	return out, nil
}
