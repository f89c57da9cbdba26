package activities

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

// loopSessions is a Sessions and Compactor: each turn answers text, with
// the context it leaves; a failing turn crashes after it was prompted.
type loopSessions struct {
	offers
	mu         sync.Mutex
	reqs       []agent.SessionRequest
	text       string
	failing    error
	summarized []string
	// window is the catalog's context window (0: the catalog has none);
	// newLoopSessions sets 128000.
	window int
}

func (s *loopSessions) RunSession(_ context.Context, req agent.SessionRequest, on func(agent.Progress)) (agent.SessionResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	fail := s.failing
	s.mu.Unlock()
	sid := req.ResumeSessionID
	if sid == "" {
		sid = "ses_1"
		on(agent.Progress{SessionID: sid, Phase: "created"})
	}
	on(agent.Progress{SessionID: sid, Phase: "prompted"})
	if fail != nil {
		return agent.SessionResult{SessionID: sid}, fail
	}
	return agent.SessionResult{SessionID: sid, Text: s.text, Finish: "stop", Context: 70000, Usage: agent.Usage{Input: 69000, Output: 1000, Cost: 0.25}}, nil
}

func (s *loopSessions) ContextLimit(context.Context, string, string) (int, error) {
	if s.window < 0 {
		return 0, nil
	}
	if s.window == 0 {
		return 128000, nil
	}
	return s.window, nil
}

func (s *loopSessions) Summarize(_ context.Context, _, sid, _ string) error {
	s.summarized = append(s.summarized, sid)
	return nil
}

func loopInput(h *gitHarness) LoopInput {
	return LoopInput{ID: "loop-1", Prompt: "GOAL", Repo: h.repo, BaseCommit: h.base, Role: "build", Model: "fake/m", Max: 5, CompactAt: 0.8}
}

const satisfiedText = "ok\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"done\"}\n```\n"

// A loop's lane is cut on horizon/loop-<id>, its model and context window
// fixed; each activation is a turn of one session, the first creating it,
// later ones (and any retry) naming their marker; the end commits the
// lane's change once on the branch.
func TestLoopActivities(t *testing.T) {
	h := newGitHarness(t)
	sess := &loopSessions{offers: offers{"fake/m"}, text: satisfiedText}
	h.a.Sessions = sess
	in := loopInput(h)

	v, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	require.NoError(t, err)
	var plan LoopPlan
	require.NoError(t, v.Get(&plan))
	lane := filepath.Join(h.a.Home, "lanes", "_loops", "loop-1")
	// models.default forced the loop's model: the advisor's reviews too.
	require.Equal(t, LoopPlan{Agent: AgentWorker, Model: "fake/m", Paid: true, Dir: lane, Branch: "horizon/loop-1", Base: h.base, ContextLimit: 128000, Review: "fake/m"}, plan)
	require.Equal(t, h.base, h.git(lane, "rev-parse", "HEAD"))

	first := horizon.LoopBrief{Loop: in.ID, Goal: in.Prompt, Activation: 1, Max: 5}.String()
	v, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, Activation: 1, Prompt: first})
	require.NoError(t, err)
	var out LoopActivationOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, "ses_1", out.SessionID)
	require.Equal(t, int64(70000), out.Context)
	require.Equal(t, &horizon.Report{Status: horizon.ReportSatisfied, Summary: "done"}, out.Report)
	require.Empty(t, sess.reqs[0].ResumeSessionID)
	require.Empty(t, sess.reqs[0].Turn, "the first activation creates the session")

	next := horizon.LoopBrief{Loop: in.ID, Goal: in.Prompt, Activation: 2, Max: 5}.String()
	_, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, SessionID: "ses_1", Activation: 2, Prompt: next})
	require.NoError(t, err)
	require.Equal(t, "ses_1", sess.reqs[1].ResumeSessionID)
	require.Equal(t, horizon.LoopMarker("loop-1", 2, 5), sess.reqs[1].Turn)

	sess.text = "no block"
	v, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, SessionID: "ses_1", Activation: 3,
		Prompt: horizon.LoopBrief{Loop: in.ID, Activation: 3, Max: 5}.String()})
	require.NoError(t, err)
	var prose LoopActivationOutput
	require.NoError(t, v.Get(&prose))
	require.Nil(t, prose.Report)
	require.Contains(t, prose.ProtocolError, "horizon-report")

	require.NoError(t, func() error {
		_, err := h.env.ExecuteActivity(h.a.CompactLoop, LoopCompactInput{Loop: in, Plan: plan, SessionID: "ses_1", Activation: 4})
		return err
	}())
	require.Equal(t, []string{"ses_1"}, sess.summarized)

	h.write(lane, "loop.txt", "changed\n")
	v, err = h.env.ExecuteActivity(h.a.FinishLoop, LoopEnd{Loop: in, Plan: plan, SessionID: "ses_1", Status: horizon.LoopSatisfied, Activations: 3})
	require.NoError(t, err)
	var res LoopResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, horizon.LoopSatisfied, res.Status)
	require.Equal(t, "horizon/loop-1", res.Branch)
	require.Equal(t, h.git(h.repo, "rev-parse", "horizon/loop-1"), res.Commit)
	require.Contains(t, h.git(h.repo, "log", "-1", "--format=%B", "horizon/loop-1"), "Horizon-Loop: loop-1")
	require.NoDirExists(t, lane)
	require.Equal(t, h.base, h.git(h.repo, "rev-parse", "main"))

	// Finishing again (a retry) commits nothing more.
	v, err = h.env.ExecuteActivity(h.a.FinishLoop, LoopEnd{Loop: in, Plan: plan, SessionID: "ses_1", Status: horizon.LoopSatisfied, Activations: 3})
	require.NoError(t, err)
	var again LoopResult
	require.NoError(t, v.Get(&again))
	require.Equal(t, res.Commit, again.Commit)
}

