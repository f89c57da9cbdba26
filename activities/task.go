package activities

// Background tasks (`horizon task run`): one specialist's OpenCode session,
// run by TaskWorkflow. Its output is streamed to
// $HORIZON_HOME/tasks/<id>.ndjson, one event per finished part of the
// session, each written once even across a crash (the stream keeps the IDs
// it wrote); its metadata is <id>.json. A read-only specialist works in the
// repository itself; one that may edit works in a lane on branch
// horizon/task-<id>, which FinishTask commits and leaves behind.
//
// A task that has ended takes follow-ups (`horizon task resume`): each is
// a new TaskWorkflow under the same workflow ID whose TaskInput names the
// turn and the session it continues. The stream then holds every turn: a
// "turn" event (turn-N) opens a follow-up, an end event (end, end-N)
// closes each turn.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/applier"
	"github.com/horizon/horizon/internal/specialist"
)

// Task statuses, as the metadata file and `horizon task list` say them.
const (
	TaskPending   = "pending"
	TaskRunning   = "running"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// TaskTerminal reports whether a task in status s has ended.
func TaskTerminal(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskBranch is the branch an editing task leaves.
func TaskBranch(id string) string { return "horizon/task-" + id }

// TaskInput is one `horizon task run`.
type TaskInput struct {
	ID         string
	Specialist string
	Prompt     string
	Repo       string // the repository's root (absolute)
	BaseCommit string // where an editing task's lane is cut
	// Model, when set (models.default), is the model of every specialist
	// without its own; otherwise the specialist's role picks it from the
	// leaderboard (ModelsFile, or the bundled one).
	Model      string
	ModelsFile string
	// UserSpecialists is the user scope's directory
	// (~/.config/horizon/specialists), as the daemon materialises it.
	UserSpecialists string
	// Turn is the turn of the task's session this input runs: 0 or 1 the
	// first (`horizon task run`), 2.. a follow-up (`horizon task resume`),
	// whose Prompt is the follow-up's.
	Turn int `json:",omitempty"`
	// Session is the OpenCode session a follow-up continues.
	Session string `json:",omitempty"`
	// Prior is what the session cost before this turn: the metadata's cost
	// is the session's total, the spend ledger gets each turn once.
	Prior horizon.Usage `json:",omitzero"`
	// TrustProject is specialists.trust_project: the repository's own
	// specialists may run.
	TrustProject bool `json:",omitempty"`
}

// FollowUp reports whether in is a follow-up to a task that had ended.
func (in TaskInput) FollowUp() bool { return in.Turn > 1 }

// TaskTurnMarker names follow-up turn n of task id. A follow-up's prompt
// starts with it, so a session continued after a crash tells a turn a
// crashed attempt prompted already from one still to prompt.
func TaskTurnMarker(id string, n int) string {
	return fmt.Sprintf("[horizon task %s: follow-up, turn %d]", id, n)
}

// TaskEndEventID is the ID of turn n's end event: the stream writes each
// ID once, so every turn has its own.
func TaskEndEventID(turn int) string {
	if turn > 1 {
		return fmt.Sprintf("%s-%d", taskEndID, turn)
	}
	return taskEndID
}

// TaskTurnEventID is the ID of the stream's event that opens follow-up
// turn n.
func TaskTurnEventID(n int) string { return fmt.Sprintf("turn-%d", n) }

// TaskPlan is how a task runs: decided once, by PrepareTask.
type TaskPlan struct {
	Agent string // the specialist's OpenCode agent
	Model string // provider/model
	Paid  bool   // metered: the session goes through the paid queue
	// Local is the best-ranked local model of the specialist's role (the
	// worker's when it has none), "" when none: near a ceiling the spend
	// authority moves a metered task to it.
	Local string
	Dir   string // where the session works: the repository, or the lane
	// Branch is the lane's branch: an editing task's, or a project
	// specialist's ("" for a read-only one in the repository).
	Branch string
	Base   string // the commit the lane was cut at
	// ReadOnly says the specialist cannot change the lane: a project
	// specialist's lane leaves no branch behind.
	ReadOnly bool `json:",omitempty"`
}

// TaskSessionInput is the session of a prepared task.
type TaskSessionInput struct {
	Task TaskInput
	Plan TaskPlan
}

// TaskSessionOutput is the session's end.
type TaskSessionOutput struct {
	SessionID string
	Resumed   bool
	Usage     horizon.Usage
	Finish    string
}

// TaskEnd is what FinishTask records.
type TaskEnd struct {
	Task    TaskInput
	Plan    TaskPlan
	Session TaskSessionOutput
	Status  string // TaskCompleted, TaskFailed or TaskCancelled
	Error   string
}

// TaskResult is TaskWorkflow's result.
type TaskResult struct {
	ID      string
	Status  string
	Session string
	Model   string
	Branch  string `json:",omitempty"`
	Commit  string `json:",omitempty"`
	Error   string `json:",omitempty"`
}

// TaskMeta is a task's metadata file, <id>.json.
type TaskMeta struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Specialist string `json:"specialist"`
	Agent      string `json:"agent,omitempty"`
	Model      string `json:"model,omitempty"`
	Session    string `json:"session,omitempty"`
	Resumed    bool   `json:"resumed,omitempty"`
	Repo       string `json:"repo"`
	Dir        string `json:"dir,omitempty"`
	Branch     string `json:"branch,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Prompt     string `json:"prompt"`
	// Turns is how many turns the session was given: 1 and the follow-ups
	// (0 in a file written before follow-ups: one).
	Turns int `json:"turns,omitempty"`
	// FollowUps are the follow-ups' prompts, in order (turn 2, 3, ...).
	FollowUps []string `json:"follow_ups,omitempty"`
	// Cost is the session's, all turns.
	Cost      float64    `json:"cost"`
	Error     string     `json:"error,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	UpdatedAt time.Time  `json:"updated_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
}

// TaskEvent is one line of a task's output stream: a finished part of its
// session, the start of a follow-up (Type "turn", Role "user", Text its
// prompt), or (Type "end") the end of a turn.
type TaskEvent struct {
	Time time.Time `json:"time"`
	agent.Part
}

// taskEndID is the ID of the stream's last event.
const taskEndID = "end"

// TasksDir is where tasks' files live under home.
func TasksDir(home string) string { return filepath.Join(home, "tasks") }

// TaskMetaPath and TaskOutputPath are a task's two files.
func TaskMetaPath(home, id string) string   { return filepath.Join(TasksDir(home), id+".json") }
func TaskOutputPath(home, id string) string { return filepath.Join(TasksDir(home), id+".ndjson") }

// ReadTaskMeta reads a task's metadata file.
func ReadTaskMeta(home, id string) (TaskMeta, error) {
	var m TaskMeta
	b, err := os.ReadFile(TaskMetaPath(home, id))
	if err != nil {
		return m, fmt.Errorf("read task %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("read task %s: %s: %w", id, TaskMetaPath(home, id), err)
	}
	return m, nil
}

// WriteTaskMeta writes a task's metadata file atomically.
func WriteTaskMeta(home string, m TaskMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write task %s: %w", m.ID, err)
	}
	return writeArtifact(TaskMetaPath(home, m.ID), append(b, '\n'))
}

// taskMetaMu serialises this worker's read-modify-writes of metadata (the
// session's progress and the activity's own updates).
var taskMetaMu sync.Mutex

// updateTaskMeta changes a task's metadata; a missing file starts from
// the task's input.
func (a *Activities) updateTaskMeta(in TaskInput, change func(*TaskMeta)) error {
	taskMetaMu.Lock()
	defer taskMetaMu.Unlock()
	m, err := ReadTaskMeta(a.Home, in.ID)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		m = TaskMeta{ID: in.ID, Status: TaskPending, Specialist: in.Specialist, Repo: in.Repo, Prompt: in.Prompt, CreatedAt: time.Now().UTC()}
	}
	change(&m)
	m.UpdatedAt = time.Now().UTC()
	return WriteTaskMeta(a.Home, m)
}

