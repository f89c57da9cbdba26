package activities

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/specialist"
)

// streamIDs reads the IDs of a task's output stream, in order; every line
// must be whole JSON.
func streamIDs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev TaskEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), sc.Text())
		ids = append(ids, ev.ID)
	}
	require.NoError(t, sc.Err())
	return ids
}

// The stream writes each ID once, also across a reopen (a retried
// session after a crash), and cuts off a line a crash left half-written.
func TestTaskStreamWritesEachEventOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks", "t1.ndjson")
	s, err := openTaskStream(path)
	require.NoError(t, err)
	for _, id := range []string{"p1", "p2", "p1"} {
		require.NoError(t, s.Write(TaskEvent{Part: agent.Part{ID: id, Type: "text", Text: "x"}}))
	}
	require.NoError(t, s.Close())
	require.Equal(t, []string{"p1", "p2"}, streamIDs(t, path))

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"p3","ty`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	s, err = openTaskStream(path)
	require.NoError(t, err)
	for _, id := range []string{"p2", "p3", "p1", "p4"} {
		require.NoError(t, s.Write(TaskEvent{Part: agent.Part{ID: id, Type: "text", Text: "y"}}))
	}
	require.NoError(t, s.Close())
	require.Equal(t, []string{"p1", "p2", "p3", "p4"}, streamIDs(t, path))
}

// scriptedSessions is a Sessions whose session reports its ID, then ends;
// its parts grow with each call, as a real session's do.
type scriptedSessions struct {
	offers
	mu      sync.Mutex
	reqs    []agent.SessionRequest
	parts   []agent.Part
	failing error
}

func (s *scriptedSessions) RunSession(_ context.Context, req agent.SessionRequest, on func(agent.Progress)) (agent.SessionResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	fail := s.failing
	s.mu.Unlock()
	sid := req.ResumeSessionID
	if sid == "" {
		sid = "ses_1"
	}
	on(agent.Progress{SessionID: sid, Phase: "created"})
	if fail != nil {
		return agent.SessionResult{SessionID: sid}, fail
	}
	return agent.SessionResult{SessionID: sid, Resumed: req.ResumeSessionID != "", Text: "done", Finish: "stop", Usage: agent.Usage{Input: 10, Cost: 0.5}}, nil
}

func (s *scriptedSessions) Parts(context.Context, string, string) ([]agent.Part, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]agent.Part(nil), s.parts...), nil
}

func taskInput(h *gitHarness, id, sp string) TaskInput {
	return TaskInput{ID: id, Specialist: sp, Prompt: "look around", Repo: h.repo, BaseCommit: h.base, Model: "fake/m",
		UserSpecialists: filepath.Join(h.a.Home, "no-user-specialists")}
}

