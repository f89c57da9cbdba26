package web

import (
	"context"
	"time"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// Core is everything the web reads from and does to horizon: the verbs of
// the core's App, which implements it; tests hand in a fake. A repository
// is named by its path on the machine horizon runs on.
type Core interface {
	// Runs lists the runs of every repository, newest first, from the
	// engine's visibility store (no run is asked anything).
	Runs(ctx context.Context, req core.ListRequest) ([]RunRow, error)
	// Run reads one run's state; Live is false when no worker answered.
	Run(ctx context.Context, id string) (*core.RunView, error)
	// RunsSince reads every run open now or closed since t.
	RunsSince(ctx context.Context, t time.Time) ([]horizon.RunState, error)
	Needs(ctx context.Context) ([]core.Need, error)
	// Report is the daily report of date ("": the newest).
	Report(ctx context.Context, date string) (*core.Report, error)
	// Spend is what was spent on each of the last days UTC days, oldest first.
	Spend(ctx context.Context, days int) ([]horizon.DaySpend, error)
	AllSupervisors(ctx context.Context) ([]horizon.SupervisorState, error)
	Queue(ctx context.Context, repo string) ([]core.QueueView, error)
	Roadmap(ctx context.Context, repo string) (*core.RoadmapView, error)

	Start(ctx context.Context, req core.StartRequest) (*core.Started, error)
	Approve(ctx context.Context, req core.ApproveRequest) (*horizon.RunState, error)
	Unblock(ctx context.Context, req core.UnblockRequest) (*horizon.RunState, error)
	// Skip leaves a planned run's feature out with the person's note; a
	// feature that cannot be skipped is refused (a *core.RefusedError).
	Skip(ctx context.Context, req core.SkipRequest) (*horizon.RunState, error)
	Pause(ctx context.Context, id string) (*horizon.RunState, error)
	Resume(ctx context.Context, id string) (*horizon.RunState, error)
	SetCeiling(ctx context.Context, req core.CeilingRequest) (*horizon.RunState, error)
	Cancel(ctx context.Context, id string) error
	// SupervisorStart starts a repository's supervisor; with no day
	// ceiling in the request nor configured it refuses (an *InputError).
	SupervisorStart(ctx context.Context, req core.SupervisorRequest) (*horizon.SupervisorState, error)
	SupervisorStop(ctx context.Context, repo string) (*horizon.SupervisorState, error)
	QueueAdd(ctx context.Context, req core.QueueAddRequest) (*horizon.QueueEntry, error)
	QueueRemove(ctx context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error)
	QueueMove(ctx context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error)

	// SupervisorOf reads a repository's supervisor with its schedules.
	SupervisorOf(ctx context.Context, repo string) (*core.SupervisorView, error)
	SupervisorPause(ctx context.Context, repo string) (*horizon.SupervisorState, error)
	SupervisorResume(ctx context.Context, repo string) (*horizon.SupervisorState, error)
	// QueueApprove lets a queued plan waiting for approval run in its turn.
	QueueApprove(ctx context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error)
	// LoopRows and TaskRows list loops and background tasks, newest first.
	LoopRows(ctx context.Context) ([]core.LoopRow, error)
	TaskRows(ctx context.Context) ([]core.TaskMeta, error)
}

// The core's App is the web's Core.
var _ Core = (*core.App)(nil)

// listedRuns is how many runs the dashboard lists, as `horizon list` does.
const listedRuns = 50

// RunRow is a run as the engine lists it: the core's one run row.
type RunRow = core.RunRow

// Report is a daily report in both its forms.
type Report = core.Report

// StartRequest is POST /api/v1/runs: a goal for a repository, run as
// `horizon start --detach` runs it with the settings `horizon web` has.
type StartRequest struct {
	Repo     string `json:"repo"`
	Goal     string `json:"goal"`
	Autonomy string `json:"autonomy,omitempty"` // full, semi or supervised ("": run.autonomy)
	Single   bool   `json:"single,omitempty"`   // one feature, no plan
	// BudgetTime (a Go duration, "8h") and BudgetSpend (USD) are a planned
	// run's hard stop ("" and 0: run.budget_time and run.budget_spend).
	BudgetTime  string  `json:"budget_time,omitempty"`
	BudgetSpend float64 `json:"budget_spend,omitempty"`
}

// Started is a run the API started.
type Started = core.Started
