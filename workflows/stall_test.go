package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
)

// gaps are the waits between a feature's attempts: from each attempt's end
// to the next one's start, on the test's clock.
func gaps(f *horizon.Feature) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(f.Attempts); i++ {
		out = append(out, f.Attempts[i].StartedAt.Sub(f.Attempts[i-1].EndedAt).Round(time.Second))
	}
	return out
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// stallInput is a planned run whose strategy never rotates (so only the
// stall policy spaces attempts) under policy p.
func stallInput(p horizon.StallPolicy) PlannedRunInput {
	in := plannedInput()
	in.Interval, in.Stall = 1000, p
	return in
}

// A feature that fails the same way on the same diff is stalled after
// three attempts (the daily pass's rule): its next attempts wait 1m, 2m,
// 4m, then 4m (the cap), and after run.stall_block_after (4) attempts
// while stalled it blocks as `stalled`, with the failing set and the
// strategy as evidence. The status shows the wait meanwhile; the
// independent feature goes on; a person is told, by the goal's title; an
// unblock puts the feature back in line with its stall counter reset: its
// next attempt goes at once.
func TestStallBacksOffThenBlocks(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	w.gates["f1"] = append(repeat("fail", 7), "pass")
	w.trees["f1"] = repeat("tree-same", 7)
	e := w.env()
	var s sent
	s.capture(e)
	var during, blocked horizon.RunState
	e.RegisterDelayedCallback(func() { during = query(t, e) }, 2*time.Minute)
	cb := &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		blocked = query(t, e)
		e.UpdateWorkflow(UpdateUnblock, "ok", cb, Unblock{Feature: "f1", Note: "the test was wrong; fixed"})
	}, 3*time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, stallInput(horizon.StallPolicy{Base: time.Minute, Max: 4 * time.Minute, BlockAfter: 4}))
	st, err := planResult(t, e)
	require.NoError(t, err)

	// While it waits: the run's status says so, with the wake time.
	require.NotNil(t, during.Backoff, during.Reason)
	require.Equal(t, "f1", during.Backoff.Feature)
	require.Equal(t, 2*time.Minute, during.Backoff.Wait)
	require.Contains(t, during.Reason, "stalled: next attempt at "+during.Backoff.Until.UTC().Format("15:04:05"))
	require.Contains(t, during.PlanMarkdown(), "stalled: next attempt at")
	require.Contains(t, during.PlanTree(), "stalled: next attempt at")

	// Blocked as stalled after 3 + 4 attempts; the independent f2 went on.
	require.Equal(t, horizon.StatusBlocked, blocked.Status)
	require.Nil(t, blocked.Backoff)
	f1, _ := blocked.Plan.Feature("f1")
	require.Equal(t, horizon.FeatureBlocked, f1.Status)
	require.Equal(t, horizon.BlockerStalled, f1.Blocker.Type)
	require.Contains(t, f1.Blocker.Evidence, "Testf1")
	require.Contains(t, f1.Blocker.Evidence, horizon.StrategyFocusedCorrection.Title())
	require.Equal(t, 7, f1.AttemptCount())
	require.Equal(t, []time.Duration{0, 0, time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute}, gaps(f1))
	require.Equal(t, horizon.FeatureAccepted, statuses(blocked.Plan)["f2"])
	b := s.find(notify.FeatureBlocked)
	require.Equal(t, "Make add.sh add", b.Title)
	require.Contains(t, b.Text, `"Make add.sh add"`)
	require.Contains(t, b.Text, horizon.BlockerStalled)

	// Unblocked: attempt 8 goes at once, and passes.
	require.Equal(t, horizon.StatusCompleted, st.Status)
	f1, _ = st.Plan.Feature("f1")
	require.Equal(t, 8, f1.AttemptCount())
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[7].Outcome)
	require.Equal(t, []string{"f2", "f1"}, w.commits)
	require.True(t, w.decided("paused f1 on a stalled blocker"))
}

// New evidence resets the delay: a different diff starts the waits over
// at the base (the count toward the blocker goes on); a different failing
// set is progress: the feature is not stalled until the new set repeats
// three times.
func TestStallNewEvidenceResetsTheDelay(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.gates["f1"] = append(repeat("fail", 9), "pass")
	w.trees["f1"] = []string{"tA", "tA", "tA", "tA", "tB", "tB", "tC", "tC", "tC"}
	a, b := []string{"TestA"}, []string{"TestB"}
	w.failing["f1"] = [][]string{a, a, a, a, a, a, b, b, b}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, stallInput(horizon.StallPolicy{Base: time.Minute, Max: time.Hour, BlockAfter: 10}))
	st, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, st.Status)
	f1, _ := st.Plan.Feature("f1")
	require.Equal(t, []time.Duration{
		0, 0, time.Minute, 2 * time.Minute, // stalled on A after three: 1m, 2m
		time.Minute, 2 * time.Minute, // attempt 5's new diff: back to 1m, then 2m
		0, 0, time.Minute, // attempt 7's new failing set: not stalled until B repeats
	}, gaps(f1))
}

// Without a policy (histories from before it, or a feature that is not
// stalled) nothing waits: a feature whose failing set changes every
// attempt is making progress and is never held back.
func TestStallProgressNeverWaits(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.gates["f1"] = append(repeat("fail", 7), "pass")
	for i := range 7 {
		w.failing["f1"] = append(w.failing["f1"], []string{fmt.Sprintf("Test%d", i)})
	}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, stallInput(horizon.StallPolicy{Threshold: 100}))
	st, err := planResult(t, e)
	require.NoError(t, err)
	f1, _ := st.Plan.Feature("f1")
	require.Equal(t, repeat(time.Duration(0), 7), gaps(f1))
}

