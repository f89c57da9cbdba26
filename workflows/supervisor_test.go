package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// repoWorld scripts a supervised repository: the roadmap at the base tip,
// horizon/roadmap's tip, the lead's decompositions and the runs' outcomes.
type repoWorld struct {
	t       *testing.T
	mu      sync.Mutex
	roadmap string
	tip     string
	// outcome of a run by goal (default completed)
	outcome map[string]horizon.Status
	// what happened
	decomposed []string // goals the lead planned
	runs       []PlannedRunInput
	kinds      []string // the workflow type each run started as
	landed     []activities.AdvanceInput
	readErr    int // ReadRoadmap calls to fail before answering
	// syncs script SyncRoadmap's answers by branch (default up to date);
	// gates the merge gate's verdicts (default pass).
	syncs    map[string][]activities.SyncOutput
	gates    []string
	gated    []string // merge commits gated
	advanced []string // AdvanceRoadmap "To" of merges
	// register, when set, registers more before the mocks (the test
	// environment refuses registrations after them).
	register func(*testsuite.TestWorkflowEnvironment)
	// leadStep, when set, is an activity the fake lead calls before it
	// answers, with the planning retries of a real one.
	leadStep string
	// planFails is how many decompositions fail before the lead answers;
	// planned records when each decomposition started.
	planFails int
	planned   []time.Time
	// planHang holds each decomposition in turn that long before the lead
	// answers (0: at once), as a lead whose model is unreachable does;
	// cancelled lists the goals whose decomposition was cancelled.
	planHang  []time.Duration
	cancelled []string
}

func newRepoWorld(t *testing.T, roadmap string) *repoWorld {
	return &repoWorld{t: t, roadmap: roadmap, tip: "c0", outcome: map[string]horizon.Status{}, syncs: map[string][]activities.SyncOutput{}}
}

// fakeRun stands for PlannedRunWorkflow: it tells its supervisor its
// outcome as a real run does (SignalRunStatus) and ends.
func (w *repoWorld) fakeRun(ctx workflow.Context, in PlannedRunInput) (*horizon.RunState, error) {
	w.mu.Lock()
	w.runs = append(w.runs, in)
	w.kinds = append(w.kinds, workflow.GetInfo(ctx).WorkflowType.Name)
	out, ok := w.outcome[in.Goal]
	w.mu.Unlock()
	if !ok {
		out = horizon.StatusCompleted
	}
	if err := workflow.Sleep(ctx, time.Hour); err != nil {
		return nil, err
	}
	_ = workflow.SignalExternalWorkflow(ctx, in.Supervisor, "", SignalRunStatus, RunStatusSignal{RunID: in.RunID, Status: out}).Get(ctx, nil)
	return &horizon.RunState{RunID: in.RunID, Status: out}, nil
}

// fakeLegacyRun stands for RunWorkflow, which a supervisor started its
// runs as before each kind of run had its own type.
func (w *repoWorld) fakeLegacyRun(ctx workflow.Context, in RunInput) (*horizon.RunState, error) {
	if !in.Planned {
		// A workflow cannot fail the test itself (workflowcheck): the
		// run fails, and the test sees it.
		return nil, fmt.Errorf("a supervisor's run is a planned run, got %+v", in)
	}
	return w.fakeRun(ctx, in.planned())
}

// fakePlan stands for PlanWorkflow: one milestone, one feature per goal.
func (w *repoWorld) fakePlan(ctx workflow.Context, in PlanInput) (*PlanResult, error) {
	w.mu.Lock()
	var hang time.Duration
	if len(w.planHang) > 0 {
		hang, w.planHang = w.planHang[0], w.planHang[1:]
	}
	w.mu.Unlock()
	if hang > 0 {
		if err := workflow.Sleep(ctx, hang); err != nil {
			w.mu.Lock()
			w.cancelled = append(w.cancelled, in.Goal)
			w.mu.Unlock()
			return nil, err
		}
	}
	if w.leadStep != "" {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
		})
		if err := workflow.ExecuteActivity(actx, w.leadStep, in.Goal).Get(ctx, nil); err != nil {
			return nil, err
		}
	}
	w.mu.Lock()
	w.planned = append(w.planned, workflow.Now(ctx))
	if w.planFails > 0 {
		w.planFails--
		w.mu.Unlock()
		return nil, temporal.NewNonRetryableApplicationError("no valid plan after 3 tries", "PlanFailed", nil)
	}
	w.decomposed = append(w.decomposed, in.Goal)
	w.mu.Unlock()
	title := strings.SplitN(in.Goal, "\n", 2)[0]
	return &PlanResult{Tries: 1, Plan: horizon.Plan{Goal: in.Goal, Milestones: []horizon.Milestone{{
		ID: "m1", Title: title, Features: []horizon.Feature{{ID: "f1", Title: title, Kind: horizon.KindBounded, Acceptance: []string{"done"}, Status: horizon.FeaturePending}},
	}}}}, nil
}

