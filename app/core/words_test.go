package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

func TestGCDecide(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	keep := 72 * time.Hour
	tests := []struct {
		name   string
		end    runEnd
		keep   time.Duration
		remove bool
		why    string
	}{
		{"unknown", runEnd{}, keep, true, "does not know"},
		{"open", runEnd{known: true, open: true}, keep, false, "open"},
		{"completed just now", runEnd{known: true, completed: true, closedAt: now}, keep, true, "completed"},
		{"failed long ago", runEnd{known: true, closedAt: now.Add(-100 * time.Hour)}, keep, true, "ended 100h ago"},
		{"failed recently", runEnd{known: true, closedAt: now.Add(-time.Hour)}, keep, false, "kept until"},
		{"keep 0", runEnd{known: true, closedAt: now}, 0, true, "ended 0s ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			remove, why := gcDecide(tt.end, tt.keep, now)
			require.Equal(t, tt.remove, remove, why)
			require.Contains(t, why, tt.why)
		})
	}
}

func TestPlainReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no accepted change after 3 attempts", "no accepted change after 3 attempts"},
		{"model fake/x is unknown (type: UnknownModel, retryable: false)", "model fake/x is unknown"},
		{"activity failed (type: AgentSession, retryable: true): session timed out (type: Timeout, retryable: false)", "activity failed: session timed out"},
		{"a note (type of change: big)", "a note (type of change: big)"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, PlainReason(tt.in))
	}
}

func TestOrList(t *testing.T) {
	require.Equal(t, "", OrList(nil))
	require.Equal(t, "a", OrList([]string{"a"}))
	require.Equal(t, "a or b", OrList([]string{"a", "b"}))
	require.Equal(t, "a, b or c", OrList([]string{"a", "b", "c"}))
}

// With no model the leaderboard ranks, start says so once for every role
// without one, in a few lines ending with what to run.
func TestNoRoleModelsSaysItOnce(t *testing.T) {
	lb, err := activities.LoadLeaderboard("")
	require.NoError(t, err)
	for _, tt := range []struct {
		name      string
		connected []string
		want      []string
	}{
		{"a model the leaderboard does not rank", []string{"fake/fake-coder"}, []string{
			"no model for worker (build) and auditor (analyze):",
			"(fake/fake-coder).",
			"--model fake/fake-coder (or HORIZON_MODELS_DEFAULT=fake/fake-coder)",
			"opencode auth login"}},
		{"many", []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"}, []string{"(a/1, a/2, a/3, a/4, a/5 and 2 more (`horizon models`))", "--model a/1"}},
		{"none", nil, []string{"it reaches none", "opencode auth login"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := activities.ResolveRoles(lb, "", tt.connected)
			require.Error(t, err)
			msg := NoRoleModels(err, tt.connected)
			for _, w := range tt.want {
				require.Contains(t, msg, w)
			}
			require.LessOrEqual(t, strings.Count(msg, "\n"), 2, "a few lines: %s", msg)
			require.Equal(t, 1, strings.Count(msg, "no model for"), "said once: %s", msg)
		})
	}
	require.Empty(t, NoRoleModels(errors.New("models.file: unreadable"), nil), "another error is left as it is")
}

// --kind is read by the protocol's one parser; an unknown kind is bad
// usage (exit 2) that names the flag, the value and every accepted kind.
func TestCheckKind(t *testing.T) {
	tests := []struct {
		in   string
		want horizon.FeatureKind
		err  string
	}{
		{"open", horizon.KindOpen, ""},
		{" Mechanical ", horizon.KindMechanical, ""},
		{"bounded", horizon.KindBounded, ""},
		{"", "", ""},
		{"huge", "", `--kind "huge": use mechanical, bounded or open`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, err := CheckKind(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				require.ErrorAs(t, err, new(*InputError))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, k)
		})
	}
}