// A read-only specialist works in the repository; its session's parts go
// to the stream once, also when the session is continued after a crash;
// its metadata carries the model and the session.
func TestTaskReadOnlyRunsInRepo(t *testing.T) {
	h := newGitHarness(t)
	sess := &scriptedSessions{offers: offers{"fake/m"}}
	h.a.Sessions = sess
	in := taskInput(h, "t1", "explorer")

	v, err := h.env.ExecuteActivity(h.a.PrepareTask, in)
	require.NoError(t, err)
	var plan TaskPlan
	require.NoError(t, v.Get(&plan))
	require.Equal(t, TaskPlan{Agent: "horizon-sp-explorer", Model: "fake/m", Paid: true, Dir: h.repo, ReadOnly: true}, plan)
	m, err := ReadTaskMeta(h.a.Home, "t1")
	require.NoError(t, err)
	require.Equal(t, TaskRunning, m.Status)
	require.NotNil(t, m.StartedAt)

	// First try: the session crashed after two parts were finished.
	sess.parts = []agent.Part{{ID: "prt_1", Role: "user", Type: "text", Text: "look around"}, {ID: "prt_2", Role: "assistant", Type: "tool", Tool: "read", Status: "completed"}}
	sess.failing = errors.New("opencode exited")
	_, err = h.env.ExecuteActivity(h.a.TaskSession, TaskSessionInput{Task: in, Plan: plan})
	require.Error(t, err)
	m, err = ReadTaskMeta(h.a.Home, "t1")
	require.NoError(t, err)
	require.Equal(t, "ses_1", m.Session, "the session is in the metadata as soon as it exists")

	// The retry continues the heartbeated session; the stream gets only
	// what is new.
	sess.failing = nil
	sess.parts = append(sess.parts, agent.Part{ID: "prt_3", Role: "user", Type: "text", Text: agent.ContinuationPrompt}, agent.Part{ID: "prt_4", Role: "assistant", Type: "text", Text: "done"})
	h.env.SetHeartbeatDetails(SessionHeartbeat{SessionID: "ses_1"})
	v, err = h.env.ExecuteActivity(h.a.TaskSession, TaskSessionInput{Task: in, Plan: plan})
	require.NoError(t, err)
	var out TaskSessionOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, "ses_1", out.SessionID)
	require.True(t, out.Resumed)
	require.Equal(t, "ses_1", sess.reqs[1].ResumeSessionID)
	require.Equal(t, "horizon-sp-explorer", sess.reqs[1].Agent)
	require.Equal(t, h.repo, sess.reqs[1].Directory)

	v, err = h.env.ExecuteActivity(h.a.FinishTask, TaskEnd{Task: in, Plan: plan, Session: out, Status: TaskCompleted})
	require.NoError(t, err)
	var res TaskResult
	require.NoError(t, v.Get(&res))
	require.Equal(t, TaskResult{ID: "t1", Status: TaskCompleted, Session: "ses_1", Model: "fake/m"}, res)
	require.Equal(t, []string{"prt_1", "prt_2", "prt_3", "prt_4", "end"}, streamIDs(t, TaskOutputPath(h.a.Home, "t1")))
	m, err = ReadTaskMeta(h.a.Home, "t1")
	require.NoError(t, err)
	require.Equal(t, TaskCompleted, m.Status)
	require.True(t, m.Resumed)
	require.Equal(t, 0.5, m.Cost)
	require.NotNil(t, m.EndedAt)
	require.Empty(t, h.git(h.repo, "branch", "--list", "horizon/task-*"), "a read-only task leaves no branch")
}

// A specialist that may edit works in a lane on horizon/task-<id>; its
// end commits the change there once and removes the worktree, leaving
// the branch. The user's branch is untouched.
func TestTaskEditingRunsInLane(t *testing.T) {
	h := newGitHarness(t)
	h.a.Sessions = &scriptedSessions{offers: offers{"fake/m"}}
	in := taskInput(h, "t2", "worker")

	v, err := h.env.ExecuteActivity(h.a.PrepareTask, in)
	require.NoError(t, err)
	var plan TaskPlan
	require.NoError(t, v.Get(&plan))
	lane := filepath.Join(h.a.Home, "lanes", "_tasks", "t2")
	require.Equal(t, TaskPlan{Agent: "horizon-sp-worker", Model: "fake/m", Paid: true, Dir: lane, Branch: "horizon/task-t2", Base: h.base}, plan)
	require.Equal(t, h.base, h.git(lane, "rev-parse", "HEAD"))

	// A retried prepare finds the lane as it is.
	h.write(lane, "NOTES.md", "found\n")
	_, err = h.env.ExecuteActivity(h.a.PrepareTask, in)
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(lane, "NOTES.md"))

	end := TaskEnd{Task: in, Plan: plan, Session: TaskSessionOutput{SessionID: "ses_9"}, Status: TaskCompleted}
	v, err = h.env.ExecuteActivity(h.a.FinishTask, end)
	require.NoError(t, err)
	var res TaskResult
	require.NoError(t, v.Get(&res))
	require.NotEmpty(t, res.Commit)
	require.Equal(t, res.Commit, h.git(h.repo, "rev-parse", "horizon/task-t2"))
	require.Equal(t, "NOTES.md", h.git(h.repo, "diff", "--name-only", h.base, "horizon/task-t2"))
	require.Contains(t, h.git(h.repo, "log", "-1", "--format=%B", "horizon/task-t2"), "Horizon-Task: t2")
	require.NoDirExists(t, lane)
	require.Equal(t, h.base, h.git(h.repo, "rev-parse", "main"))

	// A retried finish commits nothing more.
	v, err = h.env.ExecuteActivity(h.a.FinishTask, end)
	require.NoError(t, err)
	var again TaskResult
	require.NoError(t, v.Get(&again))
	require.Equal(t, res.Commit, again.Commit)
	require.Equal(t, "1", h.git(h.repo, "rev-list", "--count", h.base+"..horizon/task-t2"))
	require.Equal(t, []string{"end"}, streamIDs(t, TaskOutputPath(h.a.Home, "t2")))
	m, err := ReadTaskMeta(h.a.Home, "t2")
	require.NoError(t, err)
	require.Equal(t, res.Commit, m.Commit)
	require.Equal(t, "horizon/task-t2", m.Branch)
}