func (w *repoWorld) env(s *testsuite.WorkflowTestSuite) *testsuite.TestWorkflowEnvironment {
	e := s.NewTestWorkflowEnvironment()
	e.RegisterWorkflowWithOptions(SupervisorWorkflow, workflow.RegisterOptions{Name: SupervisorWorkflowName})
	e.RegisterWorkflowWithOptions(w.fakeRun, workflow.RegisterOptions{Name: PlannedRunWorkflowName})
	e.RegisterWorkflowWithOptions(w.fakeLegacyRun, workflow.RegisterOptions{Name: RunWorkflowName})
	e.RegisterWorkflowWithOptions(w.fakePlan, workflow.RegisterOptions{Name: PlanWorkflowName})
	e.RegisterActivity(&activities.Activities{})
	if w.register != nil {
		w.register(e)
	}
	e.OnActivity(a.SyncRoadmap, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RoadmapInput) (activities.SyncOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if q := w.syncs[in.Base]; len(q) > 0 {
			w.syncs[in.Base] = q[1:]
			out := q[0]
			out.Tip = w.tip
			return out, nil
		}
		return activities.SyncOutput{Action: activities.SyncUpToDate, Tip: w.tip, Base: "c0"}, nil
	})
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.gated = append(w.gated, in.BaseCommit)
		v := "pass"
		if len(w.gates) > 0 {
			v, w.gates = w.gates[0], w.gates[1:]
		}
		return horizon.GateRun{ReceiptID: fmt.Sprintf("r-%d", len(w.gated)), Verdict: v}, nil
	})
	e.OnActivity(a.ReadRoadmap, mock.Anything, mock.Anything).Return(func(context.Context, activities.RoadmapInput) (activities.RoadmapText, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.readErr > 0 {
			w.readErr--
			return activities.RoadmapText{}, errors.New("git: index.lock exists")
		}
		return activities.RoadmapText{Commit: "c0", Found: w.roadmap != "", Text: w.roadmap}, nil
	})
	e.OnActivity(a.AdvanceRoadmap, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AdvanceInput) (string, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if in.Run == "" {
			w.advanced = append(w.advanced, in.To)
			w.tip = in.To
			return w.tip, nil
		}
		if in.From != w.tip {
			return "", temporal.NewNonRetryableApplicationError("horizon/roadmap moved", activities.ErrTypeBadInput, nil)
		}
		w.landed = append(w.landed, in)
		w.tip = "tip-" + in.Run
		return w.tip, nil
	})
	// A run's status signal to its parent supervisor goes through the
	// test environment's mock of external signals.
	e.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalRunStatus, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			e.SignalWorkflow(SignalRunStatus, arg)
			return nil
		})
	return e
}

func supervisorInput() SupervisorInput {
	return SupervisorInput{
		ID: "supervisor-abcdef12", Repo: "/repo", Base: "main", Roadmap: ".horizon/roadmap.md",
		Autonomy: horizon.AutonomyFull, DecomposeAhead: 2, Poll: 10 * time.Minute,
		Run: RunInput{Model: "fake/m"},
	}
}

// stopAfter stops the supervisor once d of workflow time has passed.
func stopAfter(e *testsuite.TestWorkflowEnvironment, d time.Duration) {
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateStop, "stop", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		})
	}, d)
}

func supervisorResult(t *testing.T, e *testsuite.TestWorkflowEnvironment) horizon.SupervisorState {
	t.Helper()
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var st horizon.SupervisorState
	require.NoError(t, e.GetWorkflowResult(&st))
	return st
}