// The budget's deadline cuts a backoff short; the stop names the backoff
// and no outage, since none was recorded.
func TestStallBudgetStopNamesTheBackoff(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.gates["f1"] = repeat("fail", 50)
	w.trees["f1"] = repeat("t", 50)
	e := w.env()
	in := stallInput(horizon.StallPolicy{Base: time.Hour, BlockAfter: 10})
	in.BudgetTime = 90 * time.Minute
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.ReasonBudget, s.ReasonKind)
	require.Contains(t, s.Reason, "time limit 1h30m0s reached")
	require.Contains(t, s.Reason, "while f1 backed off, stalled")
	require.NotContains(t, s.Reason, "outage")
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, 4, f1.AttemptCount(), "three, an hour's wait, one more; the second wait outlasts the budget")
}

// A budget that ends while an activity retries says "while waiting out an
// outage" only when the activity reported one; otherwise it names the
// activity it cut off.
func TestBudgetStopSaysOutageOnlyWhenRecorded(t *testing.T) {
	for _, reported := range []bool{false, true} {
		t.Run(fmt.Sprint("reported=", reported), func(t *testing.T) {
			w := newWorld(t, block(ms("core", ft("f1"))))
			down := errors.New("opencode session ses_1: APIError: Cannot connect to API")
			w.sessionErrs["f1"] = repeat(down, 200)
			e := w.env()
			if reported {
				e.RegisterDelayedCallback(func() {
					o := &horizon.Outage{On: "model provider unreachable", Activity: "worker · f1 · attempt 1", Tries: 3, LastError: "Cannot connect to API"}
					require.NoError(t, e.SignalWorkflowByID("run-1.f1.1", SignalOutage, activities.OutageReport{Outage: o}))
				}, 2*time.Minute)
			}
			in := plannedInput()
			in.BudgetTime = 5 * time.Minute
			e.ExecuteWorkflow(PlannedRunWorkflow, in)
			s, err := planResult(t, e)
			require.Error(t, err)
			require.Equal(t, horizon.ReasonBudget, s.ReasonKind, s.Reason)
			require.Contains(t, s.Reason, "time limit 5m0s reached")
			if reported {
				require.Contains(t, s.Reason, "while waiting out an outage: model provider unreachable")
				return
			}
			require.NotContains(t, s.Reason, "outage")
			require.Contains(t, s.Reason, "it cut off the running AgentSession")
			require.Contains(t, s.Reason, "Cannot connect to API")
		})
	}
}

// Decisions stay small however long a feature fails: a strategy switch
// after every attempt names at most the last few receipts plus a count,
// so decisions.jsonl grows linearly with attempts (it grew with their
// square: each switch listed every receipt so far).
func TestStallDecisionsStayBounded(t *testing.T) {
	size := func(attempts int) (total, largest int) {
		w := newWorld(t, block(ms("core", ft("f1"))))
		w.gates["f1"] = append(repeat("fail", attempts), "pass")
		e := w.env()
		in := plannedInput() // interval 1: a new strategy every attempt
		in.Stall = horizon.StallPolicy{Base: time.Second, Max: time.Second, BlockAfter: 1000}
		e.ExecuteWorkflow(PlannedRunWorkflow, in)
		st, err := planResult(t, e)
		require.NoError(t, err)
		require.Equal(t, horizon.StatusCompleted, st.Status)
		for _, d := range w.decisions {
			b, err := json.Marshal(d)
			require.NoError(t, err)
			require.LessOrEqual(t, len(d.Evidence), horizon.MaxDecisionEvidence, d.What)
			total += len(b) + 1
			largest = max(largest, len(b))
		}
		return total, largest
	}
	total40, largest40 := size(40)
	total80, largest80 := size(80)
	require.Less(t, largest80, 600, "one decision's size does not depend on the attempts before it")
	require.LessOrEqual(t, largest80, largest40+20)
	require.Less(t, float64(total80), 2.2*float64(total40), "linear: %d bytes for 40 attempts, %d for 80", total40, total80)
	require.Greater(t, total80, total40)
}

// A roadmap whose decompositions fail backs off between them like a
// stalled feature (1m, doubling) instead of decomposing every item at
// once; a decomposition that succeeds resets the delay.
func TestSupervisorFailingDecompositionsBackOff(t *testing.T) {
	w := newRepoWorld(t, "- [ ] One\n- [ ] Two\n- [ ] Three\n- [ ] Four\n- [ ] Five\n- [ ] Six\n")
	w.planFails = 4
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	var during horizon.SupervisorState
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&during))
	}, 8*time.Minute)
	stopAfter(e, 48*time.Hour)
	in := supervisorInput()
	in.DecomposeAhead = 1
	e.ExecuteWorkflow(SupervisorWorkflowName, in)
	st := supervisorResult(t, e)

	var gaps []time.Duration
	for i := 1; i < len(w.planned); i++ {
		gaps = append(gaps, w.planned[i].Sub(w.planned[i-1]).Round(time.Second))
	}
	require.Len(t, w.planned, 6, "each item decomposed once")
	require.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}, gaps[:4], "backing off after each failure")
	require.Greater(t, gaps[4], time.Duration(0))
	require.Equal(t, 4, during.DecomposeFailures)
	require.Contains(t, during.Waiting, "decompositions failed in a row")
	require.Zero(t, st.DecomposeFailures, "a decomposition that succeeded reset the backoff")
	require.Len(t, w.runs, 2)
}
