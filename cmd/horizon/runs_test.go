package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

func plannedState(t *testing.T) *horizon.RunState {
	t.Helper()
	p, err := horizon.PlanFromBlock("Add CSV export", horizon.PlanBlock{Ambiguity: "LOW", Milestones: []horizon.PlanBlockMilestone{
		{Title: "Export", Features: []horizon.PlanBlockFeature{
			{ID: "f1", Title: "CSV writer", Kind: "bounded"},
			{ID: "f2", Title: "Fetch rates", Kind: "open"},
		}},
		{Title: "CLI", Features: []horizon.PlanBlockFeature{{ID: "f3", Title: "--csv flag", Kind: "bounded"}}},
	}})
	require.NoError(t, err)
	return &horizon.RunState{RunID: "run-1", Branch: "horizon/run-1", BaseCommit: "0123456789abcdef", Status: horizon.StatusRunning,
		Phase: horizon.PhaseFeatures, Plan: &p, Attempts: []horizon.Attempt{}}
}

// clone copies a state deeply enough for the follower to compare.
func clone(s *horizon.RunState) *horizon.RunState {
	c := *s
	p := *s.Plan
	p.Milestones = nil
	for _, m := range s.Plan.Milestones {
		m.Features = append([]horizon.Feature(nil), m.Features...)
		p.Milestones = append(p.Milestones, m)
	}
	c.Plan = &p
	return &c
}

var clock = regexp.MustCompile(`\d\d:\d\d:\d\d`)

// Following a planned run prints feature-level events and, at a
// checkpoint, the exact approve command.
func TestFollowPlannedRun(t *testing.T) {
	var out bytes.Buffer
	f := &follower{w: &out}
	s := plannedState(t)
	f.show(s)
	require.Contains(t, out.String(), "plan: 2 milestones, 3 features, ambiguity LOW")
	require.Contains(t, out.String(), "m1 Export [pending]: f1, f2")

	out.Reset()
	s = clone(s)
	require.NoError(t, s.Plan.Start("f1"))
	f.show(s)
	require.Contains(t, out.String(), "f1 started: CSV writer")

	out.Reset()
	s = clone(s)
	pass := horizon.Attempt{N: 1, Tier: "T1", Model: "local/m", Outcome: horizon.OutcomeAccepted,
		Gate: &horizon.GateRun{ReceiptID: "r-1", Verdict: "pass"}, Audit: &horizon.Audit{Verdict: "accept"}, Usage: horizon.Usage{Cost: 0.01}}
	require.NoError(t, s.Plan.RecordAttempt("f1", pass, 2))
	require.NoError(t, s.Plan.Accept("f1", "abcdef1234567890"))
	require.NoError(t, s.Plan.Start("f2"))
	f.show(s)
	got := clock.ReplaceAllString(out.String(), "TT")
	require.Contains(t, got, "TT    f1 attempt 1 gate pass (exit 0, 0 ms)\n")
	require.Contains(t, got, "TT    f1 accepted after 1 attempt · commit abcdef123456 · receipt r-1\n")
	require.Contains(t, got, "TT    f2 started: Fetch rates\n")

	out.Reset()
	s = clone(s)
	require.NoError(t, s.Plan.Block("f2", horizon.Blocker{Type: "missing_credential", Evidence: "RATES_API_KEY is not set; GET /rates returned 401"}))
	s.Phase = horizon.PhaseApproval
	s.Waiting = &horizon.Checkpoint{Kind: horizon.CheckpointMilestone, Subject: "m2", Summary: "m1 is done but for f2; next: m2 CLI"}
	f.show(s)
	got = clock.ReplaceAllString(out.String(), "TT")
	require.Contains(t, got, "f2 blocked (missing_credential): RATES_API_KEY is not set")
	require.Contains(t, got, `unblock: horizon unblock run-1 f2 --note "..."`)
	require.Contains(t, got, "TT  running    waiting for approval\n")
	require.Contains(t, got, "waiting for your approval of milestone m2: m1 is done but for f2; next: m2 CLI")
	require.Contains(t, got, "approve: horizon approve run-1 --subject m2\n")

	out.Reset()
	f.show(clone(s))
	require.Empty(t, out.String(), "nothing changed, nothing printed")
}

func TestSummaryPlannedRun(t *testing.T) {
	s := plannedState(t)
	require.NoError(t, s.Plan.Start("f1"))
	require.NoError(t, s.Plan.RecordAttempt("f1", horizon.Attempt{N: 1, Outcome: horizon.OutcomeAccepted,
		Gate: &horizon.GateRun{ReceiptID: "r-1", Verdict: "pass"}, Audit: &horizon.Audit{Verdict: "accept"}}, 2))
	require.NoError(t, s.Plan.Accept("f1", "abc"))
	require.NoError(t, s.Plan.Block("f2", horizon.Blocker{Type: "missing_credential", Evidence: "RATES_API_KEY is not set; 401"}))
	s.Status, s.Reason = horizon.StatusBlocked, "only blocked work is left"
	var out bytes.Buffer
	require.Equal(t, ExitRunEnded, summary(&out, s))
	require.Contains(t, out.String(), "run run-1 blocked: only blocked work is left\n  features 1 of 3 accepted · 1 blocked · 1 not done · attempts 1")
	require.Contains(t, out.String(), `f2 blocked: horizon unblock run-1 f2 --note "..."`)
	require.Contains(t, out.String(), "git log --stat 0123456789ab..horizon/run-1")

	s.Status, s.Reason = horizon.StatusCompleted, ""
	out.Reset()
	require.Equal(t, ExitOK, summary(&out, s))
	require.NotContains(t, out.String(), "accepted change", "a planned run has no single commit")
}
