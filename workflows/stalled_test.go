package workflows

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// The daily pass flags a run stalled while its feature waits: the run
// keeps its status, shows the flag in its state and its Markdown, sets
// HorizonStalled, and tells its supervisor so the roadmap item reads
// stalled. The run then goes on and completes.
func TestStalledFlagReachesStateSearchAttributeAndSupervisor(t *testing.T) {
	e := newEnv(t)
	blocked := activities.SessionOutput{SessionID: "ses_b", Report: &horizon.Report{Status: "blocked", Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "STRIPE_KEY is unset in the environment"}}}
	e.sessions([]activities.SessionOutput{blocked, satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "c"}, nil)
	var mu sync.Mutex
	var stalledUpserts []bool
	e.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		mu.Lock()
		defer mu.Unlock()
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetBool(SearchStalled); ok {
			stalledUpserts = append(stalledUpserts, v)
		}
	}).Return(nil)
	var told []RunStatusSignal
	e.OnSignalExternalWorkflow(mock.Anything, "supervisor-1", "", SignalRunStatus, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, arg.(RunStatusSignal))
			return nil
		})
	stall := horizon.Stall{RunID: "run-1", Feature: "f1", Kind: horizon.StallKind("attempts"), Attempts: 6, Detail: "6 attempts and not accepted (stall at 6)"}
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(SignalStalled, StalledSignal{Stalls: []horizon.Stall{stall}}) }, time.Hour)
	var flagged horizon.RunState
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&flagged))
		e.UpdateWorkflow(UpdateUnblock, "ok", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, Unblock{Feature: "f1", Note: "STRIPE_KEY added to the daemon's environment"})
	}, 2*time.Hour)
	in := input()
	in.SearchAttributes, in.Supervisor = true, "supervisor-1"
	e.ExecuteWorkflow(SingleRunWorkflow, in)
	s, err := result(t, e)
	require.NoError(t, err)

	require.Equal(t, horizon.StatusBlocked, flagged.Status, "the flag changes no status")
	require.Equal(t, []horizon.Stall{stall}, flagged.Stalled)
	require.Contains(t, flagged.Markdown(), "**stalled**: 6 attempts and not accepted")
	require.Equal(t, []bool{true}, stalledUpserts, "HorizonStalled is set once, when flagged")
	var withStall []RunStatusSignal
	for _, sig := range told {
		if sig.Stalled != "" {
			withStall = append(withStall, sig)
		}
	}
	require.Len(t, withStall, 1, "the supervisor is told once")
	require.Equal(t, "run-1", withStall[0].RunID)
	require.Equal(t, stall.Detail, withStall[0].Stalled)
	require.Equal(t, horizon.StatusCompleted, s.Status, "a stalled run goes on")
}

// The run's stall signal reaches the supervisor while the run goes on:
// its roadmap item reads stalled, with the reason, and done once the run
// completes.
func TestSupervisorItemReadsStalled(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	e.RegisterDelayedCallback(func() {
		w.mu.Lock()
		id := w.runs[0].RunID
		w.mu.Unlock()
		e.SignalWorkflow(SignalRunStatus, RunStatusSignal{RunID: id, Status: horizon.StatusRunning, Stalled: "6 attempts and not accepted (stall at 6)"})
	}, 20*time.Minute)
	var mid horizon.SupervisorState
	e.RegisterDelayedCallback(func() { mid = queryState(t, e) }, 30*time.Minute)
	stopAfter(e, 6*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	rows := horizon.RoadmapStatus(mustRoadmap(t, w.roadmap), mid.Items, mid.Queue)
	require.Equal(t, horizon.ItemStalled, rows[0].State)
	require.Contains(t, rows[0].Detail, "6 attempts")
	require.Equal(t, mid.Runs[0].RunID, rows[0].RunID)
	require.Equal(t, horizon.StatusRunning, mid.Runs[0].Status, "the run goes on")
	rec, _ := st.Items.Find(horizon.RoadmapItemID("only item"))
	require.Equal(t, horizon.StageDone, rec.Stage, "a stalled item that completes is done")
}