func TestSupervisorRunsTheRoadmapInOrderOnItsOwnBranch(t *testing.T) {
	w := newRepoWorld(t, "# Roadmap\n- [ ] Parse dates\n  in ISO 8601\n- [x] Done by hand\n- [ ] Add CSV export\n- [ ] Skip holidays {#holidays}\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	stopAfter(e, 48*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Len(t, w.decomposed, 3, "each item is decomposed once")
	require.Contains(t, w.decomposed[0], "Parse dates")
	require.Contains(t, w.decomposed[0], "in ISO 8601", "the item's details reach the lead")
	require.Contains(t, w.decomposed[1], "Add CSV export")
	require.Contains(t, w.decomposed[2], "Skip holidays")
	require.Len(t, w.runs, 3, "each item runs once")
	from := "c0"
	for i, in := range w.runs {
		require.Equal(t, PlannedRunWorkflowName, w.kinds[i])
		require.NotNil(t, in.Plan, "the run takes the supervisor's plan")
		require.True(t, in.PlanApproved)
		require.Equal(t, activities.RoadmapBranch, in.BaseRef)
		require.Equal(t, from, in.BaseCommit, "run %d starts from the tip the one before landed", i+1)
		require.Equal(t, st.ID, in.Supervisor)
		require.Equal(t, from, w.landed[i].From)
		require.Equal(t, in.RunID, w.landed[i].Run)
		from = "tip-" + in.RunID
	}
	require.Equal(t, from, st.Tip)
	require.Len(t, st.Items, 3)
	for _, r := range st.Items {
		require.Equal(t, horizon.StageDone, r.Stage, r.Item)
		require.NotEmpty(t, r.RunID)
	}
	require.Equal(t, "holidays", st.Items[2].Item)
	require.Equal(t, horizon.SupervisorStopped, st.Status)
	require.Zero(t, st.Queue.Len())
}

// A supervisor whose history started its runs as RunWorkflow (before the
// run-kind-types change) goes on doing so, with the RunInput of a planned
// run; the run lands as any other.
func TestSupervisorBeforeRunKindsStartsRunWorkflow(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Parse dates\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	e.OnGetVersion(changeRunKinds, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	stopAfter(e, 24*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)
	require.Equal(t, []string{RunWorkflowName}, w.kinds)
	require.NotNil(t, w.runs[0].Plan, "the run takes the supervisor's plan")
	require.Len(t, w.landed, 1)
	require.Equal(t, horizon.StageDone, st.Items[0].Stage)
}

func TestSupervisorPersonsGoalsAndApprovals(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Item one\n- [ ] Item two\n- [ ] Item three\n")
	w.outcome["Item one"] = horizon.StatusBlocked
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	in := supervisorInput()
	in.Autonomy = horizon.AutonomySemi
	noop := &testsuite.TestUpdateCallback{OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	var refused error
	// The nightly schedule asks for two ahead; both wait for approval.
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalDecompose, 2) }, time.Minute)
	// The schedule fires again (a retry, a catch-up): nothing more to do.
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalDecompose, 2) }, 2*time.Minute)
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateQueueAdd, "add", noop, horizon.QueueEntry{Goal: "Fix the flaky test"})
		e.UpdateWorkflow(UpdateApprove, "bad", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { refused = err }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, Approve{Subject: "q99"})
	}, 30*time.Minute)
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateApprove, "ok1", noop, Approve{Subject: "q1"})
		e.UpdateWorkflow(UpdateApprove, "ok2", noop, Approve{Subject: "q2"})
	}, 5*time.Hour)
	stopAfter(e, 24*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, in)
	st := supervisorResult(t, e)

	require.ErrorContains(t, refused, "q99")
	require.Len(t, w.decomposed, 3, "each item decomposed once, however often the schedule fires")
	var goals []string
	for _, r := range w.runs {
		goals = append(goals, r.Goal)
	}
	// The person's goal ran first (plans waited for approval), then the
	// approved plans; item one's blocked run did not stop item two. Item
	// three, decomposed when the queue drained, waits for its approval.
	require.Equal(t, []string{"Fix the flaky test", "Item one", "Item two"}, goals)
	waiting := st.AwaitingApproval()
	require.Len(t, waiting, 1)
	require.Equal(t, horizon.RoadmapItemID("Item three"), waiting[0].Item)
	require.Equal(t, horizon.AutonomySemi, w.runs[1].Autonomy)
	require.True(t, w.runs[1].PlanApproved)
	rec, _ := st.Items.Find(horizon.RoadmapItemID("Item one"))
	require.Equal(t, horizon.StageBlocked, rec.Stage)
	rec, _ = st.Items.Find(horizon.RoadmapItemID("Item two"))
	require.Equal(t, horizon.StageDone, rec.Stage)
	require.Len(t, w.landed, 2, "a blocked run lands nothing")
}

func TestSupervisorWaitsOnABadRoadmap(t *testing.T) {
	w := newRepoWorld(t, "- [ ] good\n-[ ] bad\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	var waiting string
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var st horizon.SupervisorState
		require.NoError(t, v.Get(&st))
		waiting = st.Waiting
	}, time.Hour)
	stopAfter(e, 2*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)
	require.Empty(t, w.decomposed, "nothing is decomposed from a roadmap with an error")
	require.Contains(t, waiting, ".horizon/roadmap.md:2")
	require.Contains(t, st.RoadmapError, ".horizon/roadmap.md:2")
}