// A retried first activation (the daemon died after the session was
// created and prompted) continues the heartbeated session with its marker,
// so the session, not a second prompt, answers.
func TestLoopActivationRetryContinuesItsTurn(t *testing.T) {
	h := newGitHarness(t)
	sess := &loopSessions{offers: offers{"fake/m"}, text: satisfiedText}
	h.a.Sessions = sess
	in := loopInput(h)
	v, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	require.NoError(t, err)
	var plan LoopPlan
	require.NoError(t, v.Get(&plan))
	brief := horizon.LoopBrief{Loop: in.ID, Goal: in.Prompt, Activation: 1, Max: 5}.String()

	sess.failing = errors.New("opencode exited")
	_, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, Activation: 1, Prompt: brief})
	require.Error(t, err)

	sess.failing = nil
	h.env.SetHeartbeatDetails(LoopHeartbeat{SessionHeartbeat: SessionHeartbeat{SessionID: "ses_1", Phase: "prompted"}, Activation: 1, Prompted: true})
	v, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, Activation: 1, Prompt: brief})
	require.NoError(t, err)
	var out LoopActivationOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, "ses_1", out.SessionID)
	require.Len(t, sess.reqs, 2)
	require.Equal(t, "ses_1", sess.reqs[1].ResumeSessionID, "the retry continues the crashed attempt's session")
	require.Equal(t, horizon.LoopMarker("loop-1", 1, 5), sess.reqs[1].Turn)
	require.Equal(t, brief, sess.reqs[1].Prompt)
}

// A role that is not a leaderboard role is bad input: retrying cannot fix it.
func TestPrepareLoopRefusesARuntimeAgent(t *testing.T) {
	h := newGitHarness(t)
	h.a.Sessions = &loopSessions{offers: offers{"fake/m"}}
	in := loopInput(h)
	in.Role = "horizon-worker"
	_, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
}

// A model without a context window in OpenCode's catalog cannot tell the
// loop when to compact: the loop refuses (bad input, naming
// --context-limit), unless --context-limit gives the window.
func TestPrepareLoopNeedsAContextWindow(t *testing.T) {
	h := newGitHarness(t)
	h.a.Sessions = &loopSessions{offers: offers{"fake/m"}, window: -1}
	in := loopInput(h)
	_, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.Contains(t, app.Error(), "gives fake/m no context window")
	require.Contains(t, app.Error(), "--context-limit N")

	in.ContextLimit = 32000
	v, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	require.NoError(t, err)
	var plan LoopPlan
	require.NoError(t, v.Get(&plan))
	require.Equal(t, 32000, plan.ContextLimit)
}

// storeSessions is a worker's OpenCode that knows only the sessions in
// known: another worker's session is a 404 here.
type storeSessions struct {
	*loopSessions
	known map[string]bool
}

func (s *storeSessions) Transcript(_ context.Context, _, sid string) ([]agent.Message, error) {
	if !s.known[sid] {
		return nil, &agent.APIError{Method: "GET", Path: "/session/" + sid + "/message", StatusCode: 404, Body: "not found"}
	}
	return nil, nil
}

// An activation whose session lives in another worker's OpenCode store
// (a cluster: the last activation ran elsewhere) starts a fresh session,
// told what the lane holds, and says so; one this store knows continues.
func TestLoopActivationMovesWhereTheStoreCannot(t *testing.T) {
	h := newGitHarness(t)
	sess := &storeSessions{loopSessions: &loopSessions{offers: offers{"fake/m"}, text: satisfiedText}, known: map[string]bool{"ses_1": true}}
	h.a.Sessions = sess
	in := loopInput(h)
	v, err := h.env.ExecuteActivity(h.a.PrepareLoop, in)
	require.NoError(t, err)
	var plan LoopPlan
	require.NoError(t, v.Get(&plan))
	brief := horizon.LoopBrief{Loop: in.ID, Goal: in.Prompt, Activation: 2, Max: 5}.String()

	v, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, SessionID: "ses_elsewhere", Activation: 2, Prompt: brief})
	require.NoError(t, err)
	var out LoopActivationOutput
	require.NoError(t, v.Get(&out))
	require.Empty(t, sess.reqs[0].ResumeSessionID, "a fresh session")
	require.Contains(t, sess.reqs[0].Prompt, "Continuing work another worker started")
	require.Equal(t, "session moved: ses_elsewhere → ses_1 (not in this worker's store); it started afresh, told what the lane holds", out.Moved)

	_, err = h.env.ExecuteActivity(h.a.LoopActivation, LoopActivationInput{Loop: in, Plan: plan, SessionID: "ses_1", Activation: 3, Prompt: brief})
	require.NoError(t, err)
	require.Equal(t, "ses_1", sess.reqs[1].ResumeSessionID, "a session this store has is continued")

	v, err = h.env.ExecuteActivity(h.a.FinishLoop, LoopEnd{Loop: in, Plan: plan, SessionID: "ses_1", Status: horizon.LoopSatisfied, Activations: 3, Moves: []string{out.Moved}})
	require.NoError(t, err)
	var res LoopResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, []string{out.Moved}, res.Moves, "the loop's results count the move")
}