// What retrying cannot fix is refused at once: an unknown specialist, a
// project specialist, a role nobody connected serves.
func TestPrepareTaskRefuses(t *testing.T) {
	h := newGitHarness(t)
	h.a.Sessions = offers{"fake/m"}
	h.write(h.repo, ".horizon/specialists/mine.md", "---\nname: mine\ndescription: mine\ntools: [read-only]\n---\nLook.\n")
	noModel := taskInput(h, "t3", "explorer")
	noModel.Model = ""
	for _, tc := range []struct {
		name string
		in   TaskInput
		typ  string
		msg  string
	}{
		{"unknown", taskInput(h, "t3", "ghost"), ErrTypeBadInput, `no such specialist "ghost"`},
		{"project", taskInput(h, "t3", "mine"), ErrTypeBadInput, "is a project specialist"},
		{"no model for the role", noModel, ErrTypeUnknownModel, "specialist explorer cannot run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.env.ExecuteActivity(h.a.PrepareTask, tc.in)
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			require.Equal(t, tc.typ, app.Type())
			require.True(t, app.NonRetryable())
			require.True(t, strings.Contains(err.Error(), tc.msg), err.Error())
		})
	}

	// A specialist OpenCode was not given (created after the daemon
	// started it) would fail its session for ever: refused at once.
	h.a.Sessions = knows{offers: offers{"fake/m"}, agents: []string{"horizon-worker", "horizon-sp-worker"}}
	_, err := h.env.ExecuteActivity(h.a.PrepareTask, taskInput(h, "t3", "explorer"))
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.ErrorContains(t, err, "OpenCode does not know agent horizon-sp-explorer")
	h.a.Sessions = knows{offers: offers{"fake/m"}, agents: []string{"horizon-sp-explorer"}}
	_, err = h.env.ExecuteActivity(h.a.PrepareTask, taskInput(h, "t3", "explorer"))
	require.NoError(t, err)
}

// knows is a Sessions whose OpenCode knows the listed agents.
type knows struct {
	offers
	agents []string
}

func (k knows) Agents(context.Context, string) ([]agent.AgentInfo, error) {
	var out []agent.AgentInfo
	for _, n := range k.agents {
		out = append(out, agent.AgentInfo{Name: n})
	}
	return out, nil
}

// transcripts is a Sessions that can read a session's transcript, or
// fails to with err.
type transcripts struct {
	*scriptedSessions
	err  error
	read []string // the sessions asked for, as "dir sid"
}

func (s *transcripts) Transcript(_ context.Context, dir, sid string) ([]agent.Message, error) {
	s.read = append(s.read, dir+" "+sid)
	if s.err != nil {
		return nil, s.err
	}
	return []agent.Message{{Role: "user", Text: "look around"}, {Role: "assistant", Text: "done"}}, nil
}

// spendKeys reads today's spend ledger: cost per key.
func spendKeys(t *testing.T, a *Activities) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(a.spendFile(time.Now()))
	require.NoError(t, err)
	out := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r spendRecord
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		_, dup := out[r.Key]
		require.False(t, dup, "key %s recorded twice", r.Key)
		out[r.Key] = r.Cost
	}
	return out
}

