package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// Issue 23: a lead whose model is unreachable never ends its
// decomposition. These tests hold the fake lead (planHang) and check that
// the supervisor goes on beside it, that stop ends it, and that the
// deadline cuts it short.

// stopAt stops the supervisor once d of workflow time has passed and
// keeps the stop update's answer in *answer.
func stopAt(t *testing.T, e *testsuite.TestWorkflowEnvironment, d time.Duration, answer *horizon.SupervisorState) {
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateStop, "stop", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { panic(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				b, jerr := json.Marshal(v)
				require.NoError(t, jerr)
				require.NoError(t, json.Unmarshal(b, answer))
			},
		})
	}, d)
}

// elapsed is the workflow time from the supervisor's start to its last
// published state (its end, for a stopped one).
func elapsed(st horizon.SupervisorState) time.Duration { return st.UpdatedAt.Sub(st.StartedAt) }

// A goal queued while the lead decomposes a roadmap item starts, runs
// and lands; the supervisor says it waits on the decomposition meanwhile.
func TestSupervisorStartsQueuedGoalsBesideADecomposition(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Slow item\n")
	w.planHang = []time.Duration{100 * time.Hour}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	in := supervisorInput()
	in.DecomposeTimeout = 24 * time.Hour
	noop := &testsuite.TestUpdateCallback{OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateQueueAdd, "add", noop, horizon.QueueEntry{Goal: "Fix the flaky test"})
	}, 10*time.Minute)
	var mid horizon.SupervisorState
	e.RegisterDelayedCallback(func() { mid = queryState(t, e) }, 3*time.Hour)
	var answer horizon.SupervisorState
	stopAt(t, e, 4*time.Hour, &answer)
	e.ExecuteWorkflow(SupervisorWorkflowName, in)
	st := supervisorResult(t, e)

	require.Len(t, w.runs, 1, "the queued goal started beside the decomposition")
	require.Equal(t, "Fix the flaky test", w.runs[0].Goal)
	require.Len(t, w.landed, 1, "and landed")
	require.Len(t, mid.Runs, 1)
	require.Equal(t, horizon.StatusCompleted, mid.Runs[0].Status, "its status signal was handled")
	require.NotEmpty(t, mid.Runs[0].Landed)
	item := horizon.RoadmapItemID("Slow item")
	rec, _ := mid.Items.Find(item)
	require.Equal(t, horizon.StageDecomposing, rec.Stage, "the lead still decomposes")
	require.Contains(t, mid.Waiting, "the lead decomposes "+item)
	require.Contains(t, mid.Waiting, "supervisor.decompose_timeout")
	require.Equal(t, horizon.SupervisorStopped, st.Status)
	require.Equal(t, horizon.SupervisorStopped, answer.Status, "stop answers once the supervisor has ended")
}

// stop cancels a decomposition in flight and the supervisor completes at
// once; the item reads cancelled, not failed (no backoff is counted).
func TestSupervisorStopCancelsTheDecomposition(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Slow item\n- [ ] Next item\n")
	w.planHang = []time.Duration{100 * time.Hour}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	var answer horizon.SupervisorState
	stopAt(t, e, 30*time.Minute, &answer)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Equal(t, []string{"Slow item"}, w.cancelled, "the stop cancelled the lead's decomposition")
	require.Empty(t, w.decomposed, "and took up no other item")
	require.Less(t, elapsed(st), 30*time.Minute+stopGrace, "the supervisor ended at the stop")
	require.Equal(t, horizon.SupervisorStopped, st.Status)
	require.Equal(t, horizon.SupervisorStopped, answer.Status)
	require.Empty(t, st.Waiting)
	rec, _ := st.Items.Find(horizon.RoadmapItemID("Slow item"))
	require.Equal(t, horizon.StageBlocked, rec.Stage)
	require.Contains(t, rec.Reason, "cancelled: the supervisor stopped")
	require.Zero(t, st.DecomposeFailures)
}

// A decomposition with no plan by DecomposeTimeout is cancelled and
// counts as failed: the item is blocked saying so, and the next one waits
// out the backoff before its decomposition starts.
func TestSupervisorDecompositionDeadline(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Slow item\n- [ ] Next item\n")
	w.planHang = []time.Duration{100 * time.Hour, 0}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	in := supervisorInput()
	in.DecomposeTimeout = time.Hour
	var mid horizon.SupervisorState
	e.RegisterDelayedCallback(func() { mid = queryState(t, e) }, 60*time.Minute+30*time.Second)
	stopAfter(e, 12*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, in)
	st := supervisorResult(t, e)

	require.Equal(t, []string{"Slow item"}, w.cancelled, "the deadline cancelled the lead")
	rec, _ := st.Items.Find(horizon.RoadmapItemID("Slow item"))
	require.Equal(t, horizon.StageBlocked, rec.Stage)
	require.Contains(t, rec.Reason, "no plan within 1h0m0s (supervisor.decompose_timeout)")
	require.Equal(t, 1, mid.DecomposeFailures, "a failed decomposition, backing off")
	require.Contains(t, mid.Waiting, "1 decompositions failed in a row")
	require.Len(t, w.decomposed, 1)
	require.Contains(t, w.decomposed[0], "Next item")
	start := st.StartedAt
	require.GreaterOrEqual(t, w.planned[0].Sub(start), time.Hour+in.Run.Stall.Delay(0), "the next decomposition waited out the backoff")
	next, _ := st.Items.Find(horizon.RoadmapItemID("Next item"))
	require.Equal(t, horizon.StageDone, next.Stage)
	require.Zero(t, st.DecomposeFailures, "the next decomposition succeeded")
}

// A supervisor whose history decomposed in its loop (before
// supervisor-decompose-aside) goes on doing so, so a queued goal waits
// behind the decomposition as it did; a stop still cancels it and ends
// the supervisor (supervisor-stop-ends).
func TestSupervisorBeforeDecomposeAsideStopStillEnds(t *testing.T) {
	w := newRepoWorld(t, "- [ ] Slow item\n")
	w.planHang = []time.Duration{100 * time.Hour}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	e.OnGetVersion(changeDecomposeAside, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	noop := &testsuite.TestUpdateCallback{OnReject: func(err error) { panic(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateQueueAdd, "add", noop, horizon.QueueEntry{Goal: "Fix the flaky test"})
	}, 10*time.Minute)
	var answer horizon.SupervisorState
	stopAt(t, e, time.Hour, &answer)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Empty(t, w.runs, "the old loop waits behind its decomposition")
	require.Equal(t, []string{"Slow item"}, w.cancelled)
	require.Less(t, elapsed(st), time.Hour+stopGrace)
	require.Equal(t, horizon.SupervisorStopped, answer.Status)
	require.Equal(t, 1, st.Queue.Len(), "the queued goal stays queued")
}
