package web

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// now is the fixtures' clock: the spend ledger in testdata/home has days
// 2026-03-01 and 2026-03-03.
var now = time.Date(2026, 3, 3, 18, 0, 0, 0, time.UTC)

// fakeCore answers from fixtures and records the verbs it was asked.
type fakeCore struct {
	calls []string
}

func at(h int) time.Time { return time.Date(2026, 3, 3, h, 0, 0, 0, time.UTC) }

func waitingRun() *horizon.RunState {
	accepted := func(n int, h int, cost float64, outcome horizon.Outcome) horizon.Attempt {
		return horizon.Attempt{N: n, Tier: "T1", Applier: "opencode", Model: "local/coder", Outcome: outcome,
			Gate: &horizon.GateRun{ReceiptID: fmt.Sprintf("r%d", h), Verdict: "pass"}, Usage: horizon.Usage{Cost: cost},
			StartedAt: at(h - 1), EndedAt: at(h)}
	}
	return &horizon.RunState{
		RunID: "run-20260303-090000-ab12cd", Goal: "Add case tools", Repo: "/src/app", Branch: "horizon/run-20260303-090000-ab12cd",
		Status: horizon.StatusRunning, Phase: horizon.PhaseApproval, Autonomy: horizon.AutonomySemi, Attempts: []horizon.Attempt{},
		Usage: horizon.Usage{Cost: 0.5}, StartedAt: at(9), UpdatedAt: at(12),
		Waiting: &horizon.Checkpoint{Kind: horizon.CheckpointMilestone, Subject: "m2", Summary: "milestone m2 (Measure): 2 features", Since: at(12)},
		Plan: &horizon.Plan{Goal: "Add case tools", Revision: 1, Milestones: []horizon.Milestone{
			{ID: "m1", Title: "Case tools", Status: horizon.MilestoneDone, Features: []horizon.Feature{
				{ID: "f1", Title: "Add lib/upper.sh", Status: horizon.FeatureAccepted, Attempts: []horizon.Attempt{accepted(1, 10, 0.2, horizon.OutcomeAccepted)}},
				{ID: "f2", Title: "Add lib/lower.sh", Status: horizon.FeatureAccepted, Attempts: []horizon.Attempt{
					accepted(1, 10, 0.1, horizon.OutcomeRejected), accepted(2, 11, 0.2, horizon.OutcomeAccepted)}},
			}},
			{ID: "m2", Title: "Measure", Status: horizon.MilestonePending, Features: []horizon.Feature{
				{ID: "f3", Title: "Add lib/len.sh", Status: horizon.FeaturePending},
				{ID: "f4", Title: "Add lib/double.sh", Status: horizon.FeaturePending},
			}},
		}},
	}
}

const (
	missing = "run-20260303-000000-000000"
	closed  = "run-20260302-000000-000000"
	// unreachable is read while the engine does not answer; unanswered
	// while it refuses connections until the request's deadline.
	unreachable = "run-20260301-000000-000000"
	unanswered  = "run-20260228-000000-000000"
)

// refuse is what the fake's workflows say to a verb: unknown runs are
// not found, the closed one has ended, the waiting run refuses an
// approval of another checkpoint.
func (f *fakeCore) refuse(op, id string) error {
	switch id {
	case missing:
		return &core.NotFoundError{ID: id}
	case closed:
		return &core.EndedError{Op: op, ID: id}
	case unreachable:
		return serviceerror.NewUnavailable("connection refused")
	case unanswered:
		// What the SDK says after retrying a refused connection until the
		// request's deadline.
		return fmt.Errorf("list RunWorkflow workflows: %w", serviceerror.NewDeadlineExceeded("context deadline exceeded"))
	}
	return nil
}

func (f *fakeCore) Runs(context.Context, core.ListRequest) ([]RunRow, error) {
	return []RunRow{
		{ID: "run-20260303-090000-ab12cd", Goal: "Add case tools", Repo: "/src/app", Status: "running", StartedAt: at(9)},
		{ID: closed, Goal: "Fix the parser", Repo: "/src/app", Status: "completed", StartedAt: at(1).AddDate(0, 0, -1), ClosedAt: at(3).AddDate(0, 0, -1)},
	}, nil
}

func (f *fakeCore) Run(_ context.Context, id string) (*core.RunView, error) {
	if err := f.refuse("status", id); err != nil && (id == missing || id == unreachable || id == unanswered) {
		return nil, err
	}
	return &core.RunView{State: waitingRun(), Live: true}, nil
}

func (f *fakeCore) RunsSince(context.Context, time.Time) ([]horizon.RunState, error) {
	return []horizon.RunState{*waitingRun()}, nil
}

