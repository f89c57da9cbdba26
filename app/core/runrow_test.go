package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// Every status the engine gives a run has a name, and a row says open,
// cancelled or failed from it alone.
func TestRunRowStatus(t *testing.T) {
	for v, name := range enumspb.WorkflowExecutionStatus_name {
		st := enumspb.WorkflowExecutionStatus(v)
		if st == enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
			continue
		}
		require.NotEmpty(t, EngineStatus(st), name)
	}
	tests := []struct {
		status                  enumspb.WorkflowExecutionStatus
		open, cancelled, failed bool
	}{
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, true, false, false},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, true, false, false},
		{enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED, true, false, false},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, false, false, false},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, false, true, false},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, false, false, true},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, false, false, true},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, false, false, true},
	}
	for _, tt := range tests {
		r := RunRow{Status: EngineStatus(tt.status)}
		require.Equal(t, tt.open, r.Open(), tt.status.String())
		require.Equal(t, tt.cancelled, r.Cancelled(), tt.status.String())
		require.Equal(t, tt.failed, r.Failed(), tt.status.String())
	}
}
