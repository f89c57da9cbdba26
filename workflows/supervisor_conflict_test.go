package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// queryState reads the supervisor's state through its status query.
func queryState(t *testing.T, e *testsuite.TestWorkflowEnvironment) horizon.SupervisorState {
	t.Helper()
	v, err := e.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st horizon.SupervisorState
	require.NoError(t, v.Get(&st))
	return st
}

// The person's base branch conflicts with horizon/roadmap before the
// item's run: the supervisor is blocked (merge_conflict, the paths as
// evidence), on its status and on the item it holds, and starts nothing.
// The person merges by hand and calls `horizon supervisor resume`: the
// merge is tried again at once (not a poll later), the blocker is gone
// and the run starts.
func TestSupervisorMergeConflictIsATypedBlockerAPersonLifts(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	w.syncs["main"] = []activities.SyncOutput{
		{Action: activities.SyncUpToDate},                                                // at start
		{Action: activities.SyncConflict, Conflict: []string{"calc.go", "calc_test.go"}}, // before the run
		{Action: activities.SyncUpToDate},                                                // after the person's merge
	}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	in := supervisorInput()
	// No poll within the test: only the person's resume retries.
	in.Poll = 30 * 24 * time.Hour
	var held horizon.SupervisorState
	var runsWhileHeld int
	e.RegisterDelayedCallback(func() {
		held = queryState(t, e)
		w.mu.Lock()
		runsWhileHeld = len(w.runs)
		w.mu.Unlock()
	}, 2*time.Hour)
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateResume, "resume", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		})
	}, 3*time.Hour)
	stopAfter(e, 12*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, in)
	st := supervisorResult(t, e)

	item := horizon.RoadmapItemID("only item")
	require.Zero(t, runsWhileHeld, "nothing starts on a conflict")
	require.NotNil(t, held.Blocker)
	require.Equal(t, horizon.BlockerMergeConflict, held.Blocker.Type)
	require.Equal(t, []string{"calc.go", "calc_test.go"}, held.Blocker.Paths)
	require.Equal(t, "main", held.Blocker.Branch)
	require.Equal(t, item, held.Blocker.Item)
	require.Contains(t, held.Blocker.Evidence, "calc.go, calc_test.go")
	require.Contains(t, held.Blocker.Lift, "horizon supervisor resume")
	require.Contains(t, held.Waiting, "blocked (merge_conflict)", "status says it in words too")
	require.Contains(t, held.Markdown(), "`merge_conflict`")

	rows := horizon.RoadmapStatus(mustRoadmap(t, w.roadmap), held.Items, held.Queue)
	require.Equal(t, horizon.ItemBlocked, rows[0].State, "the roadmap shows the held item blocked")
	require.NotNil(t, rows[0].Blocker)
	require.Equal(t, horizon.BlockerMergeConflict, rows[0].Blocker.Type)

	require.Empty(t, w.syncs["main"], "resume tried the merge again")
	require.Len(t, w.runs, 1, "the run starts once the blocker is lifted")
	require.Nil(t, st.Blocker)
	rec, _ := st.Items.Find(item)
	require.Equal(t, horizon.StageDone, rec.Stage)
	require.Nil(t, rec.Blocker)
}

// A completed run whose branch conflicts with a moved horizon/roadmap:
// its item is blocked with the typed blocker and the supervisor goes on.
func TestSupervisorRunThatDoesNotLandIsBlockedMergeConflict(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	e.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.tip = "elsewhere"
		for _, r := range w.runs {
			w.syncs[horizon.IntegrationBranch(r.RunID)] = []activities.SyncOutput{{Action: activities.SyncConflict, Conflict: []string{"go.mod"}}}
		}
	}, 30*time.Minute)
	stopAfter(e, 6*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Len(t, w.runs, 1)
	require.Empty(t, w.landed)
	require.Nil(t, st.Blocker, "a run's conflict does not stop the supervisor")
	rec, _ := st.Items.Find(horizon.RoadmapItemID("only item"))
	require.Equal(t, horizon.StageBlocked, rec.Stage)
	require.NotNil(t, rec.Blocker)
	require.Equal(t, horizon.BlockerMergeConflict, rec.Blocker.Type)
	require.Contains(t, rec.Blocker.Evidence, "go.mod")
	require.Contains(t, rec.Reason, "git merge "+horizon.IntegrationBranch(w.runs[0].RunID))
}

func mustRoadmap(t *testing.T, text string) horizon.Roadmap {
	t.Helper()
	rm, err := horizon.ParseRoadmap(".horizon/roadmap.md", text)
	require.NoError(t, err)
	return rm
}
