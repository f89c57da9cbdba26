package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// ErrProtocol matches every *ProtocolError with errors.Is.
var ErrProtocol = errors.New("protocol error")

// ErrServerExited is returned by calls on a Server whose opencode process has
// exited; the caller can start a new Server and resume the session.
var ErrServerExited = errors.New("opencode server exited")

// ProtocolError says why an agent's final message does not carry a usable
// report block. An attempt that ends with one is a protocol_error attempt,
// never a success.
type ProtocolError struct {
	Kind   horizon.BlockKind // the block kind, e.g. horizon.BlockReport
	Reason string            // human-readable, e.g. "no ```horizon-audit block in the final message"
}

func (e *ProtocolError) Error() string { return "protocol_error: " + e.Reason }

// Is makes errors.Is(err, ErrProtocol) true for every ProtocolError.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// SessionError is an error the model provider (or OpenCode itself) recorded
// on the session's final assistant message: an API error, an auth error, a
// context overflow, an output-length stop, an abort.
type SessionError struct {
	SessionID  string
	Name       string // OpenCode's error name, e.g. "APIError", "ProviderAuthError", "MessageAbortedError"
	Message    string
	StatusCode int  // HTTP status of the provider's answer, when known
	Retryable  bool // OpenCode's own isRetryable, when known
}

func (e *SessionError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	if e.StatusCode != 0 {
		return fmt.Sprintf("agent session %s: %s (HTTP %d): %s", e.SessionID, e.Name, e.StatusCode, msg)
	}
	return fmt.Sprintf("agent session %s: %s: %s", e.SessionID, e.Name, msg)
}

// UnknownModelError is returned by ValidateModel for a model OpenCode does
// not offer in that directory.
type UnknownModelError struct {
	Model     string
	Available []string
}

func (e *UnknownModelError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("model %q is not available in opencode: no connected provider offers any model", e.Model)
	}
	return fmt.Sprintf("model %q is not available in opencode; available: %s", e.Model, strings.Join(e.Available, ", "))
}

// APIError is a non-2xx answer from the opencode server.
type APIError struct {
	Method     string
	Path       string
	StatusCode int
	Body       string
}

func (e *APIError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("opencode %s %s: HTTP %d: %s", e.Method, e.Path, e.StatusCode, body)
}

// IsNotFound reports whether err is an opencode 404 (unknown session, etc.).
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode == 404
}