// PrepareTask resolves the task's specialist and model, and makes an
// editing task's lane. The specialist must be one the daemon materialised
// for OpenCode (built-in or user scope) and its role must have a connected
// model: neither can change by retrying, so both are bad input. A
// follow-up's session must still exist in OpenCode, or there is nothing
// to continue: also bad input, checked before a lane is made.
func (a *Activities) PrepareTask(ctx context.Context, in TaskInput) (TaskPlan, error) {
	defer keepAlive(ctx)()
	if err := a.mustSee("repository", in.Repo); err != nil {
		return TaskPlan{}, err
	}
	if in.FollowUp() {
		if err := a.checkTaskSession(ctx, in); err != nil {
			return TaskPlan{}, err
		}
	}
	set, err := specialist.Load(specialist.Dirs{User: in.UserSpecialists, Project: filepath.Join(in.Repo, ".horizon", "specialists")})
	if err != nil {
		return TaskPlan{}, badInput("task %s: %v", in.ID, err)
	}
	sp, err := set.Get(in.Specialist)
	if err != nil {
		return TaskPlan{}, badInput("task %s: %v", in.ID, err)
	}
	project := sp.Scope == specialist.ScopeProject
	if project {
		if !in.TrustProject {
			return TaskPlan{}, badInput("task %s: %s", in.ID, UntrustedProjectSpecialist(sp.Name, sp.Path))
		}
		if err := specialist.CheckProjectScope(sp); err != nil {
			return TaskPlan{}, badInput("task %s: %v", in.ID, err)
		}
	}
	lb, err := LoadLeaderboard(in.ModelsFile)
	if err != nil {
		return TaskPlan{}, badInput("task %s: %v", in.ID, err)
	}
	connected, err := a.Sessions.Models(ctx, in.Repo)
	if err != nil {
		return TaskPlan{}, fmt.Errorf("prepare task %s: models OpenCode can use: %w", in.ID, err)
	}
	// A task runs a specialist, an OpenCode agent: on OpenCode's routes.
	connected = openCodeRoutes(connected)
	if k := applierOf(in.Model); in.Model != "" && k != string(applier.OpenCode) {
		return TaskPlan{}, badInput("task %s: --model %s runs on %s, and a task runs a specialist, which is an OpenCode agent: pick an OpenCode route (`horizon models` lists them)", in.ID, in.Model, k)
	}
	b := specialist.Bind(sp, lb, connected, in.Model)
	if !b.Available() {
		return TaskPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("task %s: specialist %s cannot run: %s", in.ID, sp.Name, b.Unavailable), ErrTypeUnknownModel, nil)
	}
	model := b.Model
	if model == "" {
		// A specialist without a role or model inherits its parent's; a
		// task has no parent, so it runs on the worker's model.
		c, err := lb.Resolve(string(horizon.RoleWorker), connected)
		if err != nil {
			return TaskPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("task %s: specialist %s has no role or model, and the worker's role has none: %v", in.ID, sp.Name, err), ErrTypeUnknownModel, nil)
		}
		model = c.Route
	}
	plan := TaskPlan{Agent: specialist.AgentName(sp.Name), Model: model, Paid: Paid(lb, model), Dir: in.Repo, ReadOnly: sp.ReadOnly()}
	if role := sp.Role; plan.Paid && sp.Model == "" && in.Model == "" {
		if role == "" {
			role = string(horizon.RoleWorker)
		}
		if c, err := lb.ResolveLocal(role, connected); err == nil {
			plan.Local = c.Route
		}
	}
	if project {
		// Its agent is named for the repository and written now, and the
		// task works in a lane of its own even when it only reads:
		// OpenCode reads a directory's agents once, and may have served
		// the repository's before this specialist was written.
		plan.Agent = specialist.ProjectAgentName(in.Repo, sp.Name)
		if _, err := a.projectSpecialists(ctx, ProjectSpecialists{Repo: in.Repo, UserDir: in.UserSpecialists, ModelsFile: in.ModelsFile, Model: in.Model}); err != nil {
			return TaskPlan{}, fmt.Errorf("prepare task %s: %w", in.ID, err)
		}
	}
	if !project {
		if err := a.checkAgent(ctx, in, in.Repo, plan.Agent); err != nil {
			return TaskPlan{}, err
		}
	}
	if !sp.ReadOnly() || project {
		if plan.Dir, plan.Base, err = a.taskLane(ctx, in); err != nil {
			return TaskPlan{}, err
		}
		plan.Branch = TaskBranch(in.ID)
	}
	if project {
		if err := a.checkAgent(ctx, in, plan.Dir, plan.Agent); err != nil {
			return TaskPlan{}, err
		}
	}
	err = a.updateTaskMeta(in, func(m *TaskMeta) {
		m.Status, m.Agent, m.Model, m.Dir, m.Branch = TaskRunning, plan.Agent, plan.Model, plan.Dir, plan.Branch
		if m.StartedAt == nil {
			now := time.Now().UTC()
			m.StartedAt = &now
		}
	})
	return plan, err
}

