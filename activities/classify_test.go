package activities

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

func TestClassifySessionError(t *testing.T) {
	se := func(name string, code int, msg string) error {
		return fmt.Errorf("run session: %w", &agent.SessionError{SessionID: "ses_1", Name: name, StatusCode: code, Message: msg})
	}
	tests := []struct {
		name    string
		err     error
		errType string              // "" : retried as it is (an outage)
		blocker horizon.BlockerType // the blocker type an ErrTypeProviderRefused carries
	}{
		{"unauthorized", se("APIError", 401, "Incorrect API key provided: sk-xx"), ErrTypeProviderRefused, horizon.BlockerMissingCredential},
		{"forbidden", se("APIError", 403, "Your organization is not allowed to use this model"), ErrTypeProviderRefused, horizon.BlockerMissingCredential},
		{"opencode auth error", se("ProviderAuthError", 0, "no API key for provider local"), ErrTypeProviderRefused, horizon.BlockerMissingCredential},
		{"model gone (404)", se("APIError", 404, "The model `gpt-9` does not exist"), ErrTypeProviderRefused, horizon.BlockerUnavailableService},
		{"model gone (400)", se("APIError", 400, "model_not_found: qwen-old has been decommissioned"), ErrTypeProviderRefused, horizon.BlockerUnavailableService},
		{"quota that says so", se("APIError", 429, "You exceeded your current quota, please check your plan and billing details"), ErrTypeProviderRefused, horizon.BlockerUnavailableService},
		{"payment required", se("APIError", 402, "Payment Required"), ErrTypeProviderRefused, horizon.BlockerUnavailableService},
		{"rate limit waits", se("APIError", 429, "Rate limit reached for requests"), "", ""},
		{"503 waits", se("APIError", 503, "Service Unavailable"), "", ""},
		{"500 waits", se("APIError", 500, "internal server error"), "", ""},
		{"connection refused waits", se("APIError", 0, "Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9"), "", ""},
		{"opencode exited waits", fmt.Errorf("%w (pid 12) while session ses_1 ran: signal: killed", agent.ErrServerExited), "", ""},
		{"disk full waits", errors.New("write transcript: no space left on device"), "", ""},
		{"idle without reply waits", errors.New("session ses_1: idle for 1m0s without a reply to the prompt"), "", ""},
		{"context overflow", se("ContextOverflowError", 0, "prompt is too long"), ErrTypeSessionFailed, ""},
		{"output cut", se("MessageOutputLengthError", 0, ""), ErrTypeSessionFailed, ""},
		{"malformed request", se("APIError", 400, "Invalid schema for function 'edit'"), ErrTypeSessionFailed, ""},
		{"unknown model", &agent.UnknownModelError{Model: "x/y"}, ErrTypeUnknownModel, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classifySessionError(tt.err)
			if tt.errType == "" {
				require.Equal(t, tt.err, got, "an outage is retried as it is")
				require.True(t, retryable(got))
				return
			}
			var app *temporal.ApplicationError
			require.True(t, errors.As(got, &app), "got %T %v", got, got)
			require.Equal(t, tt.errType, app.Type())
			require.True(t, app.NonRetryable())
			require.False(t, retryable(got))
			if tt.blocker == "" {
				return
			}
			var b horizon.Blocker
			require.NoError(t, app.Details(&b))
			require.Equal(t, tt.blocker, b.Type)
			var s *agent.SessionError
			require.True(t, errors.As(tt.err, &s))
			require.Contains(t, b.Evidence, s.Message, "the provider's words are the evidence")
		})
	}
}

func TestOutageAfter(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 12, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	err := errors.New("connection refused")
	tests := []struct {
		name  string
		prev  *SessionOutage
		retry *SessionRetry
		since time.Time
		tries int
	}{
		{"first failure", nil, nil, now, 1},
		{"after OpenCode's own retries", nil, &SessionRetry{Attempt: 4, Since: t0.Add(30 * time.Minute)}, t0.Add(30 * time.Minute), 4},
		{"an outage goes on", &SessionOutage{Since: t0, Tries: 5}, &SessionRetry{Attempt: 2, Since: t0.Add(30 * time.Minute)}, t0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outageAfter(tt.prev, tt.retry, err, now)
			require.Equal(t, tt.since, o.Since)
			require.Equal(t, tt.tries, o.Tries)
			require.Equal(t, "connection refused", o.Error)
		})
	}
}
