package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// at is the fixture's "now": every answer arrives then.
var at = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// Three runs across two repositories: a planned run waiting at milestone
// m2 (with an advisor's notes), a planned run with a blocked feature and
// a decomposed one, and a one-feature run that completed.
const (
	waitingID   = "run-20261201-080000-aa11aa"
	blockedID   = "run-20261201-070000-bb22bb"
	completedID = "run-20261130-210000-cc33cc"
)

func gate(id, verdict string) *horizon.GateRun {
	return &horizon.GateRun{ReceiptID: id, Verdict: verdict}
}

func attempt(n int, tier string, outcome horizon.Outcome, g *horizon.GateRun, audit *horizon.Audit, cost float64) horizon.Attempt {
	return horizon.Attempt{N: n, Tier: tier, Applier: "opencode", Outcome: outcome, Gate: g, Audit: audit, Usage: horizon.Usage{Cost: cost}}
}

var (
	accept = &horizon.Audit{Verdict: horizon.VerdictAccept}
	reject = &horizon.Audit{Verdict: horizon.VerdictReject, Findings: []horizon.Finding{{Severity: horizon.SeverityConcern, Note: "test mixed-case input too"}}}
)

func waitingRun() *horizon.RunState {
	p := &horizon.Plan{Goal: "Add four text tools", Ambiguity: horizon.AmbiguityLow, Revision: 1, Milestones: []horizon.Milestone{
		{ID: "m1", Title: "Case tools", Status: horizon.MilestoneDone, Features: []horizon.Feature{
			{ID: "f1", Title: "Add lib/upper.sh", Status: horizon.FeatureAccepted, Attempts: []horizon.Attempt{
				attempt(1, "T1", horizon.OutcomeAccepted, gate("r-6139db1e59dd82d5303fb0eeeb7b", "pass"), accept, 0)}},
			{ID: "f2", Title: "Add lib/lower.sh", Status: horizon.FeatureAccepted, Attempts: []horizon.Attempt{
				attempt(1, "T1", horizon.OutcomeRejected, gate("r-2c13ca7c924a966a6f9c590e2096", "pass"), reject, 0),
				attempt(2, "T3", horizon.OutcomeAccepted, gate("r-3f0c8d34e283ac3040d89d29d3c6", "pass"), accept, 0.0123)}},
		}},
		{ID: "m2", Title: "Measure and repeat", Status: horizon.MilestonePending, Features: []horizon.Feature{
			{ID: "f3", Title: "Add lib/length.sh", Status: horizon.FeaturePending},
			{ID: "f4", Title: "Add lib/double.sh", Status: horizon.FeaturePending},
		}},
	}}
	return &horizon.RunState{
		RunID: waitingID, Goal: "Add four text tools under lib/ (upper, lower, length, double), each with a test under tests/.",
		Repo: "/home/ann/src/tools", Branch: horizon.IntegrationBranch(waitingID), Status: horizon.StatusRunning, Phase: horizon.PhaseApproval,
		Autonomy: horizon.AutonomySemi, Plan: p, Usage: horizon.Usage{Cost: 0.0123}, Ceiling: 5,
		Waiting: &horizon.Checkpoint{Kind: horizon.CheckpointMilestone, Subject: "m2", Summary: "milestone m2 (Measure and repeat): 2 features", Since: at.Add(-10 * time.Minute)},
	}
}

