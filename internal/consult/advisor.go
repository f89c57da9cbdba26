package consult

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
)

// ServerName is the MCP server's name in OpenCode's config; OpenCode offers
// its tool to the model as ServerName_ToolName.
const (
	ServerName = "horizon"
	ToolName   = "consult_advisor"
	// ToolID is the tool's name as the worker's model sees and calls it.
	ToolID = ServerName + "_" + ToolName
)

// CallTimeout is how long OpenCode waits for one consult_advisor call (the
// MCP server's request timeout in its config; OpenCode's default, 5s, is
// too short for a model's answer). A consult gives up a little earlier, so
// its failure is recorded and answered before OpenCode stops waiting.
const (
	CallTimeout   = 10 * time.Minute
	consultBudget = CallTimeout - 30*time.Second
)

// Bounds of what one consult sends, so a long session cannot make the
// consultation itself overflow.
const (
	maxQuestion   = 8000 // bytes of the question, and again of the context
	maxMessage    = 4000 // bytes of one message's text
	maxToolDetail = 600  // bytes of one tool call's input or output
	bytesPerToken = 4    // the usual estimate; the bound on the answer uses it
)

// Backend is the part of OpenCode's API a consult uses; *agent.Server
// implements it.
type Backend interface {
	RunningCalls(ctx context.Context, dir, tool string) ([]agent.RunningCall, error)
	RecentMessages(ctx context.Context, dir, sessionID string, n int) ([]agent.ConsultMessage, error)
	RunSession(ctx context.Context, req agent.SessionRequest, onProgress func(agent.Progress)) (agent.SessionResult, error)
}

// Options configure an Advisor. Model, ContextMessages and MaxTokens are
// advisor.consult_model, advisor.consult.include_context_messages and
// advisor.consult.max_tokens.
type Options struct {
	Home string // HORIZON_HOME: where lanes are registered
	Dir  string // the lane: the directory OpenCode started the server in
	// Model answers; "" means ResolveModel decides (the best lead model).
	Model           string
	ResolveModel    func(ctx context.Context) (string, error)
	ContextMessages int
	MaxTokens       int
	Now             func() time.Time // default time.Now
	// DaySpend is today's spend across runs (the day's ledger), weighed
	// against the registration's SpendCheck; nil counts nothing.
	DaySpend func(ctx context.Context) (float64, error)
}

// Advisor answers consult_advisor calls for one lane.
type Advisor struct {
	b Backend
	o Options
}

