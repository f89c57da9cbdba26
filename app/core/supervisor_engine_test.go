package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/horizon/horizon/horizon"
)

func TestClosedStatus(t *testing.T) {
	for s, want := range map[enumspb.WorkflowExecutionStatus]string{
		enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:   "cancelled",
		enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED: "terminated",
		enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:     "failed",
		enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:  "timed out",
		enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:  "completed",
	} {
		require.Equal(t, want, closedStatus(s), s.String())
	}
}

func TestRetrying(t *testing.T) {
	pending := func(name string, attempt int32, msg string) *workflowpb.PendingActivityInfo {
		pa := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: name}, Attempt: attempt}
		if msg != "" {
			pa.LastFailure = &failurepb.Failure{Message: msg}
		}
		return pa
	}
	tests := []struct {
		name    string
		pending []*workflowpb.PendingActivityInfo
		want    string
	}{
		{"nothing pending", nil, ""},
		{"a first attempt", []*workflowpb.PendingActivityInfo{pending("ReadRoadmap", 1, "")}, ""},
		{"a retry without a failure", []*workflowpb.PendingActivityInfo{pending("ReadRoadmap", 2, "")}, ""},
		{"the first retried step", []*workflowpb.PendingActivityInfo{
			pending("SyncRoadmap", 1, ""), pending("ReadRoadmap", 7, "git: index.lock exists"), pending("Other", 3, "x"),
		}, "ReadRoadmap, attempt 7: git: index.lock exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, retrying(tt.pending))
		})
	}
}

// A queued plan a semi or supervised supervisor holds is a need with the
// command that lets it go; an approved one, a goal, or a full supervisor's
// plan is not.
func TestSupervisorNeeds(t *testing.T) {
	sups := []horizon.SupervisorState{
		{ID: "sup-a", Repo: "/src/a", Autonomy: horizon.AutonomySemi, Approved: []string{"q2"}, Queue: horizon.Queue{Entries: []horizon.QueueEntry{
			{ID: "q1", Kind: horizon.EntryPlan, Goal: "Add\nrate limits"},
			{ID: "q2", Kind: horizon.EntryPlan, Goal: "approved already"},
			{ID: "q3", Kind: horizon.EntryGoal, Goal: "a person's goal"},
		}}},
		{ID: "sup-b", Repo: "/src/b", Autonomy: horizon.AutonomyFull, Queue: horizon.Queue{Entries: []horizon.QueueEntry{
			{ID: "q1", Kind: horizon.EntryPlan, Goal: "runs on its own"},
			{ID: "q4", Kind: horizon.EntryPlan, Goal: "held by its own autonomy", Autonomy: horizon.AutonomySupervised},
		}}},
	}
	require.Equal(t, []Need{
		{Kind: NeedApproval, RunID: "sup-a", Subject: "q1", What: "queued plan q1 waits for approval before it runs: Add rate limits", Command: "horizon approve --repo /src/a q1", Supervisor: true},
		{Kind: NeedApproval, RunID: "sup-b", Subject: "q4", What: "queued plan q4 waits for approval before it runs: held by its own autonomy", Command: "horizon approve --repo /src/b q4", Supervisor: true},
	}, SupervisorNeeds(sups))
}
