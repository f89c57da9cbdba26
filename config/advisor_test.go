package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAdvisorDefaults(t *testing.T) {
	isolate(t)
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, Advisor{
		Enabled: false, ReviewMode: ReviewStep, ReviewInterval: 1, MaxToolSteps: 3,
		MaxNotesPerUpdate: 3, ImmuneTurns: 3, Timeout: 60 * time.Second, RequireEvidence: true,
		Consult:  Consult{Enabled: true, MaxTokens: 1024, IncludeContextMessages: 12},
		Delivery: Delivery{Blocker: DeliverWake, Concern: DeliverMessage, Nit: DeliverMessage},
		Tools:    []string{"read", "grep", "glob"},
	}, c.Advisor)
	require.Equal(t, "1m0s", c.Settings()["advisor.timeout"])
	require.Contains(t, Keys(), "advisor.consult.include_context_messages")
}

// Every advisor key is read from the environment, nested consult keys
// included.
func TestAdvisorEnv(t *testing.T) {
	isolate(t)
	t.Setenv("HORIZON_ADVISOR_ENABLED", "true")
	t.Setenv("HORIZON_ADVISOR_WATCHDOG_MODEL", "local/qwen")
	t.Setenv("HORIZON_ADVISOR_REVIEW_MODE", "idle")
	t.Setenv("HORIZON_ADVISOR_TIMEOUT", "5s")
	t.Setenv("HORIZON_ADVISOR_CONSULT_MAX_TOKENS", "64")
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.True(t, c.Advisor.Enabled)
	require.Equal(t, "local/qwen", c.Advisor.WatchdogModel)
	require.Equal(t, ReviewIdle, c.Advisor.ReviewMode)
	require.Equal(t, 5*time.Second, c.Advisor.Timeout)
	require.Equal(t, 64, c.Advisor.Consult.MaxTokens)
}

func TestAdvisorInvalid(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"HORIZON_ADVISOR_REVIEW_MODE", "turn", `advisor.review_mode: "turn": use step`},
		{"HORIZON_ADVISOR_REVIEW_INTERVAL", "0", "advisor.review_interval: 0: must be at least 1"},
		{"HORIZON_ADVISOR_MAX_NOTES_PER_UPDATE", "0", "advisor.max_notes_per_update: 0: must be at least 1"},
		{"HORIZON_ADVISOR_IMMUNE_TURNS", "-1", "advisor.immune_turns: -1: must be at least 0"},
		{"HORIZON_ADVISOR_TIMEOUT", "0s", "advisor.timeout: 0s: must be a positive duration"},
		{"HORIZON_ADVISOR_WATCHDOG_MODEL", "qwen", `advisor.watchdog_model: "qwen" is not PROVIDER/MODEL`},
		{"HORIZON_ADVISOR_CONSULT_MODEL", "a b/c", `advisor.consult_model: "a b/c" is not PROVIDER/MODEL`},
		{"HORIZON_ADVISOR_CONSULT_MAX_TOKENS", "0", "advisor.consult.max_tokens: 0: must be at least 1"},
		{"HORIZON_ADVISOR_CONSULT_INCLUDE_CONTEXT_MESSAGES", "-2", "advisor.consult.include_context_messages: -2: must be at least 0"},
		{"HORIZON_ADVISOR_DELIVERY_CONCERN", "wake", `advisor.delivery.concern: "wake": only a blocker may wake the worker`},
		{"HORIZON_ADVISOR_DELIVERY_NIT", "mail", `advisor.delivery.nit: "mail": use wake (blockers only), deliver or record`},
		{"HORIZON_ADVISOR_TOOLS", "read,bash", `advisor.tools: "bash": the reviewer is read-only`},
		{"HORIZON_ADVISOR_SYSTEM_PROMPT", "/nonexistent/reviewer.md", `advisor.system_prompt: "/nonexistent/reviewer.md": give the absolute path of a readable file`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			isolate(t)
			t.Setenv(tc.env, tc.value)
			_, err := Load(Options{UserFile: "-none-"})
			require.ErrorContains(t, err, tc.want)
		})
	}
}