// NewAdvisor checks o and returns an Advisor.
func NewAdvisor(b Backend, o Options) (*Advisor, error) {
	switch {
	case b == nil:
		return nil, errors.New("consult: no OpenCode backend")
	case o.Home == "" || o.Dir == "":
		return nil, fmt.Errorf("consult: home (%q) and lane directory (%q) are required", o.Home, o.Dir)
	case o.Model == "" && o.ResolveModel == nil:
		return nil, errors.New("consult: no model and no way to resolve one (advisor.consult_model)")
	case o.MaxTokens < 1:
		return nil, fmt.Errorf("consult: advisor.consult.max_tokens is %d; it must be at least 1", o.MaxTokens)
	case o.ContextMessages < 0:
		return nil, fmt.Errorf("consult: advisor.consult.include_context_messages is %d; it must be 0 or more", o.ContextMessages)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Advisor{b: b, o: o}, nil
}

// Question is the tool's input.
type Question struct {
	Question string `json:"question" jsonschema:"the decision or problem to get advice on, asked as one clear question"`
	Context  string `json:"context,omitempty" jsonschema:"optional: what the advisor should know that is not in your latest messages (approach considered, error seen, files involved)"`
}

// Ask runs one consultation: it finds the calling session and its attempt,
// asks the consult model with the session's latest messages, records the
// consult in the attempt's ledger and returns it. A failed consultation is
// recorded too (Error set) and returned with the error.
func (a *Advisor) Ask(ctx context.Context, q Question) (horizon.Consult, error) {
	ctx, cancel := context.WithTimeout(ctx, consultBudget)
	defer cancel()
	question := strings.TrimSpace(q.Question)
	if question == "" {
		return horizon.Consult{}, fmt.Errorf("%w: question is empty; ask one clear question, with optional context", ErrBadInput)
	}
	reg, err := Lookup(a.o.Home, a.o.Dir)
	if err != nil {
		return horizon.Consult{}, err
	}
	sid, callID, err := a.caller(ctx, question, reg.Ledger)
	if err != nil {
		return horizon.Consult{}, fmt.Errorf("consult: find the calling session: %w", err)
	}
	c := horizon.Consult{ID: callID, Session: sid, Question: textio.Head(question, maxQuestion), At: a.o.Now().UTC()}
	if c.ID == "" {
		c.ID = fmt.Sprintf("%s@%d", sid, c.At.UnixNano())
	}
	if why, err := a.declined(ctx, reg); err != nil || why != "" {
		if err != nil {
			return horizon.Consult{}, fmt.Errorf("consult: %w", err)
		}
		// Recorded like a failed consult: the attempt shows it was asked.
		c.Error = why
		if rerr := Append(reg.Ledger, c); rerr != nil {
			return c, errors.Join(fmt.Errorf("%w: %s", ErrSpend, why), rerr)
		}
		return c, fmt.Errorf("%w: %s", ErrSpend, why)
	}
	msgs, err := a.b.RecentMessages(ctx, a.o.Dir, sid, a.o.ContextMessages)
	if err != nil {
		return horizon.Consult{}, fmt.Errorf("consult: read session %s: %w", sid, err)
	}
	model := a.o.Model
	if model == "" {
		if model, err = a.o.ResolveModel(ctx); err != nil {
			return horizon.Consult{}, fmt.Errorf("consult: no consult model (set advisor.consult_model): %w", err)
		}
	}
	c.Model = model
	res, err := a.b.RunSession(ctx, agent.SessionRequest{
		Directory: a.o.Dir,
		Agent:     agent.AgentConsultant,
		Model:     model,
		Prompt:    Brief(question, textio.Head(strings.TrimSpace(q.Context), maxQuestion), msgs, a.o.MaxTokens),
		Title:     fmt.Sprintf("horizon consult %s %s attempt %d", reg.RunID, reg.Feature, reg.Attempt),
	}, nil)
	c.AdvisorSession = res.SessionID
	c.Usage = usage(res.Usage)
	if err == nil && strings.TrimSpace(res.Text) == "" {
		err = errors.New("the consult model gave no answer")
	}
	if err != nil {
		c.Error = err.Error()
		if rerr := Append(reg.Ledger, c); rerr != nil {
			return c, errors.Join(err, rerr)
		}
		return c, fmt.Errorf("consult: %w", err)
	}
	c.Answer, c.Truncated = bound(strings.TrimSpace(res.Text), a.o.MaxTokens)
	if err := Append(reg.Ledger, c); err != nil {
		return c, err
	}
	return c, nil
}

// caller finds the session and tool call this request answers, among the
// calls of the tool running in the lane: the one whose question is this
// question (a model may make parallel calls), not yet in the ledger (two
// parallel calls may ask the same). A lone running call is the caller
// whatever its arguments say.
func (a *Advisor) caller(ctx context.Context, question, ledger string) (sessionID, callID string, err error) {
	calls, err := a.b.RunningCalls(ctx, a.o.Dir, ToolID)
	if err != nil {
		return "", "", err
	}
	if len(calls) == 0 {
		return "", "", fmt.Errorf("%w: no session in %s is running %s", ErrNoCaller, a.o.Dir, ToolID)
	}
	if len(calls) == 1 {
		return calls[0].Session, calls[0].CallID, nil
	}
	done, err := Read(ledger)
	if err != nil {
		return "", "", err
	}
	recorded := map[string]bool{}
	for _, c := range done {
		recorded[c.ID] = true
	}
	for _, c := range calls {
		var in Question
		if json.Unmarshal(c.Input, &in) == nil && strings.TrimSpace(in.Question) == question && !recorded[c.CallID] {
			return c.Session, c.CallID, nil
		}
	}
	return "", "", fmt.Errorf("%w: %d calls of %s run in %s and none asks this question", ErrNoCaller, len(calls), ToolID, a.o.Dir)
}

func usage(u agent.Usage) horizon.Usage {
	return horizon.Usage{Input: u.Input, Output: u.Output, Reasoning: u.Reasoning, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Cost: u.Cost}
}

// Brief is the consultant's prompt: the question, the worker's context and
// its latest messages, and the length the answer must keep to.
func Brief(question, context string, msgs []agent.ConsultMessage, maxTokens int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The worker asks:\n\n%s\n", question)
	if context != "" {
		fmt.Fprintf(&b, "\nContext it adds:\n\n%s\n", context)
	}
	if len(msgs) > 0 {
		fmt.Fprintf(&b, "\nIts latest %d messages, oldest first:\n", len(msgs))
		for _, m := range msgs {
			who := m.Role
			if m.Agent != "" {
				who += " (" + m.Agent + ")"
			}
			fmt.Fprintf(&b, "\n--- %s\n", who)
			if m.Text != "" {
				b.WriteString(textio.Head(m.Text, maxMessage))
				b.WriteString("\n")
			}
			for _, t := range m.Tools {
				if t.Tool == ToolID {
					continue // this very call
				}
				fmt.Fprintf(&b, "[tool %s %s] input: %s\n", t.Tool, t.Status, textio.Head(t.Input, maxToolDetail))
				if t.Output != "" {
					fmt.Fprintf(&b, "  output: %s\n", textio.Head(t.Output, maxToolDetail))
				}
			}
		}
	}
	fmt.Fprintf(&b, "\nAnswer in at most %d tokens (about %d words). Longer answers are cut.\n", maxTokens, maxTokens*3/4)
	return b.String()
}

// bound cuts an answer to about maxTokens tokens (bytesPerToken bytes
// each), at a rune boundary, and says so in the text the worker reads.
func bound(s string, maxTokens int) (string, bool) {
	limit := maxTokens * bytesPerToken
	if len(s) <= limit {
		return s, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n…[answer cut at advisor.consult.max_tokens = %d]", maxTokens), true
}

// declined weighs a consult against the spend authority's word on the
// attempt (reg.Spend) and today's spend: why it may not run, or "".
func (a *Advisor) declined(ctx context.Context, reg Registration) (string, error) {
	if reg.Spend == nil {
		return "", nil
	}
	day := 0.0
	if a.o.DaySpend != nil && reg.Spend.DayCeiling > 0 {
		var err error
		if day, err = a.o.DaySpend(ctx); err != nil {
			return "", fmt.Errorf("read today's spend: %w", err)
		}
	}
	return reg.Spend.declined(day), nil
}