func (f *fakeCore) Needs(context.Context) ([]core.Need, error) {
	return core.Needs([]*horizon.RunState{waitingRun()}), nil
}

func (f *fakeCore) Report(_ context.Context, date string) (*Report, error) {
	r := core.Reports{DataDir: "testdata/home"}
	if date == "" {
		var err error
		if date, err = r.Latest(); err != nil {
			return nil, err
		}
	}
	md, err := r.Markdown(date)
	if err != nil {
		return nil, err
	}
	js, err := r.JSON(date)
	if err != nil {
		return nil, err
	}
	return &Report{Date: date, Markdown: string(md), Report: json.RawMessage(js)}, nil
}

func (f *fakeCore) Spend(_ context.Context, days int) ([]horizon.DaySpend, error) {
	return core.Spend{DataDir: "testdata/home", DayCeiling: 2}.Days(now, days)
}

func supervisor() *horizon.SupervisorState {
	return &horizon.SupervisorState{ID: "supervisor-app", Repo: "/src/app", Base: "main", Status: "running", Autonomy: horizon.AutonomySemi,
		Queue: horizon.Queue{Entries: []horizon.QueueEntry{{ID: "q1", Kind: "goal", Goal: "Write the docs"}}}}
}

func (f *fakeCore) AllSupervisors(context.Context) ([]horizon.SupervisorState, error) {
	return []horizon.SupervisorState{*supervisor()}, nil
}

func (f *fakeCore) supervised(repo string) error {
	if repo != "/src/app" {
		return &core.SupervisorNotFoundError{ID: "supervisor-other"}
	}
	return nil
}

func (f *fakeCore) Queue(_ context.Context, repo string) ([]core.QueueView, error) {
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	return core.QueueOf(supervisor()), nil
}

func (f *fakeCore) Roadmap(_ context.Context, repo string) (*core.RoadmapView, error) {
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	return &core.RoadmapView{RoadmapRef: horizon.RoadmapRef{File: "ROADMAP.md", Items: []horizon.ItemStatus{}}, Found: true, Base: "main"}, nil
}

func (f *fakeCore) Start(_ context.Context, r core.StartRequest) (*Started, error) {
	call := fmt.Sprintf("start %s %q %s", r.Repo, r.Goal, r.Autonomy)
	if r.BudgetTime > 0 || r.BudgetSpend > 0 {
		call += fmt.Sprintf(" %s $%.2f", r.BudgetTime, r.BudgetSpend)
	}
	f.calls = append(f.calls, call)
	if r.Repo != "/src/app" {
		return nil, &InputError{Err: fmt.Errorf("%s is not a git repository", r.Repo)}
	}
	return &Started{RunID: "run-20260303-180000-ffffff", Branch: "horizon/run-20260303-180000-ffffff"}, nil
}

func (f *fakeCore) verb(op, id string) (*horizon.RunState, error) {
	f.calls = append(f.calls, op+" "+id)
	if err := f.refuse(op, id); err != nil {
		return nil, err
	}
	return waitingRun(), nil
}

func (f *fakeCore) Approve(_ context.Context, req core.ApproveRequest) (*horizon.RunState, error) {
	id, subject := req.Run, req.Subject
	if subject != "" && subject != "m2" {
		f.calls = append(f.calls, "approve "+id)
		return nil, &core.RefusedError{Op: "approve", ID: id, Reason: fmt.Sprintf("waiting at milestone m2, not %s", subject)}
	}
	s, err := f.verb("approve", id)
	if s != nil {
		s.Waiting, s.Phase = nil, horizon.PhaseWorking
	}
	return s, err
}

func (f *fakeCore) Unblock(_ context.Context, req core.UnblockRequest) (*horizon.RunState, error) {
	return f.verb("unblock "+req.Feature+" "+req.Note, req.Run)
}

// Skip refuses f1, accepted already, as the run does; another feature of
// the plan is skipped at once.
func (f *fakeCore) Skip(_ context.Context, req core.SkipRequest) (*horizon.RunState, error) {
	f.calls = append(f.calls, "skip "+req.Feature+" "+req.Note+" "+req.Run)
	if err := f.refuse("skip", req.Run); err != nil {
		return nil, err
	}
	if req.Feature == "f1" {
		return nil, &core.RefusedError{Op: "skip", ID: req.Run, Reason: "feature f1 is accepted already; only a feature not yet done can be skipped"}
	}
	s := waitingRun()
	if err := s.Plan.Skip(req.Feature, req.Note); err != nil {
		return nil, err
	}
	return s, nil
}

func (f *fakeCore) Pause(_ context.Context, id string) (*horizon.RunState, error) {
	return f.verb("pause", id)
}

