package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// runsOn is a watched session's word on where it runs, as
// Activities.tellHost sends it: host queue queue, worker identity.
func (e *env) runsOn(ctx context.Context, in activities.SessionInput, queue, worker string) {
	if !in.Watched {
		return
	}
	e.SignalWorkflow(SignalSessionHost, activities.SessionHost{
		Feature: in.Feature, Attempt: in.Attempt, Try: activity.GetInfo(ctx).Attempt, Queue: queue, Worker: worker,
	})
}

// onQueue matches an activity's context by the task queue it was
// scheduled on.
func onQueue(queue string) any {
	return mock.MatchedBy(func(ctx context.Context) bool { return activity.GetInfo(ctx).TaskQueue == queue })
}

// hostWord is a watched session's word on where one of its tries runs,
// sent at on the workflow's clock, while the session runs.
type hostWord struct {
	at     time.Duration
	queue  string
	worker string
	try    int32
}

const hostA, hostB = "horizon@host-a", "horizon@host-b"

// hostMoves is a session that started on worker A and moved to worker B:
// the late word of its first try and a retry on B move nothing more.
var hostMoves = []hostWord{
	{time.Minute, hostA, "horizon@a:1", 1},
	{2 * time.Minute, hostB, "horizon@b:2", 2},
	{3 * time.Minute, hostA, "horizon@a:1", 1}, // the first try's word, late
	{4 * time.Minute, hostB, "horizon@b:2", 3}, // a retry on the same worker
}

// watchHosts sends words as attempt of feature's session would, and
// answers the watchdogs on worker A's host queue (still reviewing when
// cancelled: the worker was lost, and stale would be its notes) and on
// worker B's (found). It returns the queues the watchdogs were scheduled
// on, in order, and the one the last watchdog ran on.
func watchHosts(e *testsuite.TestWorkflowEnvironment, feature string, attempt int, words []hostWord, stale, found horizon.AdviceRecord) (started *[]string, last func() string) {
	for _, w := range words {
		e.RegisterDelayedCallback(func() {
			e.SignalWorkflow(SignalSessionHost, activities.SessionHost{Feature: feature, Attempt: attempt, Try: w.try, Queue: w.queue, Worker: w.worker})
		}, w.at)
	}
	var (
		mu  sync.Mutex
		ran string
	)
	answer := func(rec horizon.AdviceRecord) func(context.Context, activities.AdvisorInput) (activities.AdvisorOutput, error) {
		return func(ctx context.Context, _ activities.AdvisorInput) (activities.AdvisorOutput, error) {
			mu.Lock()
			defer mu.Unlock()
			ran = activity.GetInfo(ctx).TaskQueue
			return activities.AdvisorOutput{Records: []horizon.AdviceRecord{rec}}, nil
		}
	}
	e.OnActivity(a.AdvisorWatch, onQueue(hostA), mock.Anything).After(10 * time.Hour).Return(answer(stale)).Maybe()
	e.OnActivity(a.AdvisorWatch, onQueue(hostB), mock.Anything).Return(answer(found)).Maybe()
	started = new([]string)
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "AdvisorWatch" {
			*started = append(*started, info.TaskQueue)
		}
	})
	return started, func() string {
		mu.Lock()
		defer mu.Unlock()
		return ran
	}
}

// The watchdog runs on the host queue of the worker that runs the
// session it reviews, and follows the session when a retry runs it on
// another worker: the old watchdog is cancelled and its move recorded; a
// late word of an earlier try and a retry on the same worker move
// nothing. A session that never says where it runs is not watched.
func TestAdvisorWatchRunsOnSessionHost(t *testing.T) {
	found := horizon.AdviceRecord{ID: "r1.1", Review: 1, Severity: horizon.SeverityConcern, Delivered: horizon.SeverityConcern,
		Note: "add.sh has no usage check", Verdict: horizon.AdviceDelivered, Confirmed: true}
	stale := horizon.AdviceRecord{ID: "r1.1", Review: 1, Note: "from the lost worker", Verdict: horizon.AdviceDelivered}
	for _, tc := range []struct {
		name    string
		words   []hostWord
		watched []string // the queues a watchdog ran on, in order
		advice  []horizon.AdviceRecord
	}{
		{
			name:    "on the session's worker",
			words:   []hostWord{{time.Minute, hostB, "horizon@b:2", 1}},
			watched: []string{hostB},
			advice:  []horizon.AdviceRecord{found},
		},
		{
			name:    "follows the session to another worker",
			words:   hostMoves,
			watched: []string{hostA, hostB},
			advice: []horizon.AdviceRecord{{ID: "r0", Verdict: horizon.AdviceFailed,
				Reason: "the watchdog moved with the worker's session from horizon@a:1 to horizon@b:2; its reviews on horizon@a:1 are not recorded"}, found},
		},
		{
			name:   "never told where the session runs",
			advice: []horizon.AdviceRecord{{ID: "r0", Verdict: horizon.AdviceFailed, Reason: "the watchdog never started: the worker's session did not say which worker ran it"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var worker activities.SessionInput
			e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
				func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
					if in.Role == horizon.RoleAuditor {
						return accept, nil
					}
					worker = in
					return satisfied, nil
				})
			started, last := watchHosts(e.TestWorkflowEnvironment, DefaultFeature, 1, tc.words, stale, found)
			e.gates("pass")
			e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
			e.ExecuteWorkflow(SingleRunWorkflow, advisedInput())
			s, err := result(t, e)
			require.NoError(t, err)
			require.True(t, worker.Watched, "the worker's session is told to say where it runs")
			at := s.Attempts[0]
			require.Equal(t, horizon.OutcomeAccepted, at.Outcome)
			require.Equal(t, tc.advice, at.Advice)
			require.Equal(t, tc.watched, *started, "the queues the watchdogs were scheduled on")
			if len(tc.watched) > 0 {
				require.Equal(t, tc.watched[len(tc.watched)-1], last(), "the last watchdog ran on the session's worker")
			}
		})
	}
}
