package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
	"github.com/horizon/horizon/ladder"
)

// sent records the events a workflow asked the Notify activity to send.
type sent struct {
	mu     sync.Mutex
	events []activities.NotifyInput
}

func (s *sent) capture(e *testsuite.TestWorkflowEnvironment) {
	e.OnActivity(a.Notify, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.NotifyInput) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.events = append(s.events, in)
		return nil
	})
}

// kinds lists "kind subject" of every event, in order.
func (s *sent) kinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.events {
		out = append(out, string(ev.Kind)+" "+ev.Subject)
	}
	return out
}

// requireNamed checks that every event names what it is about by title
// (the run's goal, or the report's date), in its title and its text.
func (s *sent) requireNamed(t *testing.T, title func(activities.NotifyInput) string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.events)
	for _, ev := range s.events {
		want := title(ev)
		require.Equal(t, want, ev.Title, "%s names its subject by title", ev.Kind)
		require.Contains(t, ev.Text, want, "%s's text names its subject", ev.Kind)
	}
}

// byGoal is requireNamed's title of a run's events: its goal.
func byGoal(goal string) func(activities.NotifyInput) string {
	return func(activities.NotifyInput) string { return goal }
}

func (s *sent) find(k notify.Kind) activities.NotifyInput {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events {
		if ev.Kind == k {
			return ev
		}
	}
	return activities.NotifyInput{}
}

// A planned run tells of a blocked feature when it is blocked, and of its
// end (with the handoff) once: not when it waits blocked.
func TestNotifyBlockedAndEnded(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"), ft("f3", "f1"))))
	w.reports["f1"] = []*horizon.Report{{Status: "blocked", Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "STRIPE_KEY is unset in the environment"}}}
	e := w.env()
	var s sent
	s.capture(e)
	var atBlock []string
	e.RegisterDelayedCallback(func() {
		atBlock = s.kinds()
		e.UpdateWorkflow(UpdateUnblock, "ok", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}},
			Unblock{Note: "STRIPE_KEY added"})
	}, time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	st, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, st.Status)
	require.Equal(t, []string{"feature_blocked f1"}, atBlock, "the blocker is told while the run waits; the run has not ended")
	require.Equal(t, []string{"feature_blocked f1", "run_ended completed"}, s.kinds())
	b := s.find(notify.FeatureBlocked)
	require.Equal(t, "run-1", b.RunID)
	require.Equal(t, 1, b.Seq)
	require.Contains(t, b.Text, "missing_credential")
	require.Contains(t, b.Text, "STRIPE_KEY is unset")
	require.Contains(t, b.Text, `feature f1 ("feature f1")`, "the feature by its title too")
	s.requireNamed(t, byGoal("Make add.sh add"))
	end := s.find(notify.RunEnded)
	require.Contains(t, end.Text, "completed")
	require.Contains(t, end.Text, "handoff: /runs/run-1/handoff.md")
}

// Under semi autonomy the run tells a person it waits at the milestone.
func TestNotifyApprovalWaiting(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1")), ms("docs", ft("f2"))))
	e := w.env()
	var s sent
	s.capture(e)
	var atWait []string
	e.RegisterDelayedCallback(func() {
		atWait = s.kinds()
		e.UpdateWorkflow(UpdateApprove, "ok", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}},
			Approve{Subject: "m2"})
	}, time.Hour)
	in := plannedInput()
	in.Autonomy = horizon.AutonomySemi
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	_, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, []string{"approval_waiting milestone:m2"}, atWait)
	require.Equal(t, []string{"approval_waiting milestone:m2", "run_ended completed"}, s.kinds())
	require.Contains(t, s.find(notify.ApprovalWaiting).Text, "horizon approve run-1")
	s.requireNamed(t, byGoal("Make add.sh add"))
}

// Every way a run ends is told, with how: here a one-feature run that
// used up its attempts.
func TestNotifyRunEndedFailed(t *testing.T) {
	e := newEnv(t)
	var s sent
	s.capture(e.TestWorkflowEnvironment)
	e.sessions([]activities.SessionOutput{satisfied}, nil)
	e.gates("fail")
	in := input()
	in.MaxAttempts = 1
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	_, err := result(t, e)
	require.Error(t, err)
	require.Equal(t, []string{"run_ended failed"}, s.kinds())
	require.Contains(t, s.find(notify.RunEnded).Text, "handoff: /runs/run-1/handoff.md")
	s.requireNamed(t, byGoal("Make add.sh add"))
}

