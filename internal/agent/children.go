package agent

import (
	"context"
	"net/http"
	"net/url"
)

// Child sessions: a task call (a worker delegating to a specialist) runs in
// a child session of its own, with its own model and its own cost. The
// attempt pays for them, so RunSession adds their usage to its result.

type ocChild struct {
	ID   string `json:"id"`
	Time struct {
		Created float64 `json:"created"`
	} `json:"time"`
}

// ChildSession is one delegated session of a turn.
type ChildSession struct {
	SessionID string
	Agent     string // the subagent it ran as
	Model     string // provider/model of its last assistant message
	Usage     Usage
}

// children lists the child sessions of sid created at or after since
// (OpenCode's milliseconds), with their usage.
func (s *Server) children(ctx context.Context, dir, sid string, since float64) ([]ChildSession, error) {
	var kids []ocChild
	if err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(sid)+"/children", dirQuery(dir), nil, &kids); err != nil {
		return nil, err
	}
	var out []ChildSession
	for _, k := range kids {
		if k.Time.Created < since {
			continue // an earlier turn's: already counted then
		}
		msgs, err := s.messages(ctx, dir, k.ID, 0)
		if err != nil {
			return nil, err
		}
		c := ChildSession{SessionID: k.ID}
		for _, m := range msgs {
			if m.Info.Role != "assistant" {
				continue
			}
			c.Usage.add(m.Info.Tokens, m.Info.Cost)
			c.Agent = m.Info.Agent
			if m.Info.ProviderID != "" {
				c.Model = m.Info.ProviderID + "/" + m.Info.ModelID
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// turnStart is the creation time of the first message counted for usage.
func turnStart(msgs []ocMessage, from int) float64 {
	if from <= 0 || from >= len(msgs) {
		return 0
	}
	return msgs[from].Info.Time.Created
}

func (u *Usage) plus(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.Reasoning += o.Reasoning
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.Cost += o.Cost
}