// AgentLister lists the agents OpenCode knows; *agent.Server satisfies it.
type AgentLister interface {
	Agents(ctx context.Context, dir string) ([]agent.AgentInfo, error)
}

// UntrustedProjectSpecialist says why a project specialist does not run
// in a repository the person has not said they trust, and how to say so.
func UntrustedProjectSpecialist(name, path string) string {
	return fmt.Sprintf("specialist %s is a project specialist (%s): it comes from the repository, so horizon runs it only when you trust the repository. If you do, set specialists.trust_project: true in your own config file (~/.config/horizon/config.yaml) or HORIZON_SPECIALISTS_TRUST_PROJECT=true; the repository's own .horizon/config.yaml cannot", name, path)
}

// checkAgent makes sure OpenCode knows the specialist's agent: a
// specialist created after the daemon gave OpenCode its agents would
// otherwise fail the session, and be retried, for ever.
func (a *Activities) checkAgent(ctx context.Context, in TaskInput, dir, name string) error {
	l, ok := a.Sessions.(AgentLister)
	if !ok {
		return nil
	}
	agents, err := l.Agents(ctx, dir)
	if err != nil {
		return fmt.Errorf("prepare task %s: agents OpenCode knows: %w", in.ID, err)
	}
	for _, ag := range agents {
		if ag.Name == name {
			return nil
		}
	}
	return badInput("task %s: OpenCode does not know agent %s (specialist %s): the daemon gives OpenCode the specialists when it starts it; restart the daemon (`horizon stop`, then `horizon resume`) after adding one",
		in.ID, name, in.Specialist)
}

