package consult

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const toolDescription = `Ask a stronger advisor model for guidance at a decision point: before committing to an approach, when stuck on a recurring error, or before declaring the task done. The advisor sees your question, the optional context and your latest messages, and can read (not change) the files of your working directory. Its answer is advice; you decide what to apply. Use it rarely: each call costs a model call.`

// NewServer returns the MCP server of `horizon mcp`, with the
// consult_advisor tool answered by a. version is horizon's.
func NewServer(a *Advisor, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: ToolName, Description: toolDescription}, a.handle)
	return s
}

// Answer is the tool's structured result.
type Answer struct {
	Answer    string `json:"answer"`
	Model     string `json:"model"`
	Truncated bool   `json:"truncated,omitempty"`
}

// handle answers one call. Every failure is a tool error (the text tells
// the worker's model what happened and that it can go on without advice),
// never a protocol error: the model must be able to read it.
func (a *Advisor) handle(ctx context.Context, _ *mcp.CallToolRequest, q Question) (*mcp.CallToolResult, Answer, error) {
	c, err := a.Ask(ctx, q)
	if err != nil {
		msg := "consult_advisor failed: " + err.Error()
		if !errors.Is(err, ErrBadInput) {
			msg += ". Continue without advice."
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, Answer{}, nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: c.Answer}}}
	return res, Answer{Answer: c.Answer, Model: c.Model, Truncated: c.Truncated}, nil
}