func blockedRun() *horizon.RunState {
	p := &horizon.Plan{Goal: "Export reports as CSV", Ambiguity: horizon.AmbiguityMedium, Revision: 2, Milestones: []horizon.Milestone{
		{ID: "m1", Title: "CSV export", Status: horizon.MilestoneRunning, Features: []horizon.Feature{
			{ID: "f1", Title: "Fetch the locale table", Status: horizon.FeatureBlocked,
				Blocker:  &horizon.Blocker{Type: horizon.BlockerMissingCredential, Evidence: "curl: (22) 401 Unauthorized: LOCALE_TOKEN is not set"},
				Attempts: []horizon.Attempt{attempt(1, "T1", horizon.OutcomeBlocked, nil, nil, 0)}},
			{ID: "f2", Title: "Write rows as CSV", Status: horizon.FeatureDecomposed, Attempts: []horizon.Attempt{
				attempt(1, "T1", horizon.OutcomeGateFailed, gate("r-0011", "fail"), nil, 0),
				attempt(2, "T2", horizon.OutcomeGateFailed, gate("r-0012", "fail"), nil, 0.002),
				attempt(3, "T3", horizon.OutcomeGateFailed, gate("r-0013", "fail"), nil, 0.04)}},
			{ID: "f2.1", Title: "Quote fields with commas", Parent: "f2", Status: horizon.FeatureAccepted, Attempts: []horizon.Attempt{
				attempt(1, "T3", horizon.OutcomeAccepted, gate("r-0014", "pass"), accept, 0.03)}},
			{ID: "f2.2", Title: "Header row", Parent: "f2", Status: horizon.FeatureRunning, Attempts: []horizon.Attempt{
				{N: 1, Tier: "T3", Applier: "opencode", Outcome: horizon.OutcomeRunning, Advice: []horizon.AdviceRecord{
					{ID: "r1.1", Review: 1, Severity: horizon.SeverityConcern, Delivered: horizon.SeverityConcern, Verdict: horizon.AdviceDelivered,
						Note:     "the header is written once per page, not once per file",
						Evidence: &horizon.AdviceEvidence{File: "export/csv.go", Line: 42, ObservedFact: "writeHeader is called inside the page loop"}},
				}}}},
		}},
	}}
	return &horizon.RunState{
		RunID: blockedID, Goal: "Export reports as CSV", Repo: "/home/ann/src/reports", Branch: horizon.IntegrationBranch(blockedID),
		Status: horizon.StatusRunning, Phase: horizon.PhaseWorking, Autonomy: horizon.AutonomyFull, Plan: p, Usage: horizon.Usage{Cost: 0.072},
		Stalled: []horizon.Stall{{RunID: blockedID, Feature: "f2", Detail: "3 attempts on feature f2 and not accepted (stall at 3)"}},
	}
}

func completedRun() *horizon.RunState {
	return &horizon.RunState{
		RunID: completedID, Goal: "Fix the failing date test", Repo: "/home/ann/src/reports", Branch: horizon.IntegrationBranch(completedID),
		Status: horizon.StatusCompleted, Phase: horizon.PhaseDone, Usage: horizon.Usage{Cost: 0.0041},
		Attempts: []horizon.Attempt{attempt(1, "T1", horizon.OutcomeAccepted, gate("r-0021", "pass"), accept, 0.0041)},
	}
}

// fake is a Backend over fixed states that records every verb.
type fake struct {
	mu     sync.Mutex
	rows   []RunRow
	states map[string]*horizon.RunState
	sups   []horizon.SupervisorState
	loops  []core.LoopRow
	tasks  []core.TaskMeta
	calls  []string
	refuse error // every verb answers this when set
}

func newFake() *fake {
	return &fake{
		rows: []RunRow{
			{ID: completedID, Goal: "Fix the failing date test", Repo: "/home/ann/src/reports", Status: core.EngineCompleted, StartedAt: at.Add(-12 * time.Hour), ClosedAt: at.Add(-11 * time.Hour)},
			{ID: waitingID, Goal: waitingRun().Goal, Repo: "/home/ann/src/tools", Status: core.EngineRunning, StartedAt: at.Add(-90 * time.Minute)},
			{ID: blockedID, Goal: "Export reports as CSV", Repo: "/home/ann/src/reports", Status: core.EngineRunning, StartedAt: at.Add(-150 * time.Minute)},
		},
		states: map[string]*horizon.RunState{waitingID: waitingRun(), blockedID: blockedRun(), completedID: completedRun()},
	}
}