// A run paused at its day ceiling tells a person once per ceiling.
func TestNotifySpendPaused(t *testing.T) {
	e := ladderEnv(t, allTiers)
	var s sent
	s.capture(e.TestWorkflowEnvironment)
	e.OnActivity(a.DaySpend, mock.Anything).Return(1.5, nil)
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		if in.Role == "auditor" {
			return accept, nil
		}
		return satisfied, nil
	})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateSetDayCeiling, "raise", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}, 10.0)
	}, 150*time.Minute) // the route asks again every hour: still one event
	in := input()
	in.Model, in.DayCeiling = "", 1.0
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	_, err := result(t, e)
	require.NoError(t, err)
	var paused []activities.NotifyInput
	for _, ev := range s.events {
		if ev.Kind == notify.SpendPaused {
			paused = append(paused, ev)
		}
	}
	require.Len(t, paused, 1, "asking again while paused at the same ceiling sends nothing more")
	require.Equal(t, "run=0.0000,day=1.0000", paused[0].Subject)
	require.Contains(t, paused[0].Text, "day ceiling")
	require.Equal(t, "run_ended completed", s.kinds()[len(s.kinds())-1])
	s.requireNamed(t, byGoal("Make add.sh add"))
}

// The daily pass tells of each stalled run and of the report, with its path.
func TestNotifyDailyPass(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	e := ts.NewTestWorkflowEnvironment()
	e.RegisterWorkflow(DailyPassWorkflow)
	e.RegisterActivity(&activities.Activities{})
	var s sent
	s.capture(e)
	e.OnActivity(a.DailyReport, mock.Anything, mock.Anything).Return(activities.DailyOutput{
		Date: "2026-12-01", Markdown: "/home/reports/2026-12-01.md", JSON: "/home/reports/2026-12-01.json", Summary: "1 landed, 1 stalled",
		Stalled: []horizon.Stall{{RunID: "run-7", Goal: "Skip holidays\nin the date ranges", Feature: "f2", Kind: horizon.StallKind("same_failing"), Attempts: 6}},
	}, nil)
	e.OnSignalExternalWorkflow(mock.Anything, "run-7", "", SignalStalled, mock.Anything).Return(nil)
	e.ExecuteWorkflow(DailyPassWorkflow, DailyPassInput{StallAttempts: 6})
	require.NoError(t, e.GetWorkflowError())
	require.Equal(t, []string{"stalled 2026-12-01", "daily_report 2026-12-01"}, s.kinds())
	require.Equal(t, "run-7", s.find(notify.Stalled).RunID)
	require.Contains(t, s.find(notify.Stalled).Text, "feature f2")
	require.Contains(t, s.find(notify.DailyReport).Text, "/home/reports/2026-12-01.md")
	s.requireNamed(t, func(ev activities.NotifyInput) string {
		if ev.Kind == notify.DailyReport {
			return "2026-12-01"
		}
		return "Skip holidays"
	})
}

// throttleEnv is a run whose only worker tier is the metered T3, with a
// metered auditor; local names the local model per role, if any.
func throttleEnv(t *testing.T, tiers ladder.Availability, local map[horizon.Role]string, models *[]string) *env {
	var ts testsuite.WorkflowTestSuite
	e := &env{TestWorkflowEnvironment: ts.NewTestWorkflowEnvironment()}
	registerRuns(e)
	e.RegisterActivity(&activities.Activities{})
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{
		Gate:   ".horizon/verify.sh",
		Models: map[horizon.Role]string{"worker": "cloud/big", "auditor": "cloud/review"},
		Paid:   map[horizon.Role]bool{"worker": true, "auditor": true},
		Tiers:  tiers, Local: local,
	}, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lane"}, nil)
	e.mockHandoff()
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		*models = append(*models, string(in.Role)+" "+in.Model)
		out := satisfied
		if in.Role == "auditor" {
			out = accept
		}
		if Paid := in.Model != "local/coder" && in.Model != "local/review"; Paid {
			out.Usage.Cost = 0.06
		} else {
			out.Usage.Cost = 0
		}
		return out, nil
	})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	return e
}

