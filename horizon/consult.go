package horizon

import "time"

// Consult is one call of the worker to the consult_advisor tool: the
// question, the advisor model's answer as the worker received it, and what
// it cost. The MCP server (`horizon mcp`) writes it to the attempt's consult
// ledger; the worker's session activity reads the ledger when the session
// ends and the attempt carries the list (Attempt.Consults), its cost folded
// into the attempt's usage.
type Consult struct {
	// ID is the tool call's ID in the worker's session: a consult is
	// recorded once per call.
	ID             string    `json:"id"`
	Session        string    `json:"session"`                   // the calling (worker) session
	AdvisorSession string    `json:"advisor_session,omitempty"` // the read-only session that answered
	Model          string    `json:"model"`
	Question       string    `json:"question"`
	Answer         string    `json:"answer,omitempty"`
	Truncated      bool      `json:"truncated,omitempty"` // the answer was cut to advisor.consult.max_tokens
	Error          string    `json:"error,omitempty"`     // why no answer came (the worker was told)
	Usage          Usage     `json:"usage"`
	At             time.Time `json:"at"`
}

// ConsultUsage is the summed usage of consults.
func ConsultUsage(cs []Consult) Usage {
	var u Usage
	for _, c := range cs {
		u = u.Add(c.Usage)
	}
	return u
}
