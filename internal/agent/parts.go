package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// Parts: a session's transcript as the events a person follows (what was
// asked, what the model wrote, which tools it ran), for a background task's
// output stream. Only finished messages' parts are returned: a part of a
// message still being written changes, one of a finished message never
// does, so a reader that keeps each part's ID writes each event once.

// Part is one finished piece of a session: a prompt, a text, a reasoning
// step or a tool call.
type Part struct {
	ID        string `json:"id"`
	MessageID string `json:"message"`
	Role      string `json:"role"` // user | assistant
	Type      string `json:"type"` // text | reasoning | tool
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// Status is a tool call's end: completed or error.
	Status string `json:"status,omitempty"`
	// Input is the tool call's arguments; Output its result (or error).
	Input  json.RawMessage `json:"input,omitempty"`
	Output string          `json:"output,omitempty"`
}

type wirePart struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	State     *struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
	} `json:"state"`
}

type wireMessage struct {
	Info  ocInfo     `json:"info"`
	Parts []wirePart `json:"parts"`
}

// maxPartOutput bounds a tool's output in a part: a whole file read is
// the session's business, the stream says what happened.
const maxPartOutput = 4000

// Parts returns the parts of session sid's finished messages, in order:
// user messages, and assistant messages that completed or failed. Parts
// without an ID, synthetic or ignored text, and step markers are left out.
func (s *Server) Parts(ctx context.Context, dir, sid string) ([]Part, error) {
	var msgs []wireMessage
	if err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(sid)+"/message", dirQuery(dir), nil, &msgs); err != nil {
		return nil, err
	}
	return finishedParts(msgs), nil
}

func finishedParts(msgs []wireMessage) []Part {
	var out []Part
	for _, m := range msgs {
		if m.Info.Role == "assistant" && m.Info.Time.Completed == 0 && m.Info.Error == nil {
			continue // still being written, or cut off by a crash
		}
		for _, p := range m.Parts {
			if p.ID == "" || p.Synthetic || p.Ignored {
				continue
			}
			part := Part{ID: p.ID, MessageID: m.Info.ID, Role: m.Info.Role, Type: p.Type}
			switch p.Type {
			case "text", "reasoning":
				if p.Text == "" {
					continue
				}
				part.Text = p.Text
			case "tool":
				part.Tool = p.Tool
				if p.State != nil {
					part.Status, part.Input = p.State.Status, p.State.Input
					part.Output = p.State.Output
					if p.State.Error != "" {
						part.Output = p.State.Error
					}
					if len(part.Output) > maxPartOutput {
						part.Output = part.Output[:maxPartOutput] + "…"
					}
				}
			default:
				continue
			}
			out = append(out, part)
		}
	}
	return out
}
