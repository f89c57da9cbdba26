package workflows

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
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
}
