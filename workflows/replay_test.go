package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplay replays histories of real runs (exported with `horizon
// history RUN`) against today's workflows: single-feature runs, planned
// runs (RunWorkflow with Planned, one continued as new) and a planned
// run's FeatureWorkflow child. A change that would make a run in flight
// take a different path after an upgrade fails here, not in a user's
// week-long run. The planned fixtures are refreshed by running the planned
// e2e tests with HORIZON_RECORD_HISTORY=1 (internal/e2e/planned_test.go).
func TestReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	types := map[string]int{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			types[workflowType(t, f)]++
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: RunWorkflowName})
			r.RegisterWorkflowWithOptions(FeatureWorkflow, workflow.RegisterOptions{Name: FeatureWorkflowName})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
	require.Positive(t, types[RunWorkflowName], "no RunWorkflow history in testdata")
	require.Positive(t, types[FeatureWorkflowName], "no FeatureWorkflow history in testdata")
}

// workflowType reads the workflow type from a history's first event.
func workflowType(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var h struct {
		Events []struct {
			Started struct {
				WorkflowType struct {
					Name string `json:"name"`
				} `json:"workflowType"`
			} `json:"workflowExecutionStartedEventAttributes"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal(b, &h), path)
	require.NotEmpty(t, h.Events, path)
	return h.Events[0].Started.WorkflowType.Name
}
