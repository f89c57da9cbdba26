// Package agent holds horizon's agent backends and the report protocol they
// share. OpenCode, driven through the HTTP API of `opencode serve`, is the
// first backend; a session (one prompt, run to completion in a lane) is what
// horizon's activities drive. The protocol parser (ParseReport, ParseAudit,
// ParsePlan, ParseAdvice) turns an agent's final message into the protocol
// types of package horizon or a *ProtocolError, so completion is never read
// from prose.
package agent