var meteredOnly = ladder.Availability{
	ladder.T0: {Reason: "ast-grep not found"},
	ladder.T1: {Reason: "no local build model connected"},
	ladder.T2: {Reason: "no reader configured"},
	ladder.T3: {Available: true, Applier: activities.ApplierOpenCode, Model: "cloud/big"},
	ladder.T4: {Reason: "none"},
}

// Near the ceiling, a metered auditor whose role a local model ranks for
// runs on that local model: the worker's call brought the run past the
// throttle point.
func TestThrottleAuditorGoesLocal(t *testing.T) {
	var models []string
	e := throttleEnv(t, meteredOnly, map[horizon.Role]string{"auditor": "local/review"}, &models)
	in := input()
	in.Model, in.Ceiling, in.ThrottleAt = "", 0.1, 0.5
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []string{"worker cloud/big", "auditor local/review"}, models)
	require.Equal(t, "local/review", s.Attempts[0].AuditorModel, "the attempt records the auditor's model")
	require.InDelta(t, 0.06, s.Usage.Cost, 1e-9)
}

// With no local model for the auditor, the run pauses before the metered
// auditor call: the ceiling is passed by at most the one call in flight
// (the worker's), never by a second.
func TestThrottlePausesBeforeMeteredAuditor(t *testing.T) {
	var models []string
	e := throttleEnv(t, meteredOnly, nil, &models)
	var s sent
	s.capture(e.TestWorkflowEnvironment)
	var paused horizon.RunState
	var atPause []string
	e.RegisterDelayedCallback(func() {
		paused = query(t, e.TestWorkflowEnvironment)
		atPause = append(atPause, models...)
		e.UpdateWorkflow(UpdateSetCeiling, "raise", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}, 1.0)
	}, 30*time.Minute)
	in := input()
	in.Model, in.Ceiling, in.ThrottleAt = "", 0.05, 1
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	st, err := result(t, e)
	require.NoError(t, err, "%+v", st)
	require.Equal(t, horizon.PhasePaused, paused.Phase)
	require.Contains(t, paused.Reason, "auditor")
	require.Equal(t, []string{"worker cloud/big"}, atPause, "no metered auditor call past the ceiling")
	require.InDelta(t, 0.06, paused.Usage.Cost, 1e-9, "over the $0.05 ceiling by the one call in flight, no more")
	require.Contains(t, s.kinds(), "spend_paused run=0.0500,day=0.0000")
	require.Equal(t, []string{"worker cloud/big", "auditor cloud/review"}, models, "raised, the auditor runs metered")
	require.Equal(t, horizon.StatusCompleted, st.Status)
}

// run.line_ceiling reaches the card: an attempt that changed more lines
// raises over_line_ceiling; one under it does not.
func TestLineCeilingTrigger(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines int
		want  bool
	}{{"over", 500, true}, {"under", 300, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := ladderEnv(t, allTiers)
			e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(satisfied, nil)
			e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
				if in.Attempt == 0 {
					return horizon.GateRun{Verdict: "pass", Tree: "base"}, nil
				}
				return horizon.GateRun{Verdict: "fail", ExitCode: 1, Failing: []string{"TestAdd"}, Tree: "t", ChangedFiles: []string{"add.sh"}, ChangedLines: tc.lines}, nil
			})
			in := input()
			in.Model, in.MaxAttempts, in.LineCeiling = "", 1, 400
			e.ExecuteWorkflow(SingleRunWorkflow, in)
			s, err := result(t, e)
			require.Error(t, err)
			var kinds []string
			for _, tr := range s.Attempts[0].Triggers {
				kinds = append(kinds, tr.Kind)
			}
			if tc.want {
				require.Contains(t, kinds, string(ladder.TriggerOverLineCeiling))
			} else {
				require.NotContains(t, kinds, string(ladder.TriggerOverLineCeiling))
			}
		})
	}
}
