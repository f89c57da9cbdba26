package horizon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOutageLine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 12, 40, 0, time.UTC)
	tests := []struct {
		name string
		o    Outage
		want string
	}{
		{"with next try", Outage{On: "model provider unreachable", Since: t0, Tries: 14, Next: t0.Add(27 * time.Minute), LastError: "connection refused"},
			"model provider unreachable since 03:12:40 (14 tries, next 03:39:40): connection refused"},
		{"one try, a feature", Outage{On: "OpenCode exited", Feature: "f2", Since: t0, Tries: 1, LastError: "opencode server exited\n  (pid 7)"},
			"OpenCode exited (f2) since 03:12:40 (1 try): opencode server exited (pid 7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.o.Line())
		})
	}
}

func TestOutageKind(t *testing.T) {
	tests := []struct {
		activity, msg, want string
	}{
		{"AgentSession", "opencode session ses_1: APIError: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:4000", "model provider unreachable"},
		{"AgentSession", "opencode session ses_1: APIError (HTTP 503): Service Unavailable", "model provider unreachable"},
		{"AgentSession", "opencode server exited (pid 12) while session ses_1 ran: signal: killed", "OpenCode exited"},
		{"AgentSession", "activity StartToClose timeout", "agent session timed out"},
		{"CommitFeature", "git commit: fatal: Unable to create '/repo/.git/index.lock': File exists.", "git index locked"},
		{"RunGate", "write receipt: no space left on device", "disk full"},
		{"RunGate", "start gate: fork/exec: resource temporarily unavailable", "gate failing to run"},
		{"PrepareLane", "something odd", "PrepareLane failing"},
	}
	for _, tt := range tests {
		t.Run(tt.want+"/"+tt.activity, func(t *testing.T) {
			require.Equal(t, tt.want, OutageKind(tt.activity, tt.msg))
		})
	}
}

// The run's Markdown (the Temporal Web UI) carries the outage it waits on
// as its waiting line, in a one-feature run and in a planned one, and none
// once the run ends.
func TestOutageInMarkdown(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 12, 40, 0, time.UTC)
	o := &Outage{On: "model provider unreachable", Since: t0, Tries: 3, Next: t0.Add(time.Minute), LastError: "connect | ECONNREFUSED"}
	want := "\n**waiting** model provider unreachable since 03:12:40 (3 tries, next 03:13:40): connect \\| ECONNREFUSED\n"
	for _, tc := range []struct {
		name string
		st   RunState
	}{
		{"single", RunState{Status: StatusRunning, Phase: PhaseWorking, Outage: o}},
		{"planned", RunState{Status: StatusRunning, Phase: PhaseFeatures, Outage: o, Plan: &Plan{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, tc.st.Markdown(), want)
			tc.st.Outage = nil
			require.NotContains(t, tc.st.Markdown(), "**waiting**")
			tc.st.Outage = o
			tc.st.End(StatusCompleted, "", "", t0)
			require.Nil(t, tc.st.Outage)
		})
	}
}
