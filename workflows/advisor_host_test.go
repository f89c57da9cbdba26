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

// The watchdog runs on the host queue of the worker that runs the
// session it reviews, and follows the session when a retry runs it on
// another worker: the old watchdog is cancelled and its move recorded; a
// late word of an earlier try and a retry on the same worker move
// nothing. A session that never says where it runs is not watched.
func TestAdvisorWatchRunsOnSessionHost(t *testing.T) {
	const hostA, hostB = "horizon@host-a", "horizon@host-b"
	found := horizon.AdviceRecord{ID: "r1.1", Review: 1, Severity: horizon.SeverityConcern, Delivered: horizon.SeverityConcern,
		Note: "add.sh has no usage check", Verdict: horizon.AdviceDelivered, Confirmed: true}
	stale := horizon.AdviceRecord{ID: "r1.1", Review: 1, Note: "from the lost worker", Verdict: horizon.AdviceDelivered}
	type word struct {
		at     time.Duration // on the workflow's clock, while the session runs
		queue  string
		worker string
		try    int32
	}
	for _, tc := range []struct {
		name    string
		words   []word
		watched []string // the queues a watchdog ran on, in order
		advice  []horizon.AdviceRecord
		reason  string // of the first record, when it is the workflow's own
	}{
		{
			name:    "on the session's worker",
			words:   []word{{time.Minute, hostB, "horizon@b:2", 1}},
			watched: []string{hostB},
			advice:  []horizon.AdviceRecord{found},
		},
		{
			name: "follows the session to another worker",
			words: []word{
				{time.Minute, hostA, "horizon@a:1", 1},
				{2 * time.Minute, hostB, "horizon@b:2", 2},
				{3 * time.Minute, hostA, "horizon@a:1", 1}, // the first try's word, late
				{4 * time.Minute, hostB, "horizon@b:2", 3}, // a retry on the same worker
			},
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
			var (
				mu      sync.Mutex
				watched []string
				worker  activities.SessionInput
			)
			e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
				func(_ context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
					if in.Role == horizon.RoleAuditor {
						return accept, nil
					}
					worker = in
					return satisfied, nil
				})
			for _, w := range tc.words {
				e.RegisterDelayedCallback(func() {
					e.SignalWorkflow(SignalSessionHost, activities.SessionHost{Feature: DefaultFeature, Attempt: 1, Try: w.try, Queue: w.queue, Worker: w.worker})
				}, w.at)
			}
			// The lost worker's watchdog would still be reviewing when it
			// is cancelled; the new worker's finishes with its note.
			e.OnActivity(a.AdvisorWatch, onQueue(hostA), mock.Anything).After(10 * time.Hour).Return(
				func(ctx context.Context, _ activities.AdvisorInput) (activities.AdvisorOutput, error) {
					mu.Lock()
					defer mu.Unlock()
					watched = append(watched, activity.GetInfo(ctx).TaskQueue)
					return activities.AdvisorOutput{Records: []horizon.AdviceRecord{stale}}, nil
				}).Maybe()
			e.OnActivity(a.AdvisorWatch, onQueue(hostB), mock.Anything).Return(
				func(ctx context.Context, _ activities.AdvisorInput) (activities.AdvisorOutput, error) {
					mu.Lock()
					defer mu.Unlock()
					watched = append(watched, activity.GetInfo(ctx).TaskQueue)
					return activities.AdvisorOutput{Records: []horizon.AdviceRecord{found}}, nil
				}).Maybe()
			var started []string
			e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == "AdvisorWatch" {
					started = append(started, info.TaskQueue)
				}
			})
			e.gates("pass")
			e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456"}, nil).Once()
			e.ExecuteWorkflow(SingleRunWorkflow, advisedInput())
			s, err := result(t, e)
			require.NoError(t, err)
			require.True(t, worker.Watched, "the worker's session is told to say where it runs")
			at := s.Attempts[0]
			require.Equal(t, horizon.OutcomeAccepted, at.Outcome)
			require.Equal(t, tc.advice, at.Advice)
			require.Equal(t, tc.watched, started, "the queues the watchdogs were scheduled on")
			mu.Lock()
			defer mu.Unlock()
			if len(tc.watched) > 0 {
				require.Equal(t, tc.watched[len(tc.watched)-1], watched[len(watched)-1], "the last watchdog ran on the session's worker")
			}
		})
	}
}