// TranscriptReader reads a session's messages; *agent.Server satisfies it.
type TranscriptReader interface {
	Transcript(ctx context.Context, dir, sid string) ([]agent.Message, error)
}

// checkTaskSession makes sure the session a follow-up continues still
// exists: RunSession would otherwise start a new one, and the follow-up
// would reach a model that never saw the task. A session OpenCode no
// longer has is bad input; not being able to ask is retried.
func (a *Activities) checkTaskSession(ctx context.Context, in TaskInput) error {
	if in.Session == "" {
		return badInput("task %s: turn %d has no session to continue; start a new task with `horizon task run`", in.ID, in.Turn)
	}
	r, ok := a.Sessions.(TranscriptReader)
	if !ok {
		return nil
	}
	// The repository, not the lane: a session belongs to OpenCode's
	// project, which a worktree shares with its repository, and an
	// editing task's lane does not exist yet.
	if _, err := r.Transcript(ctx, in.Repo, in.Session); err != nil {
		if agent.IsNotFound(err) {
			return badInput("task %s: its session %s cannot be continued: OpenCode no longer has it; start a new task with `horizon task run`", in.ID, in.Session)
		}
		return fmt.Errorf("prepare task %s: session %s: %w", in.ID, in.Session, err)
	}
	return nil
}

// taskLaneDir is an editing task's worktree. It lives under "_tasks", a
// name no run can have, so `horizon gc` (which takes each lanes/<dir> for
// a run's) leaves it to FinishTask.
func (a *Activities) taskLaneDir(id string) string { return filepath.Join(a.lanesDir(), "_tasks", id) }

