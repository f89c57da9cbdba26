package core

// The verbs the dashboard runs the day with: supervisors by repository
// (their schedules, pause, resume, a queued plan approved), loops and
// tasks listed beside runs.

import (
	"context"
	"sort"
	"time"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// SupervisorOf reads the supervisor of the repository at dir with its
// schedules.
func (a *App) SupervisorOf(ctx context.Context, dir string) (*SupervisorView, error) {
	return onSupervisor(dir, func(id string) (*SupervisorView, error) { return a.SupervisorView(ctx, id) })
}

// SupervisorPause holds the supervisor of the repository at dir: it
// starts nothing new; its runs go on.
func (a *App) SupervisorPause(ctx context.Context, dir string) (*horizon.SupervisorState, error) {
	return onSupervisor(dir, func(id string) (*horizon.SupervisorState, error) { return a.Supervisors().Pause(ctx, id) })
}

// SupervisorResume lets the paused supervisor of the repository at dir go on.
func (a *App) SupervisorResume(ctx context.Context, dir string) (*horizon.SupervisorState, error) {
	return onSupervisor(dir, func(id string) (*horizon.SupervisorState, error) { return a.Supervisors().Resume(ctx, id) })
}

// QueueApprove lets a plan waiting for approval in the queue of the
// repository's supervisor run in its turn.
func (a *App) QueueApprove(ctx context.Context, req QueueEntryRequest) (*horizon.SupervisorState, error) {
	return onSupervisor(req.Repo, func(id string) (*horizon.SupervisorState, error) {
		return a.ApproveQueued(ctx, ApproveQueuedRequest{Supervisor: id, Entry: req.Entry})
	})
}

// LoopRow is a loop as the lists show it: where it stands, or how it ended.
type LoopRow struct {
	LoopResult
	StartedAt time.Time `json:"started_at"`
}

// listedLoops is how many loops the lists read, newest first: each is a
// query or a result read.
const listedLoops = 20

// LoopRows lists the newest loops with their state.
func (a *App) LoopRows(ctx context.Context) ([]LoopRow, error) {
	exs, err := a.reader().List(ctx, workflows.LoopWorkflowName, "", listedLoops)
	if err != nil {
		return nil, err
	}
	out := []LoopRow{}
	for _, ex := range exs {
		res, _, err := a.Loops().State(ctx, ex.ID)
		if err != nil {
			res = LoopResult{Loop: ex.ID, Error: err.Error()}
		}
		out = append(out, LoopRow{LoopResult: res, StartedAt: ex.StartedAt})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.After(out[j].StartedAt) })
	return out, nil
}

// TaskRows lists the background tasks, newest first.
func (a *App) TaskRows(context.Context) ([]TaskMeta, error) {
	ts, err := TaskRecords(a.cfg).List()
	if ts == nil {
		ts = []TaskMeta{}
	}
	return ts, err
}
