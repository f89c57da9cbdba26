// Package core is the one way horizon's surfaces (the CLI, `horizon
// console`, `horizon web`, and the daily pass) read and change horizon.
// Reads: a run's state from its status query while it runs and from its
// result once closed, the runs of a namespace, the supervisors, their
// queues and roadmaps, the daily reports, the spend ledger, what needs a
// person. Verbs: start, cancel, approve, unblock, pause, resume, set a
// ceiling (Runs); start, stop, pause, resume, queue add/rm/move and the
// schedules (Supervisors). A verb's refusal comes back typed
// (errors.go), for each surface to say its way; boundary_test.go fails
// the build when a surface writes to the engine itself.
package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// NotFoundError says the engine has no workflow with that ID.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no run %q in this engine; `horizon list` shows the runs", e.ID)
}

// Reader reads horizon's workflows from one namespace.
type Reader struct {
	Client    client.Client
	Namespace string
}

// queryTimeout bounds a status query: an open run whose worker is down
// does not answer.
const queryTimeout = 5 * time.Second

// Run returns a run's state: from the status query while it runs, from its
// result or failure details once closed. live is false when the run is
// open but no worker answered (the daemon is down).
func (r Reader) Run(ctx context.Context, id string) (st *horizon.RunState, live bool, err error) {
	desc, err := r.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, false, &NotFoundError{ID: id}
		}
		return nil, false, fmt.Errorf("describe run %s: %w", id, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		var s horizon.RunState
		if query(ctx, r.Client, id, &s) == nil {
			liveSessions(&s, desc.GetPendingActivities())
			s.Outage = Outage(ctx, r.Client, desc)
			return &s, true, nil
		}
		s2 := StateFromMemo(id, info.GetMemo())
		s2.Status = horizon.StatusRunning
		s2.Phase = "waiting for a worker"
		return s2, false, nil
	}
	var s horizon.RunState
	gerr := r.Client.GetWorkflow(ctx, id, "").Get(ctx, &s)
	if gerr == nil {
		return &s, false, nil
	}
	var app *temporal.ApplicationError
	var canc *temporal.CanceledError
	switch {
	case errors.As(gerr, &app) && app.HasDetails() && app.Details(&s) == nil:
		return &s, false, nil
	case errors.As(gerr, &canc) && canc.HasDetails() && canc.Details(&s) == nil:
		return &s, false, nil
	}
	fallback := StateFromMemo(id, info.GetMemo())
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		fallback.Status = horizon.StatusCancelled
	default:
		fallback.Status = horizon.StatusFailed
		fallback.Reason = RootCause(gerr)
	}
	return fallback, false, nil
}

func query(ctx context.Context, c client.Client, id string, out any) error {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, id, "", workflows.QueryStatus)
	if err != nil {
		return err
	}
	return v.Get(out)
}

// liveSessions fills the current attempt's session IDs from the pending
// session activity's heartbeat: the workflow learns them only when the
// session ends, a person wants to see them while it runs.
func liveSessions(s *horizon.RunState, pending []*workflowpb.PendingActivityInfo) {
	cur := s.Current()
	if cur == nil {
		return
	}
	for _, pa := range pending {
		if pa.GetActivityType().GetName() != "AgentSession" || pa.GetHeartbeatDetails() == nil {
			continue
		}
		var hb activities.SessionHeartbeat
		if err := converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &hb); err != nil || hb.SessionID == "" {
			continue
		}
		switch s.Phase {
		case horizon.PhaseWorking:
			if cur.WorkerSession == "" {
				cur.WorkerSession = hb.SessionID
			}
		case horizon.PhaseAudit:
			if cur.AuditorSession == "" {
				cur.AuditorSession = hb.SessionID
			}
		}
	}
}

