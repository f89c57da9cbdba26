package core

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/horizon/horizon/workflows"
)

// A supervisor's outage is its decomposition's: the pending PlanWorkflow
// child's retried session, named after the item. Its runs (other
// children) are not read: each shows its own outage.
func TestSupervisorOutage(t *testing.T) {
	failed := time.Now().Add(-time.Minute)
	running := &workflowpb.WorkflowExecutionInfo{Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}
	sup := &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: running,
		PendingChildren: []*workflowpb.PendingChildExecutionInfo{
			{WorkflowId: "run-20261201-000000-abcdq1", WorkflowTypeName: workflows.PlannedRunWorkflowName},
			{WorkflowId: "supervisor-abcd.plan.r-1234", WorkflowTypeName: workflows.PlanWorkflowName},
		},
	}
	c := mocks.NewClient(t)
	c.On("DescribeWorkflowExecution", mock.Anything, "supervisor-abcd.plan.r-1234", "").Return(&workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: running,
		PendingActivities: []*workflowpb.PendingActivityInfo{{
			ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 3, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			LastFailure:             &failurepb.Failure{Message: "APIError (HTTP 503): Service Unavailable"},
			LastAttemptCompleteTime: timestamppb.New(failed), NextAttemptScheduleTime: timestamppb.New(failed.Add(2 * time.Minute)),
		}},
	}, nil)
	o := SupervisorOutage(context.Background(), c, sup)
	require.NotNil(t, o)
	require.Equal(t, "model provider unreachable", o.On)
	require.Equal(t, "decomposition of r-1234", o.Feature)
	require.Equal(t, 2, o.Tries)
	require.Contains(t, o.Line(), "model provider unreachable (decomposition of r-1234) since ")

	// No decomposition in flight, or a supervisor that has ended: none.
	idle := &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: running, PendingChildren: sup.PendingChildren[:1]}
	require.Nil(t, SupervisorOutage(context.Background(), c, idle))
	ended := &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED},
		PendingChildren:       sup.PendingChildren,
	}
	require.Nil(t, SupervisorOutage(context.Background(), c, ended))
}