func (f *fakeCore) Resume(_ context.Context, id string) (*horizon.RunState, error) {
	return f.verb("resume", id)
}

func (f *fakeCore) SetCeiling(_ context.Context, req core.CeilingRequest) (*horizon.RunState, error) {
	return f.verb(fmt.Sprintf("ceiling %.2f %v", req.USD, req.Day), req.Run)
}

func (f *fakeCore) Cancel(_ context.Context, id string) error {
	_, err := f.verb("cancel", id)
	return err
}

// SupervisorStart follows the core's day-ceiling rule with no
// spend.day_ceiling configured.
func (f *fakeCore) SupervisorStart(_ context.Context, sr core.SupervisorRequest) (*horizon.SupervisorState, error) {
	repo, autonomy := sr.Repo, sr.Autonomy
	c, err := core.ChooseDayCeiling(sr.Ceiling, 0)
	ceiling := "unlimited"
	if !c.Unlimited {
		ceiling = fmt.Sprintf("$%.2f", c.USD)
	}
	f.calls = append(f.calls, "supervisor start "+repo+" "+autonomy+" "+ceiling)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return supervisor(), nil
}

func (f *fakeCore) SupervisorStop(_ context.Context, repo string) (*horizon.SupervisorState, error) {
	f.calls = append(f.calls, "supervisor stop "+repo)
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	s := supervisor()
	s.Status = "stopped"
	return s, nil
}

func (f *fakeCore) QueueAdd(_ context.Context, req core.QueueAddRequest) (*horizon.QueueEntry, error) {
	repo, e := req.Repo, req.Entry
	f.calls = append(f.calls, fmt.Sprintf("queue add %s %q %s %s", repo, e.Goal, e.Autonomy, e.BudgetTime))
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	e.ID, e.Kind = "q2", "goal"
	return &e, nil
}

func (f *fakeCore) QueueRemove(_ context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error) {
	repo, id := req.Repo, req.Entry
	f.calls = append(f.calls, "queue rm "+repo+" "+id)
	if id != "q1" {
		return nil, &core.EntryNotFoundError{RefusedError: core.RefusedError{Op: "queue-rm", ID: "supervisor-app", Reason: "no queue entry " + id}}
	}
	s := supervisor()
	s.Queue.Entries = nil
	return s, nil
}

func (f *fakeCore) QueueMove(_ context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error) {
	repo, id := req.Repo, req.Entry
	f.calls = append(f.calls, "queue move "+repo+" "+id)
	return supervisor(), nil
}

func (f *fakeCore) SupervisorOf(_ context.Context, repo string) (*core.SupervisorView, error) {
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	return &core.SupervisorView{Supervisor: supervisor(), Queue: core.QueueOf(supervisor()), Schedules: []core.ScheduleStatus{
		{ID: "horizon-decompose-supervisor-app", Cron: "0 2 * * *", TimeZone: "Europe/Paris", Next: []time.Time{at(26)}, Recent: []string{}},
	}}, nil
}

func (f *fakeCore) SupervisorPause(_ context.Context, repo string) (*horizon.SupervisorState, error) {
	f.calls = append(f.calls, "supervisor pause "+repo)
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	s := supervisor()
	s.Status = horizon.SupervisorPaused
	return s, nil
}

func (f *fakeCore) SupervisorResume(_ context.Context, repo string) (*horizon.SupervisorState, error) {
	f.calls = append(f.calls, "supervisor resume "+repo)
	if err := f.supervised(repo); err != nil {
		return nil, err
	}
	return supervisor(), nil
}

func (f *fakeCore) QueueApprove(_ context.Context, req core.QueueEntryRequest) (*horizon.SupervisorState, error) {
	f.calls = append(f.calls, "queue approve "+req.Repo+" "+req.Entry)
	if req.Entry != "q1" {
		return nil, &core.RefusedError{Op: "approve", ID: "supervisor-app", Reason: "no queued plan " + req.Entry + " waits for approval"}
	}
	return supervisor(), nil
}

func (f *fakeCore) LoopRows(context.Context) ([]core.LoopRow, error) {
	return []core.LoopRow{{LoopResult: core.LoopResult{Loop: "loop-20260303-100000-aaaaaa", Status: horizon.LoopRunning, Role: "build", Activations: 2, Cost: 0.01}, StartedAt: at(10)}}, nil
}

func (f *fakeCore) TaskRows(context.Context) ([]core.TaskMeta, error) {
	return []core.TaskMeta{{ID: "20260303-110000-bbbbbb", Specialist: "explorer", Status: "completed", Prompt: "where is the parser?"}}, nil
}
