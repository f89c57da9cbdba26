package web

import (
	"context"
	"encoding/json"
	"time"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/core"
)

// Core is everything the web reads from and does to horizon: the core's
// reads and verbs, as cmd/horizon adapts them (it resolves repositories,
// and prepares a run the way `horizon start` does). Tests hand in a fake.
// A repository is named by its path on the machine horizon runs on.
type Core interface {
	// Runs lists the runs of every repository, newest first, from the
	// engine's visibility store (no run is asked anything).
	Runs(ctx context.Context) ([]RunRow, error)
	// Run reads one run's state; live is false when no worker answered.
	Run(ctx context.Context, id string) (st *horizon.RunState, live bool, err error)
	// RunsSince reads every run open now or closed since t.
	RunsSince(ctx context.Context, t time.Time) ([]horizon.RunState, error)
	Needs(ctx context.Context) ([]core.Need, error)
	// Report is the daily report of date ("": the newest).
	Report(ctx context.Context, date string) (*Report, error)
	// Spend is what was spent on each of the last days UTC days, oldest first.
	Spend(ctx context.Context, days int) ([]horizon.DaySpend, error)
	Supervisors(ctx context.Context) ([]horizon.SupervisorState, error)
	Queue(ctx context.Context, repo string) ([]core.QueueView, error)
	Roadmap(ctx context.Context, repo string) (*core.RoadmapView, error)

	Start(ctx context.Context, r StartRequest) (*Started, error)
	Approve(ctx context.Context, id, subject, note string) (*horizon.RunState, error)
	Unblock(ctx context.Context, id, feature, note string) (*horizon.RunState, error)
	Pause(ctx context.Context, id string) (*horizon.RunState, error)
	Resume(ctx context.Context, id string) (*horizon.RunState, error)
	SetCeiling(ctx context.Context, id string, usd float64, day bool) (*horizon.RunState, error)
	Cancel(ctx context.Context, id string) error
	// SupervisorStart starts a repository's supervisor; with no day
	// ceiling in ceiling nor configured it refuses (an *InputError).
	SupervisorStart(ctx context.Context, repo, autonomy string, ceiling core.DayCeilingRequest) (*horizon.SupervisorState, error)
	SupervisorStop(ctx context.Context, repo string) (*horizon.SupervisorState, error)
	QueueAdd(ctx context.Context, repo string, e horizon.QueueEntry) (*horizon.QueueEntry, error)
	QueueRemove(ctx context.Context, repo, id string) (*horizon.SupervisorState, error)
	QueueMove(ctx context.Context, repo, id string) (*horizon.SupervisorState, error)
}

// RunRow is a run as the engine lists it: the core's one run row.
type RunRow = core.RunRow

// Report is a daily report in both its forms.
type Report struct {
	Date     string          `json:"date"`
	Markdown string          `json:"markdown"`
	Report   json.RawMessage `json:"report"`
}

// StartRequest is POST /api/v1/runs: a goal for a repository, run as
// `horizon start --detach` runs it with the settings `horizon web` has.
type StartRequest struct {
	Repo     string `json:"repo"`
	Goal     string `json:"goal"`
	Autonomy string `json:"autonomy,omitempty"` // full, semi, supervised ("": run.autonomy)
	Single   bool   `json:"single,omitempty"`   // one feature, no plan
}

// Started is a run the API started.
type Started struct {
	RunID string `json:"run_id"`
	UI    string `json:"ui,omitempty"`
}