// TestSupervisorLivesForMonths drives three months of a person adding a
// goal a day: the supervisor continues as new within its loop bound, and
// the queue, the records and the branch tip travel intact across every
// history; each goal runs exactly once.
func TestSupervisorLivesForMonths(t *testing.T) {
	w := newRepoWorld(t, "")
	in := supervisorInput()
	in.Poll, in.LoopsPerHistory = time.Hour, 100
	const days = 90
	histories, added := 0, 0
	for added < days {
		var s testsuite.WorkflowTestSuite
		e := w.env(&s)
		for d := 1; d <= 30; d++ {
			e.RegisterDelayedCallback(func() {
				if added >= days {
					return
				}
				added++
				e.UpdateWorkflow(UpdateQueueAdd, fmt.Sprint(added), &testsuite.TestUpdateCallback{
					OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
				}, horizon.QueueEntry{Goal: fmt.Sprintf("goal %d", added)})
			}, time.Duration(d)*24*time.Hour-time.Hour)
		}
		e.ExecuteWorkflow(SupervisorWorkflowName, in)
		require.True(t, e.IsWorkflowCompleted())
		histories++
		var can *workflow.ContinueAsNewError
		require.ErrorAs(t, e.GetWorkflowError(), &can, "history %d ends by continuing as new", histories)
		var next SupervisorInput
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
		require.NotNil(t, next.Carry)
		require.Equal(t, histories, next.Carry.Histories)
		require.Equal(t, w.tip, next.Carry.Tip, "the branch tip travels")
		in = next
		require.Less(t, histories, 400, "no end in sight")
	}
	require.Greater(t, histories, 10, "three months span many histories")
	seen := map[string]bool{}
	for _, r := range w.runs {
		require.False(t, seen[r.Goal], "%s ran twice", r.Goal)
		seen[r.Goal] = true
	}
	require.GreaterOrEqual(t, len(w.runs), days-1, "every day's goal ran (the last may still be queued)")
	require.LessOrEqual(t, len(in.Carry.Runs), 200, "the carried state stays bounded")
}

// The person moved the base branch: the first merge into horizon/roadmap
// fails the gate, so the supervisor waits (saying why) and starts nothing;
// the next try merges cleanly and passes, and the run starts from the
// merge.
func TestSupervisorMergesTheBaseThroughTheGate(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	w.syncs["main"] = []activities.SyncOutput{
		{Action: activities.SyncUpToDate},                                 // at start
		{Action: activities.SyncMerge, MergeCommit: "m1", MergeDir: "/x"}, // before the run: red gate
		{Action: activities.SyncMerge, MergeCommit: "m2", MergeDir: "/x"}, // a poll later: green
	}
	w.gates = []string{"fail", "pass", "pass"}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	var waiting string
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var st horizon.SupervisorState
		require.NoError(t, v.Get(&st))
		waiting = st.Waiting
	}, 5*time.Minute)
	stopAfter(e, 6*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Contains(t, waiting, "fails the gate", "the supervisor says why it waits")
	require.Equal(t, []string{"m1", "m2"}, w.gated[:2])
	require.Equal(t, []string{"m2"}, w.advanced, "only the green merge lands")
	require.Len(t, w.runs, 1)
	require.Equal(t, "m2", w.runs[0].BaseCommit, "the run starts from the merge")
	require.Equal(t, 2, st.Merges)
	rec, _ := st.Items.Find(horizon.RoadmapItemID("only item"))
	require.Equal(t, horizon.StageDone, rec.Stage)
}

// A run whose start tip has moved by the time it completes lands by a
// gated merge of its branch, not a fast-forward.
func TestSupervisorLandsAMovedRunByMerge(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	// The run's start tip is gone by the time it completes: the fake run
	// moves horizon/roadmap before it ends.
	w.outcome["only item"] = horizon.StatusCompleted
	moved := false
	e.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.tip, moved = "elsewhere", true
		for _, r := range w.runs {
			w.syncs[horizon.IntegrationBranch(r.RunID)] = []activities.SyncOutput{{Action: activities.SyncMerge, MergeCommit: "merged-run", MergeDir: "/x"}}
		}
	}, 30*time.Minute)
	stopAfter(e, 6*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)
	require.True(t, moved)
	require.Empty(t, w.landed, "no fast-forward from a tip that moved")
	require.Equal(t, []string{"merged-run"}, w.advanced, "the run's branch is merged through the gate")
	require.Equal(t, "merged-run", st.Tip)
	require.Equal(t, "merged-run", st.Runs[0].Landed)
}
