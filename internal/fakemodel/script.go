package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Script is what the fake model answers: rules tried in order, and a
// fallback for requests no rule matches.
type Script struct {
	Rules    []Rule `json:"rules"`
	Fallback *Reply `json:"fallback,omitempty"` // reply for requests no rule matches; default: Text "ok"
	// Models are listed by GET /v1/models besides the model ids seen in
	// requests (any model id is accepted).
	Models []string `json:"models,omitempty"`
}

// Rule answers the requests whose text contains every When substring and no
// Unless substring.
type Rule struct {
	Name    string   `json:"name"`
	When    []string `json:"when"`             // every substring must occur in the request's system messages + ALL user messages (case-sensitive)
	Unless  []string `json:"unless,omitempty"` // none may occur
	Times   int      `json:"times,omitempty"`  // how many conversations (step-0 requests) this rule serves; 0 = unlimited
	Replies []Reply  `json:"replies"`          // indexed by step = number of assistant turns after the LAST user message (tool results are not user messages); past the end, the last reply repeats
}

// Reply is one model turn: text, tool calls, or both.
type Reply struct {
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	DelayMs   int        `json:"delay_ms,omitempty"`
	// Hold blocks this reply until Server.Release(Hold) is called or the
	// request is cancelled; the request is recorded (Request.Held) before it
	// blocks, so a test can wait for it.
	Hold  string `json:"hold,omitempty"`
	Usage *Usage `json:"usage,omitempty"` // default: estimated from lengths
	// Status, when set, answers the request with this HTTP status and an
	// error body carrying Error in the request's protocol (OpenAI or
	// Anthropic; e.g. 401 "Incorrect API key provided"), as a provider that
	// refuses or fails does.
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ToolCall asks the agent to run one of its tools. String values in Args may
// use the template {{workdir}}. For a Responses API custom tool (Codex's
// apply_patch) the freeform input is Args["input"].
type ToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// Usage is the token count reported for a reply.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// ErrInvalidScript is wrapped by every validation error from ParseScript.
var ErrInvalidScript = errors.New("invalid fake model script")

// ParseScript decodes a JSON script and validates it. Unknown fields are
// errors, so a misspelt key does not silently change what a test does.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidScript, err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the script object", ErrInvalidScript)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScript reads and parses a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load fake model script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Validate checks what ParseScript checks, for scripts built in Go.
func (s *Script) Validate() error {
	seen := make(map[string]int, len(s.Rules))
	for i, r := range s.Rules {
		if r.Name == "" {
			return fmt.Errorf("%w: rule #%d has no name", ErrInvalidScript, i+1)
		}
		if j, dup := seen[r.Name]; dup {
			return fmt.Errorf("%w: rule %q (#%d) has the same name as rule #%d", ErrInvalidScript, r.Name, i+1, j+1)
		}
		seen[r.Name] = i
		if r.Times < 0 {
			return fmt.Errorf("%w: rule %q: times is negative (%d)", ErrInvalidScript, r.Name, r.Times)
		}
		if len(r.Replies) == 0 {
			return fmt.Errorf("%w: rule %q has no replies", ErrInvalidScript, r.Name)
		}
		for k, rep := range r.Replies {
			if err := rep.validate(); err != nil {
				return fmt.Errorf("%w: rule %q: reply %d: %v", ErrInvalidScript, r.Name, k, err)
			}
		}
	}
	if s.Fallback != nil {
		if err := s.Fallback.validate(); err != nil {
			return fmt.Errorf("%w: fallback: %v", ErrInvalidScript, err)
		}
	}
	return nil
}

func (r Reply) validate() error {
	if r.DelayMs < 0 {
		return fmt.Errorf("delay_ms is negative (%d)", r.DelayMs)
	}
	if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
		return fmt.Errorf("status %d is not an HTTP error status (400-599)", r.Status)
	}
	for i, tc := range r.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", i)
		}
	}
	return nil
}
