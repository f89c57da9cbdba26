package activities

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
)

// hostSignals records the host reports sent; the first fail of them fail
// as an engine that does not answer would.
type hostSignals struct {
	mu    sync.Mutex
	fail  int
	tries int
	sent  []SessionHost
	to    []string
}

func (s *hostSignals) SignalWorkflow(_ context.Context, workflowID, _, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != SignalSessionHost {
		return errors.New("unexpected signal " + name)
	}
	s.tries++
	if s.tries <= s.fail {
		return errors.New("engine unavailable")
	}
	s.sent, s.to = append(s.sent, arg.(SessionHost)), append(s.to, workflowID)
	return nil
}

func (s *hostSignals) all() ([]SessionHost, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SessionHost(nil), s.sent...), append([]string(nil), s.to...)
}

// A watched session tells the workflow that scheduled it where it runs
// (its worker's host queue), again after the engine failed to take it;
// a session nobody watches, or a worker without a host queue, tells
// nothing.
func TestSessionToldWhereItRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        SessionInput
		hostQueue string
		fail      int
		told      bool
	}{
		{name: "watched", in: SessionInput{Feature: "f2", Attempt: 3, Watched: true}, hostQueue: HostQueue("horizon", "box-1a2b3c4d"), told: true},
		{name: "watched, the engine failed once", in: SessionInput{Feature: "f2", Attempt: 3, Watched: true}, hostQueue: HostQueue("horizon", "box-1a2b3c4d"), fail: 1, told: true},
		{name: "not watched", in: SessionInput{Feature: "f2", Attempt: 3}, hostQueue: HostQueue("horizon", "box-1a2b3c4d")},
		{name: "no host queue", in: SessionInput{Feature: "f2", Attempt: 3, Watched: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := &hostSignals{fail: tc.fail}
			acts := &Activities{Signals: sig, HostQueue: tc.hostQueue, Identity: "horizon@box:42"}
			session := func(ctx context.Context, in SessionInput) error {
				acts.tellHost(ctx, in.Watched, in.RunID, in.Feature, in.Attempt)
				if !tc.told {
					return nil // nothing was started to tell it later
				}
				// The session runs while its report goes out.
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					if sent, _ := sig.all(); len(sent) > 0 {
						return nil
					}
					time.Sleep(10 * time.Millisecond)
				}
				return nil
			}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(session, activity.RegisterOptions{Name: "AgentSession"})
			_, err := env.ExecuteActivity("AgentSession", tc.in)
			require.NoError(t, err)
			sent, to := sig.all()
			if !tc.told {
				require.Empty(t, sent)
				return
			}
			require.Len(t, sent, 1)
			require.NotEmpty(t, to[0], "the workflow that scheduled the session")
			require.Equal(t, SessionHost{Feature: "f2", Attempt: 3, Try: 1, Queue: "horizon@box-1a2b3c4d", Worker: "horizon@box:42"}, sent[0])
		})
	}
}
