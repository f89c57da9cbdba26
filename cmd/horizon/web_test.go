package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

func TestWebFlags(t *testing.T) {
	testFlags(t, newWebCmd, []flagCase[webOptions]{
		{name: "defaults", args: nil, want: webOptions{}},
		{name: "json", args: []string{"--json"}, want: webOptions{json: true}},
		{name: "an argument", args: []string{"8000"}, err: "takes no arguments"},
	})
}

// Every status the engine gives a run has a name in the API.
func TestWebEngineStatus(t *testing.T) {
	for v, name := range enumspb.WorkflowExecutionStatus_name {
		st := enumspb.WorkflowExecutionStatus(v)
		if st == enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
			continue
		}
		require.NotEmpty(t, engineStatus[st], name)
	}
}
