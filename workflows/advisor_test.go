package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

func advisedInput() SingleRunInput {
	in := input()
	in.Limits.Advisor = activities.AdvisorSettings{Enabled: true, Model: "fake/adv", ReviewMode: "step", ReviewInterval: 1,
		MaxToolSteps: 3, MaxNotes: 3, ImmuneTurns: 3, Timeout: time.Minute, RequireEvidence: true}
	return in
}

var (
	wokeBlocker = horizon.AdviceRecord{ID: "r1.1", Review: 1, Severity: horizon.SeverityBlocker, Delivered: horizon.SeverityBlocker,
		Note: "Add subtracts", Evidence: &horizon.AdviceEvidence{File: "add.sh", Line: 2, ObservedFact: "`$1 - $2`"},
		Verdict: horizon.AdviceDelivered, Woke: true}
	refutedNote = horizon.AdviceRecord{ID: "r1.2", Review: 1, Severity: horizon.SeverityConcern, Note: "the zebra is striped", Verdict: horizon.AdviceRefuted, Reason: "add.sh:1 does not show"}
)

// A blocker that woke the worker after its report: the session is
// continued and the report that answers it replaces the old one; the
// advice is on the attempt and given to the auditor.
func TestAdvisorWakeAfterReport(t *testing.T) {
	e := newEnv(t)
	var workers []activities.SessionInput
	var auditBrief string
	answered := activities.SessionOutput{SessionID: "ses_w", Report: &horizon.Report{Status: "satisfied", Summary: "fixed after the advice"}, Usage: horizon.Usage{Input: 30, Cost: 0.003}}
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
			if in.Role == horizon.RoleAuditor {
				auditBrief = in.Prompt
				return accept, nil
			}
			e.runsOn(ctx, in, "horizon@host-a", "horizon@a:1")
			workers = append(workers, in)
			if in.ResumeSessionID != "" {
				return answered, nil
			}
			return satisfied, nil
		})
	var watched activities.AdvisorInput
	e.OnActivity(a.AdvisorWatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AdvisorInput) (activities.AdvisorOutput, error) {
			watched = in
			return activities.AdvisorOutput{Records: []horizon.AdviceRecord{wokeBlocker, refutedNote}, Usage: horizon.Usage{Input: 7, Cost: 0.002}, WokeAfterReport: true}, nil
		}).Once()
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
	e.ExecuteWorkflow(SingleRunWorkflow, advisedInput())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, "fake/adv", watched.Model)
	require.Equal(t, "fake/m", watched.WorkerModel)
	require.Len(t, workers, 2)
	require.Equal(t, "ses_w", workers[1].ResumeSessionID)
	require.Equal(t, satisfied.Usage, workers[1].PriorUsage)
	at := s.Attempts[0]
	require.Equal(t, "fixed after the advice", at.Report.Summary)
	require.Equal(t, []horizon.AdviceRecord{wokeBlocker, refutedNote}, at.Advice)
	require.InDelta(t, 0.01+0.003+0.002, at.Usage.Cost-0.005, 1e-9, "worker, its answer and the advisor count; the auditor's 0.005 too")
	require.Contains(t, auditBrief, "What the advisor told the worker")
	require.Contains(t, auditBrief, "- blocker: Add subtracts (add.sh:2)")
	require.NotContains(t, auditBrief, "zebra", "a refuted note is not context")
}

// A watchdog that never finishes holds the attempt up by advisor.timeout
// and a grace at most, and is recorded as failed.
func TestAdvisorNeverFinishes(t *testing.T) {
	e := newEnv(t)
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
			if in.Role == horizon.RoleAuditor {
				return accept, nil
			}
			e.runsOn(ctx, in, "horizon@host-a", "horizon@a:1")
			return satisfied, nil
		})
	e.OnActivity(a.AdvisorWatch, mock.Anything, mock.Anything).After(10*time.Hour).Return(activities.AdvisorOutput{}, nil).Maybe()
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
	e.ExecuteWorkflow(SingleRunWorkflow, advisedInput())
	s, err := result(t, e)
	require.NoError(t, err)
	at := s.Attempts[0]
	require.Equal(t, horizon.OutcomeAccepted, at.Outcome)
	require.Len(t, at.Advice, 1)
	require.Equal(t, horizon.AdviceFailed, at.Advice[0].Verdict)
	require.Contains(t, at.Advice[0].Reason, "did not finish within advisor.timeout (1m0s)")
	require.Less(t, at.EndedAt.Sub(at.StartedAt), time.Minute+watchGrace+time.Minute, "the gate and audit take no workflow time here")
}

// Off by default: no watchdog, no record.
func TestAdvisorOff(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
	e.ExecuteWorkflow(SingleRunWorkflow, input())
	s, err := result(t, e)
	require.NoError(t, err)
	require.Empty(t, s.Attempts[0].Advice)
}