// A follow-up continues the task's session with a new turn: the stream
// gets the turn's event, the session's new parts (the prompt without the
// turn's marker) and the turn's own end, each once also across a retry;
// the session is asked for a turn by its marker, so a retry after a
// crash never prompts it twice; the ledger gets the turn's cost under
// its own key, the metadata the session's total.
func TestTaskFollowUpContinuesTheSession(t *testing.T) {
	h := newGitHarness(t)
	sess := &scriptedSessions{offers: offers{"fake/m"}}
	ts := &transcripts{scriptedSessions: sess}
	h.a.Sessions = ts
	in := taskInput(h, "t1", "explorer")
	run := func(in TaskInput) (TaskPlan, TaskSessionOutput, TaskResult) {
		t.Helper()
		v, err := h.env.ExecuteActivity(h.a.PrepareTask, in)
		require.NoError(t, err)
		var plan TaskPlan
		require.NoError(t, v.Get(&plan))
		v, err = h.env.ExecuteActivity(h.a.TaskSession, TaskSessionInput{Task: in, Plan: plan})
		require.NoError(t, err)
		var out TaskSessionOutput
		require.NoError(t, v.Get(&out))
		v, err = h.env.ExecuteActivity(h.a.FinishTask, TaskEnd{Task: in, Plan: plan, Session: out, Status: TaskCompleted})
		require.NoError(t, err)
		var res TaskResult
		require.NoError(t, v.Get(&res))
		return plan, out, res
	}
	sess.parts = []agent.Part{{ID: "prt_1", Role: "user", Type: "text", Text: "look around"}, {ID: "prt_2", Role: "assistant", Type: "text", Text: "done"}}
	run(in)
	require.Empty(t, ts.read, "a first turn has no session to check")

	follow := in
	follow.Turn, follow.Session, follow.Prompt, follow.Prior = 2, "ses_1", "and the tests?", horizon.Usage{Cost: 0.5}
	marker := TaskTurnMarker("t1", 2)
	sess.parts = append(sess.parts, agent.Part{ID: "prt_3", Role: "user", Type: "text", Text: marker + "\n\nand the tests?"},
		agent.Part{ID: "prt_4", Role: "assistant", Type: "text", Text: "none"})
	plan, out, res := run(follow)
	require.Equal(t, []string{h.repo + " ses_1"}, ts.read, "the session is checked in the repository")
	req := sess.reqs[len(sess.reqs)-1]
	require.Equal(t, "ses_1", req.ResumeSessionID)
	require.Equal(t, marker, req.Turn)
	require.Equal(t, marker+"\n\nand the tests?", req.Prompt)
	require.Equal(t, "ses_1", out.SessionID)
	require.Equal(t, 1.0, out.Usage.Cost, "the session's total: the first turn's 0.5 and this one's")
	require.Equal(t, TaskResult{ID: "t1", Status: TaskCompleted, Session: "ses_1", Model: "fake/m"}, res)

	// A retry (after a crash) of the session and the finish adds nothing.
	h.env.SetHeartbeatDetails(SessionHeartbeat{SessionID: "ses_1"})
	_, err := h.env.ExecuteActivity(h.a.TaskSession, TaskSessionInput{Task: follow, Plan: plan})
	require.NoError(t, err)
	require.Equal(t, marker, sess.reqs[len(sess.reqs)-1].Turn, "a retry finds the turn by its marker")
	_, err = h.env.ExecuteActivity(h.a.FinishTask, TaskEnd{Task: follow, Plan: plan, Session: out, Status: TaskCompleted})
	require.NoError(t, err)

	path := TaskOutputPath(h.a.Home, "t1")
	require.Equal(t, []string{"prt_1", "prt_2", "end", "turn-2", "prt_3", "prt_4", "end-2"}, streamIDs(t, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(b), marker, "the marker is for the session, not the stream")
	var turn TaskEvent
	require.NoError(t, json.Unmarshal([]byte(strings.Split(string(b), "\n")[3]), &turn))
	require.Equal(t, agent.Part{ID: "turn-2", Role: "user", Type: "turn", Text: "and the tests?"}, turn.Part)

	m, err := ReadTaskMeta(h.a.Home, "t1")
	require.NoError(t, err)
	require.Equal(t, TaskCompleted, m.Status)
	require.Equal(t, 1.0, m.Cost)
	require.Equal(t, "look around", m.Prompt)
	require.Equal(t, map[string]float64{"task/t1": 0.5, "task/t1/turn-2": 0.5}, spendKeys(t, h.a))
}

// A follow-up whose session OpenCode no longer has is refused at once, as
// bad input that says so, before any lane is made; not being able to ask
// OpenCode is retried; a follow-up without a session is bad input.
func TestPrepareTaskRefusesGoneSession(t *testing.T) {
	h := newGitHarness(t)
	ts := &transcripts{scriptedSessions: &scriptedSessions{offers: offers{"fake/m"}}}
	h.a.Sessions = ts
	follow := taskInput(h, "t4", "worker")
	follow.Turn, follow.Session, follow.Prompt = 2, "ses_gone", "more"

	ts.err = fmt.Errorf("read: %w", &agent.APIError{Method: "GET", Path: "/session/ses_gone/message", StatusCode: 404, Body: `{"name":"NotFoundError"}`})
	require.True(t, agent.IsNotFound(ts.err))
	_, err := h.env.ExecuteActivity(h.a.PrepareTask, follow)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.True(t, app.NonRetryable())
	require.ErrorContains(t, err, "task t4: its session ses_gone cannot be continued: OpenCode no longer has it; start a new task with `horizon task run`")
	require.NoDirExists(t, h.a.taskLaneDir("t4"), "no lane is made for a follow-up that cannot run")

	ts.err = &agent.APIError{Method: "GET", Path: "/session/ses_gone/message", StatusCode: 500, Body: "busy"}
	_, err = h.env.ExecuteActivity(h.a.PrepareTask, follow)
	require.Error(t, err)
	if errors.As(err, &app) {
		require.False(t, app.NonRetryable(), "an OpenCode that does not answer is retried")
	}

	follow.Session = ""
	ts.err = nil
	_, err = h.env.ExecuteActivity(h.a.PrepareTask, follow)
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.ErrorContains(t, err, "has no session to continue")
}

// An editing task's follow-up works on its branch's tip (not the base the
// first turn was cut at), commits what it changed there as its own
// commit, and a follow-up that changes nothing keeps the branch's commit.
func TestTaskFollowUpCommitsOnItsBranch(t *testing.T) {
	h := newGitHarness(t)
	h.a.Sessions = &scriptedSessions{offers: offers{"fake/m"}}
	in := taskInput(h, "t5", "worker")
	turn := func(in TaskInput, write string) TaskResult {
		t.Helper()
		v, err := h.env.ExecuteActivity(h.a.PrepareTask, in)
		require.NoError(t, err)
		var plan TaskPlan
		require.NoError(t, v.Get(&plan))
		if write != "" {
			h.write(plan.Dir, write, write+"\n")
		}
		v, err = h.env.ExecuteActivity(h.a.FinishTask, TaskEnd{Task: in, Plan: plan, Session: TaskSessionOutput{SessionID: "ses_5"}, Status: TaskCompleted})
		require.NoError(t, err)
		var res TaskResult
		require.NoError(t, v.Get(&res))
		return res
	}
	first := turn(in, "NOTES.md")
	require.NotEmpty(t, first.Commit)

	// The user's branch moved on meanwhile: the follow-up still builds
	// on the task's branch.
	h.write(h.repo, "OTHER.md", "other\n")
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", "other")
	follow := in
	follow.Turn, follow.Session, follow.Prompt, follow.BaseCommit = 2, "ses_5", "and MORE.md", h.git(h.repo, "rev-parse", "HEAD")
	v, err := h.env.ExecuteActivity(h.a.PrepareTask, follow)
	require.NoError(t, err)
	var plan TaskPlan
	require.NoError(t, v.Get(&plan))
	require.Equal(t, first.Commit, plan.Base)
	require.Equal(t, first.Commit, h.git(plan.Dir, "rev-parse", "HEAD"))
	require.FileExists(t, filepath.Join(plan.Dir, "NOTES.md"))
	require.NoFileExists(t, filepath.Join(plan.Dir, "OTHER.md"))

	second := turn(follow, "MORE.md")
	require.NotEqual(t, first.Commit, second.Commit)
	require.Equal(t, first.Commit, h.git(h.repo, "rev-parse", second.Commit+"^"))
	require.Contains(t, h.git(h.repo, "log", "-1", "--format=%B", "horizon/task-t5"), "follow-up (turn 2)")
	require.Equal(t, "2", h.git(h.repo, "rev-list", "--count", h.base+"..horizon/task-t5"))

	third := follow
	third.Turn, third.Prompt = 3, "anything else?"
	res := turn(third, "")
	require.Equal(t, second.Commit, res.Commit, "a follow-up that changed nothing keeps the branch's commit")
	m, err := ReadTaskMeta(h.a.Home, "t5")
	require.NoError(t, err)
	require.Equal(t, second.Commit, m.Commit)
	require.Equal(t, []string{"end", "end-2", "end-3"}, streamIDs(t, TaskOutputPath(h.a.Home, "t5")))
}

// writesAgents is a Sessions that takes a repository's agents.
type writesAgents struct {
	offers
	written map[string][]byte
}

func (w *writesAgents) WriteProjectAgents(_ context.Context, files map[string][]byte) error {
	for k, v := range files {
		w.written[k] = v
	}
	return nil
}

// In a trusted repository a project specialist runs as a task: its agent
// is named for the repository and written before the task's lane exists,
// and even a read-only one works in a lane of its own (OpenCode may have
// read the repository's agents before), which leaves no branch behind.
// One whose tools leave the project scope is refused at once.
func TestPrepareTaskTrustedProjectSpecialist(t *testing.T) {
	h := newGitHarness(t)
	w := &writesAgents{offers: offers{"fake/m"}, written: map[string][]byte{}}
	h.a.Sessions = w
	h.write(h.repo, ".horizon/specialists/mine.md", "---\nname: mine\ndescription: mine\ntools: [read-only]\n---\nLook.\n")
	in := taskInput(h, "t6", "mine")
	in.TrustProject = true

	v, err := h.env.ExecuteActivity(h.a.PrepareTask, in)
	require.NoError(t, err)
	var plan TaskPlan
	require.NoError(t, v.Get(&plan))
	agentName := "horizon-pj-" + specialist.RepoKey(h.repo) + "-mine"
	require.Equal(t, agentName, plan.Agent)
	require.Contains(t, w.written, agentName)
	require.Equal(t, h.a.taskLaneDir("t6"), plan.Dir)
	require.Equal(t, TaskBranch("t6"), plan.Branch)
	require.True(t, plan.ReadOnly)

	v, err = h.env.ExecuteActivity(h.a.FinishTask, TaskEnd{Task: in, Plan: plan, Status: TaskCompleted})
	require.NoError(t, err)
	var res TaskResult
	require.NoError(t, v.Get(&res))
	require.Empty(t, res.Commit)
	require.Empty(t, res.Branch)
	require.False(t, gitOK(context.Background(), h.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+TaskBranch("t6")), "a read-only lane leaves no branch")

	userDir := filepath.Join(h.a.Home, "user")
	h.write(userDir, "webby.md", "---\nname: webby\ndescription: webby\ntools: [read-only, webfetch]\n---\nLook.\n")
	h.write(h.repo, ".horizon/specialists/reach.md", "---\nname: reach\ndescription: reach\nextends: webby\n---\nLook.\n")
	out := taskInput(h, "t7", "reach")
	out.TrustProject, out.UserSpecialists = true, userDir
	_, err = h.env.ExecuteActivity(h.a.PrepareTask, out)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.ErrorContains(t, err, `tool "webfetch" is not available to a project specialist`)
}
