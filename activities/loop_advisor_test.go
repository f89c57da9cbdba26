package activities

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/advisor"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

// loopSession is a loop's session: activation 1 is over (and the session
// idle) when the watch of activation 2 starts; activation 2's prompt and
// its step arrive at the third read.
type loopSession struct {
	*fakeWorker
	reads int
	next  []agent.Message
}

func (l *loopSession) FindSession(_ context.Context, _, title string) (string, error) {
	if title != LoopSessionTitle("loop-1") {
		return "", nil
	}
	return "ses_w", nil
}

func (l *loopSession) Transcript(ctx context.Context, dir, sid string) ([]agent.Message, error) {
	if sid == "ses_w" {
		l.mu.Lock()
		if l.reads++; l.reads == 3 {
			l.msgs = append(l.msgs, l.next...)
		}
		l.mu.Unlock()
	}
	return l.fakeWorker.Transcript(ctx, dir, sid)
}

func (l *loopSession) Idle(context.Context, string, string) (bool, error) { return true, nil }

// The watch of a loop's activation 2: it waits for the activation's
// prompt (the session is idle after activation 1, which is not its to
// review), reviews from that prompt on, goes on from the previous
// activation's judge state (its note is r2.1, review 2) and hands its own
// on, and keeps its record as the activation's.
func TestAdvisorWatchLoopActivation(t *testing.T) {
	marker := horizon.LoopMarker("loop-1", 2, 2)
	f := &loopSession{
		fakeWorker: &fakeWorker{
			msgs: []agent.Message{
				{ID: "m01", Role: "user", Text: horizon.LoopMarker("loop-1", 1, 2) + " ACT-ONE: make Add add"},
				{ID: "m02", Role: "assistant", Completed: true, Finish: "stop", Text: "ACT-ONE done"},
			},
			reviews: []string{advice(`{"severity": "concern", "note": "Add subtracts", "evidence": {"file": "calc/add.go", "line": 4, "observed_fact": "` + "`return a - b`" + `"}}`)},
		},
		next: []agent.Message{{ID: "m03", Role: "user", Text: marker + " go on"}, step("m04", "stop")},
	}
	in := watchInput(t)
	in.RunID, in.Feature, in.Attempt = "loop-1", "loop", 2
	in.Loop = &AdvisorLoop{Title: LoopSessionTitle("loop-1"), Turn: marker, Activation: 2, Max: 2,
		Carry: &AdvisorCarry{State: advisor.State{Reviews: 1}, Earlier: []string{"review 1: 1 step; no notes"}}}
	old := advisorPoll
	advisorPoll = 10 * time.Millisecond
	t.Cleanup(func() { advisorPoll = old })
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts := &Activities{Home: t.TempDir(), Sessions: f}
	env.RegisterActivity(acts)
	v, err := env.ExecuteActivity(acts.AdvisorWatch, in)
	require.NoError(t, err)
	var out AdvisorOutput
	require.NoError(t, v.Get(&out))

	require.GreaterOrEqual(t, f.reads, 3, "the watch waited for activation 2's prompt")
	require.Len(t, f.prompts, 1, "one review: activation 2's step")
	p := f.prompts[0]
	require.Contains(t, p, "Review 2 of the worker's session on loop loop-1 (activation 2 of 2)")
	require.Contains(t, p, "review 1: 1 step; no notes", "the rolling summary goes on from activation 1")
	_, delta, _ := strings.Cut(p, "## What the worker did since your last review")
	require.Contains(t, delta, marker)
	require.NotContains(t, delta, "ACT-ONE", "activation 1 is not this watch's to review")

	require.Len(t, out.Records, 1)
	require.Equal(t, "r2.1", out.Records[0].ID)
	require.Equal(t, horizon.AdviceDelivered, out.Records[0].Verdict)
	require.Len(t, f.delivered, 1)
	require.True(t, strings.HasPrefix(f.delivered[0].Text, "[horizon advisor · concern r2.1]"), f.delivered[0].Text)
	require.NotNil(t, out.Carry)
	require.Equal(t, 2, out.Carry.State.Reviews, "handed on to activation 3's watch")
	require.Len(t, out.Carry.Earlier, 2)
	require.Equal(t, "loop-activation-2-advice.md", filepath.Base(out.Transcript))
	require.Equal(t, filepath.Join(acts.Home, "runs", "loop-1", "transcripts"), filepath.Dir(out.Transcript))
}
