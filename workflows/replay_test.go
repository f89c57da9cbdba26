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
// history RUN`) against today's workflows: a one-feature run
// (SingleRunWorkflow, single-run-*.json), planned runs
// (PlannedRunWorkflow, planned-run-kind-*.json, one continued as new) with
// a FeatureWorkflow child, a supervisor that started its runs as
// PlannedRunWorkflow (supervisor-run-kinds-*.json) and its decomposition
// (PlanWorkflow), the schedules' DecomposeWorkflow and DailyPassWorkflow,
// a background task's TaskWorkflow continued after a daemon crash and a
// follow-up's (task-follow-up-after-crash.json) continued after one, a
// LoopWorkflow that compacted its session once and one the advisor watched
// (loop-advised-note-delivered.json: a note delivered in activation 1),
// and a SpecialistDraftWorkflow whose lead read the repository and
// drafted a manifest (specialist-draft.json). The histories recorded
// before each kind of run had its own type stay as they were: RunWorkflow
// with and without Planned (run-*.json, planned-run-two-milestones.json,
// planned-run-continued-as-new.json) and a supervisor that started
// RunWorkflow children (supervisor-three-items.json); no test writes them
// any more. A change that would make a run in flight take a different path
// after an upgrade fails here, not in a user's week-long run. The other
// fixtures are refreshed by running the e2e tests that record them with
// HORIZON_RECORD_HISTORY=1: internal/e2e/planned_test.go and
// supervisor_test.go, advisor_test.go (the one-feature run), task_test.go,
// loop_test.go, loop_advisor_test.go, review_test.go (a feature whose audits got dispositions,
// skipped while it ran, and its run), research_test.go (a feature
// whose research attempt read the web) and specialist_generate_test.go.
//
// feature-advised-on-session-host.json is a watched feature on a cluster
// (internal/e2e/cluster_advisor_test.go): its worker session said which
// worker ran it (the session-host signal) and its watchdog ran on that
// worker's host queue. loop-advised-on-session-host.json is a watched
// loop on a cluster (internal/e2e/cluster_loop_advisor_test.go): each
// activation said which worker ran it and its watchdog ran on that
// worker's host queue, delivering a confirmed note in activation 1.
//
// planned-run-local-steps.json and planned-feature-local-steps.json (its
// feature f2, accepted after a rejection) are a planned run recorded
// since its short git and file steps run as local activities
// (changeLocalSteps, steps.go): internal/e2e/planned_test.go writes these
// now; the planned-run-kind-*.json it wrote before stay as they were.
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
	for _, name := range []string{RunWorkflowName, PlannedRunWorkflowName, SingleRunWorkflowName, FeatureWorkflowName, PlanWorkflowName, SupervisorWorkflowName, DecomposeWorkflowName, DailyPassWorkflowName, TaskWorkflowName, LoopWorkflowName, SpecialistDraftWorkflowName} {
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
