package workflows

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

const validPlan = `{"milestones": [
  {"title": "Core", "features": [
    {"id": "f1", "title": "Fix add", "acceptance": ["add 2 3 = 5"], "paths": ["add.sh"], "kind": "bounded"},
    {"id": "f2", "title": "Test negatives", "acceptance": ["add -2 -3 = -5"], "paths": ["tests/**"], "kind": "bounded"}]},
  {"title": "Docs", "features": [
    {"id": "f3", "title": "Document add", "acceptance": ["README mentions add.sh"], "paths": ["README.md"], "kind": "mechanical"}]}],
  "ambiguity": "LOW", "assumptions": ["integers only"]}`

// An invalid plan goes back to the lead with its problems named; the next,
// valid one is returned.
func TestPlanWorkflowRetriesInvalidPlans(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.RegisterWorkflow(PlanWorkflow)
	e.RegisterActivity(&activities.Activities{})
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(activities.PreflightOutput{Models: map[horizon.Role]string{horizon.RoleWorker: "p/m"}}, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lane"}, nil)
	var removed []activities.RemoveLanesInput
	e.OnActivity(a.RemoveLanes, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RemoveLanesInput) (activities.RemoveLanesOutput, error) {
		removed = append(removed, in)
		return activities.RemoveLanesOutput{}, nil
	})
	var briefs []string
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		require.Equal(t, horizon.RoleLead, in.Role)
		briefs = append(briefs, in.Prompt)
		switch len(briefs) {
		case 1:
			return activities.SessionOutput{ProtocolError: "protocol_error: no ```horizon-plan block in the final message"}, nil
		case 2:
			return activities.SessionOutput{ProtocolError: `invalid plan: feature f1: kind "huge" is not mechanical|bounded|open`}, nil
		}
		var block horizon.PlanBlock
		require.NoError(t, json.Unmarshal([]byte(validPlan), &block))
		p, err := horizon.PlanFromBlock("Make add.sh add", block)
		require.NoError(t, err)
		return activities.SessionOutput{Plan: &p, Usage: horizon.Usage{Input: 10, Cost: 0.01}}, nil
	})
	e.ExecuteWorkflow(PlanWorkflow, PlanInput{RunID: "plan-1", Goal: "Make add.sh add", Repo: "/repo", BaseCommit: "abc"})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var res PlanResult
	require.NoError(t, e.GetWorkflowResult(&res))
	require.Equal(t, 3, res.Tries)
	require.Len(t, res.Rejected, 2)
	require.Contains(t, briefs[1], "horizon-plan block")
	require.Contains(t, briefs[2], "huge")
	require.Len(t, res.Plan.Milestones, 2)
	require.Equal(t, "f3", res.Plan.Milestones[1].Features[0].ID)
	require.Equal(t, []string{"integers only"}, res.Plan.Assumptions)
	require.Equal(t, []activities.RemoveLanesInput{{RunID: "plan-1", Repo: "/repo"}}, removed, "the planning lane goes when the lead is done")
}

// meteredLead is a planned run's preflight: a metered lead (the T4 rung)
// and, when local is set, the local model that ranks for the lead.
func meteredLead(local string) *activities.PreflightOutput {
	pre := &activities.PreflightOutput{
		Gate:   ".horizon/verify.sh",
		Models: map[horizon.Role]string{horizon.RoleWorker: "local/coder", horizon.RoleAuditor: "local/review"},
		Tiers: ladder.Availability{
			ladder.T0: {Reason: "no codemods"},
			ladder.T1: {Available: true, Applier: activities.ApplierOpenCode, Model: "local/coder"},
			ladder.T2: {Reason: "no reader configured"},
			ladder.T3: {Reason: "none"},
			ladder.T4: {Available: true, Applier: activities.ApplierOpenCode, Model: "cloud/lead"},
		},
	}
	if local != "" {
		pre.Local = map[horizon.Role]string{horizon.RoleLead: local}
	}
	return pre
}

// Near the daily ceiling (today's spend across runs), the lead's first
// planning session runs on the local model that ranks for the lead, on
// the run's own queue, like the auditor's: not on the metered T4 rung.
func TestPlanningLeadThrottledToLocal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		daySpent float64
		want     string
	}{
		{"near the day ceiling", 0.95, "plan local/lead run-queue"},
		{"far from it", 0.1, "plan cloud/lead paid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, block(ms("core", ft("f1"))))
			w.pre = meteredLead("local/lead")
			e := w.env()
			e.OnActivity(a.DaySpend, mock.Anything).Return(tc.daySpent, nil)
			in := plannedInput()
			in.Model, in.DayCeiling, in.ThrottleAt, in.PaidQueue = "", 1, 0.8, "paid"
			e.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "run-queue"})
			e.ExecuteWorkflow(PlannedRunWorkflow, in)
			s, err := planResult(t, e)
			require.NoError(t, err)
			require.Equal(t, horizon.StatusCompleted, s.Status)
			require.Equal(t, []string{tc.want}, w.leads)
		})
	}
}

// With no local model for the lead, the run pauses before the lead's
// metered planning call until a ceiling is raised; then it plans.
func TestPlanningLeadPausesWithoutLocal(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.pre = meteredLead("")
	e := w.env()
	e.OnActivity(a.DaySpend, mock.Anything).Return(0.95, nil)
	var paused horizon.RunState
	var leadsAtPause int
	e.RegisterDelayedCallback(func() {
		paused = query(t, e)
		leadsAtPause = len(w.leads)
		e.UpdateWorkflow(UpdateSetDayCeiling, "raise", &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}, 10.0)
	}, 30*time.Minute)
	in := plannedInput()
	in.Model, in.DayCeiling, in.ThrottleAt = "", 1, 0.8
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.PhasePaused, paused.Phase)
	require.Contains(t, paused.Reason, "the lead's model cloud/lead is metered")
	require.Zero(t, leadsAtPause, "no metered planning call past the throttle point")
	require.Len(t, w.leads, 1)
	require.Contains(t, w.leads[0], "plan cloud/lead")
	require.Equal(t, horizon.StatusCompleted, s.Status)
}
