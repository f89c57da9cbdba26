package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
)

// TestReplay replays histories of real runs (exported with `horizon
// history RUN`) against today's workflows: single-feature runs
// (SingleRunWorkflow), planned runs (PlannedRunWorkflow), the same kinds
// recorded as RunWorkflow before each had its own type (run-*.json and
// planned-run-*.json without "kind": RunWorkflow with and without
// Planned, one continued as new), a planned run's FeatureWorkflow child,
// a supervisor with its decomposition (PlanWorkflow), the schedules'
// DecomposeWorkflow and DailyPassWorkflow, and a background task's
// TaskWorkflow continued after a daemon crash, and a LoopWorkflow that
// compacted its session once. A change that would make a run in flight
// take a different path after an upgrade fails here, not in a user's
// week-long run. The planned fixtures are refreshed by running the planned
// and supervisor e2e tests with HORIZON_RECORD_HISTORY=1
// (internal/e2e/planned_test.go, supervisor_test.go), the one-feature
// run's by internal/e2e/advisor_test.go, the task's by
// internal/e2e/task_test.go, the loop's by internal/e2e/loop_test.go.
// The RunWorkflow fixtures are not refreshed: no run starts as one now.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	types := map[string]int{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			types[workflowType(t, f)]++
			r := worker.NewWorkflowReplayer()
			Register(r)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
	// Every workflow type keeps a history recorded from a real run.
	for _, name := range []string{RunWorkflowName, PlannedRunWorkflowName, SingleRunWorkflowName, FeatureWorkflowName, PlanWorkflowName, SupervisorWorkflowName, DecomposeWorkflowName, DailyPassWorkflowName, TaskWorkflowName, LoopWorkflowName} {
		require.Positive(t, types[name], "no %s history in testdata", name)
	}
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
