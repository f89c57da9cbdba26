package core

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/horizon/horizon/workflows"
)

// RunRow is a run as the engine's visibility store lists it: what is known
// without asking the run. It is the one row every surface lists runs with
// (the console's list, the web's /api/runs, `horizon list`).
type RunRow struct {
	ID     string `json:"id"`
	Goal   string `json:"goal"`
	Repo   string `json:"repo"`
	Branch string `json:"-"` // the run's integration branch, horizon/<id>
	// Status is the engine's word for the workflow: running, completed,
	// failed, cancelled, terminated, timed_out, paused. The run's own
	// status (blocked, waiting, ...) is in its state.
	Status    string    `json:"status"`
	StartedAt time.Time `json:"started_at"`
	ClosedAt  time.Time `json:"closed_at,omitzero"`
	// UI is the run's page in the Temporal Web UI ("" when it has none);
	// a surface that links to it fills it in.
	UI string `json:"ui,omitempty"`
}

// The engine's words for a run's workflow (RunRow.Status).
const (
	EngineRunning    = "running"
	EngineCompleted  = "completed"
	EngineFailed     = "failed"
	EngineCancelled  = "cancelled"
	EngineTerminated = "terminated"
	EngineTimedOut   = "timed_out"
	EnginePaused     = "paused"
)

// engineStatus names a workflow's status in the engine's words; a run that
// continued as new runs on.
var engineStatus = map[enumspb.WorkflowExecutionStatus]string{
	enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:          EngineRunning,
	enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:        EngineCompleted,
	enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:           EngineFailed,
	enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:         EngineCancelled,
	enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:       EngineTerminated,
	enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: EngineRunning,
	enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:        EngineTimedOut,
	enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:           EnginePaused,
}

// EngineStatus is the engine's word for a workflow status ("" for one it
// does not name).
func EngineStatus(s enumspb.WorkflowExecutionStatus) string { return engineStatus[s] }

// Open says the engine still runs the run (running, blocked, waiting,
// paused: all are open workflows).
func (r RunRow) Open() bool { return r.Status == EngineRunning || r.Status == EnginePaused }

// Cancelled says a person (or a stop) cancelled the run.
func (r RunRow) Cancelled() bool { return r.Status == EngineCancelled }

// Failed says the run closed other than completed or cancelled: it
// failed, was terminated or timed out.
func (r RunRow) Failed() bool {
	switch r.Status {
	case EngineFailed, EngineTerminated, EngineTimedOut:
		return true
	}
	return false
}

// Runs lists runs, newest first, matching an extra visibility clause (""
// for none), at most limit (0: all); a run that continued as new is listed
// once, started when its oldest history did.
func (r Reader) Runs(ctx context.Context, extra string, limit int) ([]RunRow, error) {
	exs, err := r.ListTypes(ctx, workflows.RunWorkflowTypes, extra, limit)
	if err != nil {
		return nil, err
	}
	rows := make([]RunRow, 0, len(exs))
	for _, ex := range exs {
		s := StateFromMemo(ex.ID, ex.Memo)
		rows = append(rows, RunRow{
			ID: ex.ID, Goal: s.Goal, Repo: s.Repo, Branch: s.Branch,
			Status: EngineStatus(ex.Status), StartedAt: ex.StartedAt, ClosedAt: ex.ClosedAt,
		})
	}
	return rows, nil
}
