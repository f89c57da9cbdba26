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

	"github.com/horizon/horizon/horizon"
)

// signals records the outage signals sent, in order.
type signals struct {
	mu   sync.Mutex
	sent []sentSignal
}

type sentSignal struct {
	workflowID, runID string
	report            OutageReport
}

func (s *signals) SignalWorkflow(_ context.Context, workflowID, runID, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != SignalOutage {
		return errors.New("unexpected signal " + name)
	}
	s.sent = append(s.sent, sentSignal{workflowID, runID, arg.(OutageReport)})
	return nil
}

func (s *signals) all() []sentSignal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentSignal(nil), s.sent...)
}

// A git activity of a planned run's feature that fails on a locked index
// tells the workflow that scheduled it (that very run of it) and the run,
// the run's copy naming the feature; one that succeeds on its first try
// tells nobody.
func TestOutageToldToItsWorkflowAndRun(t *testing.T) {
	sig := &signals{}
	acts := &Activities{Signals: sig}
	commit := func(ctx context.Context, fail bool) (err error) {
		defer acts.watchOutage(ctx, "run-1", "f2")(&err)
		if fail {
			return errors.New("git commit: fatal: Unable to create '/repo/.git/index.lock': File exists")
		}
		return nil
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(commit, activity.RegisterOptions{Name: "CommitFeature"})

	_, err := env.ExecuteActivity("CommitFeature", false)
	require.NoError(t, err)
	require.Empty(t, sig.all(), "a first try that passes waited on nothing")

	_, err = env.ExecuteActivity("CommitFeature", true)
	require.Error(t, err)
	sent := sig.all()
	require.Len(t, sent, 2)
	own, run := sent[0], sent[1]
	require.NotEmpty(t, own.workflowID)
	require.NotEqual(t, "run-1", own.workflowID)
	require.NotEmpty(t, own.runID, "the very run that scheduled the activity")
	require.Equal(t, "run-1", run.workflowID)
	require.Empty(t, run.runID, "the run's current history")
	o := own.report.Outage
	require.NotNil(t, o)
	require.Equal(t, "git index locked", o.On)
	require.Equal(t, "CommitFeature", o.Activity)
	require.Equal(t, 1, o.Tries)
	require.Contains(t, o.LastError, "index.lock")
	require.Empty(t, o.Feature)
	require.Equal(t, "f2", run.report.Outage.Feature)
}

// Reports go out in the order they were made, and the end of the wait is
// the last thing a workflow hears, even when an earlier report is still
// on its way; a clear is sent only after something was told.
func TestOutageTellerOrder(t *testing.T) {
	sig := &signals{}
	tl := &outageTeller{sig: sig, activity: "AgentSession", workflowID: "run-1.f1.1", runID: "r"}
	tl.finish(context.Background(), nil, nil)
	require.Empty(t, sig.all(), "nothing was told: nothing to clear")

	for i := range 20 {
		tl.tell(horizon.Outage{Since: time.Unix(1, 0), Tries: i + 1, LastError: "connect ECONNREFUSED"})
	}
	tl.finish(context.Background(), nil, nil)
	sent := sig.all()
	require.NotEmpty(t, sent)
	require.Nil(t, sent[len(sent)-1].report.Outage, "the clear comes last")
	tries := 0
	for _, s := range sent[:len(sent)-1] {
		require.Equal(t, "model provider unreachable", s.report.Outage.On)
		require.Greater(t, s.report.Outage.Tries, tries, "in the order told")
		tries = s.report.Outage.Tries
	}
	// Reports still on their way when the clear was made are dropped:
	// none follows it.
	time.Sleep(50 * time.Millisecond)
	require.Len(t, sig.all(), len(sent))
}