// taskLane makes (or finds, on a retry) the task's worktree on its branch,
// cut at the base commit; the user's branch and work tree are untouched.
// A follow-up's lane is the branch's tip (what the earlier turns left; the
// base commit only if the branch is gone), and that tip is its base: what
// the follow-up changes is its own commit.
func (a *Activities) taskLane(ctx context.Context, in TaskInput) (dir, base string, err error) {
	dir = a.taskLaneDir(in.ID)
	if err := branchLane(ctx, in.Repo, dir, TaskBranch(in.ID), in.BaseCommit, "task "+in.ID); err != nil {
		return "", "", err
	}
	if !in.FollowUp() {
		return dir, in.BaseCommit, nil
	}
	// Nothing is committed in a lane before FinishTask: on a retry HEAD
	// is still the tip the lane was made at.
	if base, err = git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return "", "", fmt.Errorf("task %s lane: %w", in.ID, err)
	}
	return dir, base, nil
}

// SessionParts reads a session's finished parts; *agent.Server satisfies
// it. Sessions that do not are run without a live output stream: only the
// task's end is written.
type SessionParts interface {
	Parts(ctx context.Context, dir, sessionID string) ([]agent.Part, error)
}

// partsEvery is how often a running task's stream is brought up to date.
const partsEvery = 500 * time.Millisecond