// RootCause is the innermost error's message.
func RootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// StateFromMemo is what a run's memo tells of it: goal and repository.
func StateFromMemo(id string, memo *commonpb.Memo) *horizon.RunState {
	s := &horizon.RunState{RunID: id, Branch: horizon.IntegrationBranch(id), Attempts: []horizon.Attempt{}}
	if memo == nil {
		return s
	}
	dc := converter.GetDefaultDataConverter()
	if p, ok := memo.GetFields()[workflows.MemoGoal]; ok {
		_ = dc.FromPayload(p, &s.Goal)
	}
	if p, ok := memo.GetFields()[workflows.MemoRepo]; ok {
		_ = dc.FromPayload(p, &s.Repo)
	}
	return s
}

// Execution is one workflow as the engine lists it: the newest history of
// each workflow ID, with the start of its oldest.
type Execution struct {
	ID        string
	Status    enumspb.WorkflowExecutionStatus
	StartedAt time.Time
	ClosedAt  time.Time
	Memo      *commonpb.Memo
}

// List returns the workflows of a type matching an extra visibility
// clause ("" for none), newest first, at most limit (0: all). A workflow
// that continued as new is listed once.
func (r Reader) List(ctx context.Context, workflowType, extra string, limit int) ([]Execution, error) {
	return r.ListTypes(ctx, []string{workflowType}, extra, limit)
}

// ListTypes is List of the workflows of any of types: runs are listed by
// workflows.RunWorkflowTypes.
func (r Reader) ListTypes(ctx context.Context, types []string, extra string, limit int) ([]Execution, error) {
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = Quote(t)
	}
	q := "WorkflowType IN (" + strings.Join(quoted, ", ") + ")"
	if len(types) == 1 {
		q = "WorkflowType = " + quoted[0]
	}
	if extra != "" {
		q += " AND " + extra
	}
	var out []Execution
	var token []byte
	seen := map[string]int{}
	for {
		resp, err := r.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: r.Namespace, Query: q, NextPageToken: token, PageSize: 100})
		if err != nil {
			return nil, fmt.Errorf("list %s workflows: %w", strings.Join(types, ", "), err)
		}
		for _, ex := range resp.GetExecutions() {
			id := ex.GetExecution().GetWorkflowId()
			if i, ok := seen[id]; ok {
				if t := ex.GetStartTime().AsTime(); t.Before(out[i].StartedAt) {
					out[i].StartedAt = t
				}
				continue
			}
			seen[id] = len(out)
			e := Execution{ID: id, Status: ex.GetStatus(), StartedAt: ex.GetStartTime().AsTime(), Memo: ex.GetMemo()}
			if ex.GetCloseTime() != nil {
				e.ClosedAt = ex.GetCloseTime().AsTime()
			}
			out = append(out, e)
		}
		if limit > 0 && len(out) >= limit {
			return out[:limit], nil
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// RunsSince returns the state of every run open now or closed since t.
func (r Reader) RunsSince(ctx context.Context, since time.Time) ([]horizon.RunState, error) {
	extra := fmt.Sprintf("(ExecutionStatus = 'Running' OR CloseTime >= %s)", Quote(since.UTC().Format(time.RFC3339)))
	exs, err := r.ListTypes(ctx, workflows.RunWorkflowTypes, extra, 0)
	if err != nil {
		return nil, err
	}
	var out []horizon.RunState
	for _, ex := range exs {
		st, _, err := r.Run(ctx, ex.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, *st)
	}
	return out, nil
}

// Supervisors returns the state of every running supervisor.
func (r Reader) Supervisors(ctx context.Context) ([]horizon.SupervisorState, error) {
	exs, err := r.List(ctx, workflows.SupervisorWorkflowName, "ExecutionStatus = 'Running'", 0)
	if err != nil {
		return nil, err
	}
	var out []horizon.SupervisorState
	for _, ex := range exs {
		var s horizon.SupervisorState
		if err := query(ctx, r.Client, ex.ID, &s); err != nil {
			return nil, fmt.Errorf("read supervisor %s: %w", ex.ID, err)
		}
		// What its decomposition waits out: the report shows it.
		if desc, err := r.Client.DescribeWorkflowExecution(ctx, ex.ID, ""); err == nil {
			s.Outage = SupervisorOutage(ctx, r.Client, desc)
		}
		out = append(out, s)
	}
	return out, nil
}