func (f *fake) Runs(context.Context, core.ListRequest) ([]RunRow, error) { return f.rows, nil }

func (f *fake) Run(_ context.Context, id string) (*core.RunView, error) {
	s, ok := f.states[id]
	if !ok {
		return nil, fmt.Errorf("no run %q", id)
	}
	return &core.RunView{State: s, Live: true}, nil
}

func (f *fake) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return f.refuse
}

func (f *fake) after(id string, change func(s *horizon.RunState)) (*horizon.RunState, error) {
	s := *f.states[id]
	change(&s)
	return &s, nil
}

func (f *fake) Approve(_ context.Context, req core.ApproveRequest) (*horizon.RunState, error) {
	id, subject, note := req.Run, req.Subject, req.Note
	if err := f.record("approve %s subject=%s note=%q", id, subject, note); err != nil {
		return nil, err
	}
	return f.after(id, func(s *horizon.RunState) { s.Waiting, s.Phase = nil, horizon.PhaseFeatures })
}

func (f *fake) Unblock(_ context.Context, req core.UnblockRequest) (*horizon.RunState, error) {
	id, feature, note := req.Run, req.Feature, req.Note
	if err := f.record("unblock %s feature=%s note=%q", id, feature, note); err != nil {
		return nil, err
	}
	return f.after(id, func(*horizon.RunState) {})
}

// Skip answers as the engine does for a feature that was not running: it
// is skipped at once, with the note.
func (f *fake) Skip(_ context.Context, req core.SkipRequest) (*horizon.RunState, error) {
	if err := f.record("skip %s feature=%s note=%q", req.Run, req.Feature, req.Note); err != nil {
		return nil, err
	}
	var s horizon.RunState
	b, err := json.Marshal(f.states[req.Run]) // the plan changes: a copy of it
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if err := s.Plan.Skip(req.Feature, req.Note); err != nil {
		return nil, err
	}
	return &s, nil
}

func (f *fake) Pause(_ context.Context, id string) (*horizon.RunState, error) {
	if err := f.record("pause %s", id); err != nil {
		return nil, err
	}
	return f.after(id, func(s *horizon.RunState) { s.Paused = true })
}

func (f *fake) Resume(_ context.Context, id string) (*horizon.RunState, error) {
	if err := f.record("resume %s", id); err != nil {
		return nil, err
	}
	return f.after(id, func(s *horizon.RunState) { s.Paused = false })
}

func (f *fake) Cancel(_ context.Context, id string) error { return f.record("cancel %s", id) }

func (f *fake) AllSupervisors(context.Context) ([]horizon.SupervisorState, error) { return f.sups, nil }

func (f *fake) LoopRows(context.Context) ([]core.LoopRow, error)  { return f.loops, nil }
func (f *fake) TaskRows(context.Context) ([]core.TaskMeta, error) { return f.tasks, nil }

func (f *fake) ApproveQueued(_ context.Context, req core.ApproveQueuedRequest) (*horizon.SupervisorState, error) {
	return nil, f.record("approve queued %s entry=%s", req.Supervisor, req.Entry)
}

// supervisorID is a running supervisor with one queued plan waiting for
// approval (q3) and one it runs on its own (q4).
const supervisorID = "supervisor-reports"

func waitingSupervisor() horizon.SupervisorState {
	return horizon.SupervisorState{ID: supervisorID, Repo: "/home/ann/src/reports", Autonomy: horizon.AutonomySemi,
		Queue: horizon.Queue{Entries: []horizon.QueueEntry{
			{ID: "q3", Kind: horizon.EntryPlan, Goal: "Add rate limits to the export API"},
			{ID: "q4", Kind: horizon.EntryPlan, Goal: "Tidy the logs", Autonomy: horizon.AutonomyFull},
		}}}
}

var errRefused = errors.New("approve: not waiting for approval")