// TaskSession runs the task's OpenCode session with the worker session's
// crash safety: the session ID is heartbeated as soon as it exists, and a
// retry after a crash continues that session (RunSession's resume). While
// it runs, its finished parts are appended to the output stream.
//
// A follow-up continues the task's session with a new turn: its "turn"
// event goes to the stream first, and its prompt carries the turn's
// marker (TaskTurnMarker), so a retry after a crash waits for, returns or
// continues the turn it finds prompted instead of prompting it again.
func (a *Activities) TaskSession(ctx context.Context, in TaskSessionInput) (TaskSessionOutput, error) {
	var hb SessionHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	if err := a.mustSee("task directory", in.Plan.Dir); err != nil {
		return TaskSessionOutput{}, err
	}
	stream, err := openTaskStream(TaskOutputPath(a.Home, in.Task.ID))
	if err != nil {
		return TaskSessionOutput{}, err
	}
	defer stream.Close()
	resume := hb.SessionID
	if resume == "" {
		resume = in.Task.Session // a follow-up's session; "" for a first turn
	}
	follow, marker := in.Task.FollowUp(), ""
	if follow {
		marker = TaskTurnMarker(in.Task.ID, in.Task.Turn)
		ev := TaskEvent{Time: time.Now().UTC(), Part: agent.Part{ID: TaskTurnEventID(in.Task.Turn), Role: "user", Type: "turn", Text: in.Task.Prompt}}
		if err := stream.Write(ev); err != nil {
			return TaskSessionOutput{}, err
		}
	}
	log := activity.GetLogger(ctx)
	log.Info("task session starting", "Task", in.Task.ID, "Turn", max(in.Task.Turn, 1), "Agent", in.Plan.Agent, "Model", in.Plan.Model, "ResumeSession", resume)

	beat := beatOptions{OnlyWithDetails: true}
	if hb.SessionID != "" {
		beat.Details = hb
	}
	heart := startHeartbeat(ctx, beat)
	defer heart.Stop()

	parts, _ := a.Sessions.(SessionParts)
	var (
		mu  sync.Mutex
		sid = resume
	)
	flush := func(fctx context.Context) {
		mu.Lock()
		id := sid
		mu.Unlock()
		if parts == nil || id == "" {
			return
		}
		ps, err := parts.Parts(fctx, in.Plan.Dir, id)
		if err != nil {
			if fctx.Err() == nil {
				log.Debug("task output not read", "Task", in.Task.ID, "Error", err)
			}
			return
		}
		for _, p := range ps {
			if marker != "" && p.Role == "user" {
				// The turn's marker is for RunSession, not for people.
				p.Text = strings.TrimPrefix(p.Text, marker+"\n\n")
			}
			if err := stream.Write(TaskEvent{Time: time.Now().UTC(), Part: p}); err != nil {
				log.Warn("task output not written", "Task", in.Task.ID, "Error", err)
				return
			}
		}
	}
	pctx, stopParts := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		t := time.NewTicker(partsEvery)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				flush(pctx)
			}
		}
	}()
	req := agent.SessionRequest{
		Directory:       in.Plan.Dir,
		Agent:           in.Plan.Agent,
		Model:           in.Plan.Model,
		Prompt:          in.Task.Prompt,
		Title:           fmt.Sprintf("horizon task %s (%s)", in.Task.ID, in.Task.Specialist),
		ResumeSessionID: resume,
	}
	if follow {
		req.Turn, req.Prompt = marker, marker+"\n\n"+in.Task.Prompt
	}
	res, err := a.Sessions.RunSession(ctx, req, func(p agent.Progress) {
		mu.Lock()
		known := sid
		sid = p.SessionID
		mu.Unlock()
		heart.Update(SessionHeartbeat{SessionID: p.SessionID, Phase: p.Phase, Tool: p.Tool, Worker: a.Identity})
		if known != p.SessionID && p.SessionID != "" {
			if err := a.updateTaskMeta(in.Task, func(m *TaskMeta) { m.Session = p.SessionID }); err != nil {
				log.Warn("task metadata not written", "Task", in.Task.ID, "Error", err)
			}
		}
	})
	stopParts()
	pwg.Wait()
	heart.Stop()
	if res.SessionID != "" {
		mu.Lock()
		sid = res.SessionID
		mu.Unlock()
		// What the session wrote up to its end (or its abort) is read once
		// more, so the stream is whole.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		flush(fctx)
		cancel()
	}
	if err != nil {
		if ctx.Err() != nil {
			return TaskSessionOutput{SessionID: res.SessionID}, ctx.Err()
		}
		return TaskSessionOutput{SessionID: res.SessionID}, classifySessionError(err)
	}
	heart.Record(SessionHeartbeat{SessionID: res.SessionID, Phase: "done", Worker: a.Identity})
	if follow && res.SessionID != in.Task.Session {
		log.Warn("task follow-up ran in a new session: the task's was gone", "Task", in.Task.ID, "Session", in.Task.Session, "NewSession", res.SessionID)
	}
	// With a turn marker RunSession counts the turn alone (the first
	// turn is the session's first): the ledger gets the turn, the
	// session's total is the prior turns' and this one's.
	turn := horizon.Usage{Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
		CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost}
	out := TaskSessionOutput{SessionID: res.SessionID, Resumed: res.Resumed, Finish: res.Finish, Usage: in.Task.Prior.Add(turn)}
	if parts == nil && strings.TrimSpace(res.Text) != "" {
		// No live stream: the final text is the output.
		id := "final"
		if follow {
			id = fmt.Sprintf("final-%d", in.Task.Turn)
		}
		if err := stream.Write(TaskEvent{Time: time.Now().UTC(), Part: agent.Part{ID: id, Role: "assistant", Type: "text", Text: res.Text}}); err != nil {
			return out, err
		}
	}
	key := "task/" + in.Task.ID
	if follow {
		key = fmt.Sprintf("task/%s/turn-%d", in.Task.ID, in.Task.Turn)
	}
	if err := a.recordSpend("task-"+in.Task.ID, key, turn.Cost); err != nil {
		return out, err
	}
	return out, nil
}

