package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/fakemodel"
)

// A loop's session against the real opencode: a first turn, a next turn in
// the same session (SessionRequest.Turn), the same turn asked again (a
// crashed attempt's retry: answered from the session, not prompted again),
// the context limit from the catalogue, and a compaction (Summarize).
func TestOpenCodeLoopTurns(t *testing.T) {
	h := newHarness(t, `{"rules": [
	  {"name": "summary", "when": ["`+fakemodel.SummaryMarker+`"], "replies": [{"text": "SUMMARY-TEXT: two turns done"}]},
	  {"name": "turn-2", "when": ["LOOP-TURN-2"], "replies": [{"text": "second", "usage": {"prompt_tokens": 90000, "completion_tokens": 500}}]},
	  {"name": "turn-1", "when": ["LOOP-TURN-1"], "replies": [{"text": "first", "usage": {"prompt_tokens": 1000, "completion_tokens": 20}}]},
	  {"name": "turn-3", "when": ["LOOP-TURN-3"], "replies": [{"text": "third"}]}
	]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := h.start(ctx)
	repo := gitRepo(t)
	model := fakemodel.ProviderID + "/fake-coder"

	limit, err := s.ContextLimit(ctx, repo, model)
	require.NoError(t, err)
	require.Equal(t, 128000, limit)
	_, err = s.ContextLimit(ctx, repo, "fake/nope")
	require.Error(t, err)

	first, err := s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: model, Prompt: "LOOP-TURN-1 go"}, nil)
	require.NoError(t, err)
	require.Equal(t, "first", first.Text)
	require.Equal(t, int64(1020), first.Context)

	next := SessionRequest{Directory: repo, Agent: AgentWorker, Model: model, Prompt: "LOOP-TURN-2 go", ResumeSessionID: first.SessionID, Turn: "LOOP-TURN-2"}
	second, err := s.RunSession(ctx, next, nil)
	require.NoError(t, err)
	require.Equal(t, first.SessionID, second.SessionID)
	require.Equal(t, "second", second.Text)
	require.False(t, second.Resumed)
	require.Equal(t, int64(90500), second.Context)

	again, err := s.RunSession(ctx, next, nil)
	require.NoError(t, err)
	require.Equal(t, "second", again.Text)
	require.True(t, again.Resumed)
	n := 0
	for _, r := range h.fake.Requests() {
		if r.Rule == "turn-2" {
			n++
		}
	}
	require.Equal(t, 1, n, "the same turn was prompted twice")

	require.NoError(t, s.Summarize(ctx, repo, first.SessionID, model))
	require.NoError(t, s.Summarize(ctx, repo, first.SessionID, model), "a second summarize in a row is a no-op")
	var summaries []fakemodel.Request
	for _, r := range h.fake.Requests() {
		if r.Rule == "summary" {
			summaries = append(summaries, r)
		}
	}
	require.Len(t, summaries, 1)
	require.Contains(t, summaries[0].LastUser, "LOOP-TURN-2 go", "the summary is of the conversation")

	third, err := s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: model, Prompt: "LOOP-TURN-3 go", ResumeSessionID: first.SessionID, Turn: "LOOP-TURN-3"}, nil)
	require.NoError(t, err)
	require.Equal(t, "third", third.Text)
	require.Equal(t, first.SessionID, third.SessionID)
}