// FinishTask records the task's end: an editing task's lane is committed
// on its branch (once: the commit carries a Horizon-Task trailer) and its
// worktree removed, the stream gets its end event, the metadata its status.
// A follow-up's end is its turn's: its own end event (end-N), its own
// commit on the branch, and the session's total cost in the metadata.
func (a *Activities) FinishTask(ctx context.Context, in TaskEnd) (TaskResult, error) {
	defer keepAlive(ctx)()
	res := TaskResult{ID: in.Task.ID, Status: in.Status, Session: in.Session.SessionID, Model: in.Plan.Model, Branch: in.Plan.Branch, Error: in.Error}
	if in.Plan.Branch != "" {
		commit, err := a.commitTaskLane(ctx, in)
		if err != nil {
			return res, err
		}
		res.Commit = commit
		if in.Plan.ReadOnly && commit == "" {
			// A read-only project specialist's lane: nothing to keep.
			_, _ = git(ctx, in.Task.Repo, "branch", "-D", in.Plan.Branch)
			res.Branch = ""
		}
	}
	stream, err := openTaskStream(TaskOutputPath(a.Home, in.Task.ID))
	if err != nil {
		return res, err
	}
	defer stream.Close()
	if err := stream.Write(TaskEvent{Time: time.Now().UTC(), Part: agent.Part{ID: TaskEndEventID(in.Task.Turn), Type: "end", Status: in.Status, Text: in.Error}}); err != nil {
		return res, err
	}
	err = a.updateTaskMeta(in.Task, func(m *TaskMeta) {
		if res.Commit == "" && in.Task.FollowUp() {
			res.Commit = m.Commit // this turn changed nothing: the branch is what the earlier ones left
		}
		m.Status, m.Error, m.Commit = in.Status, in.Error, res.Commit
		if in.Plan.Model != "" {
			m.Agent, m.Model, m.Dir, m.Branch = in.Plan.Agent, in.Plan.Model, in.Plan.Dir, res.Branch
		}
		if in.Session.SessionID != "" {
			m.Session = in.Session.SessionID
		}
		m.Resumed = m.Resumed || in.Session.Resumed
		// A turn that failed before its session ended reports nothing:
		// the earlier turns' cost stands.
		m.Cost = max(in.Session.Usage.Cost, in.Task.Prior.Cost)
		if m.EndedAt == nil {
			now := time.Now().UTC()
			m.EndedAt = &now
		}
	})
	return res, err
}

// commitTaskLane commits what the task changed in its lane onto its
// branch, then removes the worktree; the branch stays. It returns the
// branch's tip ("" when the lane is already gone and the branch has no
// task commit).
func (a *Activities) commitTaskLane(ctx context.Context, in TaskEnd) (string, error) {
	trailer := "Horizon-Task: " + in.Task.ID
	title := "horizon task " + in.Task.ID
	if in.Task.FollowUp() {
		title += fmt.Sprintf(", follow-up (turn %d)", in.Task.Turn)
	}
	msg := fmt.Sprintf("%s (%s, %s)\n\n%s\n\n%s\n", title, in.Task.Specialist, in.Status, oneLine(in.Task.Prompt, 400), trailer)
	return commitBranchLane(ctx, in.Task.Repo, a.taskLaneDir(in.Task.ID), TaskBranch(in.Task.ID), in.Plan.Base, msg, "finish task "+in.Task.ID)
}

// oneLine folds s onto one line of at most n bytes, for records and
// commit messages.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// taskStream appends events to a task's output stream, each ID once. It
// reads the IDs already written when opened, so a retried session (after
// a crash) writes only what is new; a line half-written by a crash is cut
// off first.
type taskStream struct {
	f    *os.File
	seen map[string]bool
}

func openTaskStream(path string) (*taskStream, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open task output %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open task output %s: %w", path, err)
	}
	s := &taskStream{f: f, seen: map[string]bool{}}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read task output %s: %w", path, err)
	}
	whole := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		whole = i + 1
		if err := f.Truncate(int64(whole)); err != nil {
			f.Close()
			return nil, fmt.Errorf("repair task output %s: %w", path, err)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:whole]))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.ID != "" {
			s.seen[ev.ID] = true
		}
	}
	if _, err := f.Seek(int64(whole), io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("open task output %s: %w", path, err)
	}
	return s, nil
}

// Write appends ev unless its ID was written before. One write per line,
// so a reader following the file never sees half an event but at a crash.
func (s *taskStream) Write(ev TaskEvent) error {
	if s.seen[ev.ID] {
		return nil
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("task output: %w", err)
	}
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("task output %s: %w", s.f.Name(), err)
	}
	s.seen[ev.ID] = true
	return nil
}

func (s *taskStream) Close() error { return s.f.Close() }
