package core

// Background tasks: the one way a surface starts, stops and reads them. A
// task is a TaskWorkflow (workflow ID task-<id>); what it did is in its two
// files under $HORIZON_HOME/tasks, which its activities write: <id>.json
// (TaskMeta) and <id>.ndjson (the output stream). A task that has ended
// takes a follow-up (Resume): another TaskWorkflow under the same ID, a
// new turn of the same OpenCode session, appended to the same stream.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/workflows"
)

// TaskNotFoundError says no task has that ID.
type TaskNotFoundError struct{ ID string }

func (e *TaskNotFoundError) Error() string {
	return fmt.Sprintf("no task %q; `horizon task list` shows the tasks", e.ID)
}

// ErrTaskEnded: stop was asked of a task that has ended.
var ErrTaskEnded = errors.New("the task has ended")

// ErrTaskRunning matches every *TaskRunningError with errors.Is.
var ErrTaskRunning = errors.New("the task is still running")

// TaskRunningError refuses a follow-up to a task that has not ended.
type TaskRunningError struct{ ID, Status string }

func (e *TaskRunningError) Error() string {
	return fmt.Sprintf("task %s is still running (%s): wait for it (`horizon task output %s --follow`) or stop it (`horizon task stop %s`), then resume it",
		e.ID, e.Status, e.ID, e.ID)
}

// Is makes errors.Is(err, ErrTaskRunning) true.
func (e *TaskRunningError) Is(target error) bool { return target == ErrTaskRunning }

// ErrTaskNoSession: a follow-up was asked of a task that never had a
// session (it failed before OpenCode opened one).
var ErrTaskNoSession = errors.New("the task has no session to continue (it ended before one was opened); start a new task with `horizon task run`")

// Tasks starts, stops and reads background tasks. Client is needed to
// start and stop them; Home is where their files are (the data dir).
type Tasks struct {
	Client    client.Client
	Home      string
	TaskQueue string
	PaidQueue string
	// Spend is the ceilings every task's session observes (spend.*).
	Spend workflows.SpendLimits
}

// TaskRequest is one task to start.
type TaskRequest struct {
	Specialist string
	Prompt     string
	Repo       string // the repository's root
	BaseCommit string // its HEAD: where an editing task's lane is cut
	Model      string // models.default ("" : the specialist's role decides)
	ModelsFile string
	Dirs       specialist.Dirs // the scopes, to refuse a bad name before starting
	Limits     workflows.Limits
	// TrustProject is specialists.trust_project: the repository's own
	// specialists may run.
	TrustProject bool
}

// NewTaskID is a fresh task ID: the UTC start time and random hex.
func NewTaskID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// Start checks the request, writes the task's metadata (pending) and starts
// its workflow. A specialist that does not exist, or a project specialist
// of a repository not trusted (specialists.trust_project), is refused
// with a *specialist error before anything starts.
func (t Tasks) Start(ctx context.Context, req TaskRequest) (activities.TaskMeta, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return activities.TaskMeta{}, fmt.Errorf("task: %w", ErrEmptyPrompt)
	}
	sp, err := TaskSpecialist(req.Dirs, req.Specialist, req.TrustProject)
	if err != nil {
		return activities.TaskMeta{}, err
	}
	id := NewTaskID()
	meta := activities.TaskMeta{ID: id, Status: activities.TaskPending, Specialist: sp.Name, Repo: req.Repo, Prompt: req.Prompt,
		Turns: 1, CreatedAt: time.Now().UTC()}
	meta.UpdatedAt = meta.CreatedAt
	if !sp.ReadOnly() {
		meta.Branch = activities.TaskBranch(id)
	}
	if err := activities.WriteTaskMeta(t.Home, meta); err != nil {
		return meta, err
	}
	in := workflows.TaskInput{
		Task: activities.TaskInput{ID: id, Specialist: sp.Name, Prompt: req.Prompt, Repo: req.Repo, BaseCommit: req.BaseCommit,
			Model: req.Model, ModelsFile: req.ModelsFile, UserSpecialists: req.Dirs.User, TrustProject: req.TrustProject},
		Limits: req.Limits, PaidQueue: t.PaidQueue, Spend: t.Spend,
	}
	_, err = t.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.TaskWorkflowID(id),
		TaskQueue:                t.TaskQueue,
		StaticSummary:            "task " + sp.Name + ": " + oneLine(req.Prompt, 180),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.TaskWorkflowName, in)
	if err != nil {
		_ = os.Remove(activities.TaskMetaPath(t.Home, id))
		return meta, fmt.Errorf("start task %s: %w", id, err)
	}
	return meta, nil
}

// TaskResumeRequest is a follow-up to a task that has ended.
type TaskResumeRequest struct {
	ID     string
	Prompt string
	// BaseCommit is the repository's HEAD: an editing task's lane is cut
	// there only if its branch is gone (otherwise at the branch's tip).
	BaseCommit string
	Model      string // models.default ("" : the specialist's role decides)
	ModelsFile string
	Dirs       specialist.Dirs
	Limits     workflows.Limits
	// TrustProject is specialists.trust_project, as for TaskRequest.
	TrustProject bool
}

// CanResume reads the task a follow-up is for and refuses, before the
// engine is involved, what cannot be resumed: an empty prompt, a task
// still running, a task with no session.
func (t Tasks) CanResume(id, prompt string) (activities.TaskMeta, error) {
	if strings.TrimSpace(prompt) == "" {
		return activities.TaskMeta{}, fmt.Errorf("resume task %s: %w", id, ErrEmptyPrompt)
	}
	m, err := t.Get(id)
	if err != nil {
		return m, err
	}
	if !activities.TaskTerminal(m.Status) {
		return m, &TaskRunningError{ID: id, Status: m.Status}
	}
	if m.Session == "" {
		return m, fmt.Errorf("resume task %s: %w", id, ErrTaskNoSession)
	}
	return m, nil
}

// TaskTurnEventID and TaskEndEventID are the IDs of the stream's events
// that open follow-up turn n and end turn n: following a resumed task
// starts at the first of them it finds.
func TaskTurnEventID(n int) string { return activities.TaskTurnEventID(n) }
func TaskEndEventID(n int) string  { return activities.TaskEndEventID(n) }

// closedWithin is how long Resume waits for the workflow of a task whose
// end is recorded to close: FinishTask writes the end just before it does.
const closedWithin = 15 * time.Second

// Resume gives a task that has ended a follow-up: a new turn of its
// session, run as durably as the first. The metadata is marked pending
// (turns counted, the follow-up's prompt kept), then a TaskWorkflow is
// started under the task's workflow ID (a closed one's ID may be reused;
// a running one is never joined). A start that fails puts the metadata
// back as it was.
func (t Tasks) Resume(ctx context.Context, req TaskResumeRequest) (activities.TaskMeta, error) {
	before, err := t.CanResume(req.ID, req.Prompt)
	if err != nil {
		return before, err
	}
	id, wid := before.ID, workflows.TaskWorkflowID(before.ID)
	if err := t.awaitClosed(ctx, wid); err != nil {
		if errors.Is(err, ErrTaskRunning) {
			return before, &TaskRunningError{ID: id, Status: "its workflow has not closed"}
		}
		return before, fmt.Errorf("resume task %s: %w", id, err)
	}
	m := before
	m.Status, m.Turns = activities.TaskPending, max(before.Turns, 1)+1
	m.FollowUps = append(slices.Clone(before.FollowUps), req.Prompt)
	m.EndedAt, m.Error, m.UpdatedAt = nil, "", time.Now().UTC()
	if err := activities.WriteTaskMeta(t.Home, m); err != nil {
		return before, err
	}
	in := workflows.TaskInput{
		Task: activities.TaskInput{ID: id, Specialist: m.Specialist, Prompt: req.Prompt, Repo: m.Repo, BaseCommit: req.BaseCommit,
			Model: req.Model, ModelsFile: req.ModelsFile, UserSpecialists: req.Dirs.User, TrustProject: req.TrustProject,
			Turn: m.Turns, Session: m.Session, Prior: horizon.Usage{Cost: m.Cost}},
		Limits: req.Limits, PaidQueue: t.PaidQueue, Spend: t.Spend,
	}
	_, err = t.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       wid,
		TaskQueue:                t.TaskQueue,
		StaticSummary:            fmt.Sprintf("task %s, follow-up (turn %d): %s", m.Specialist, m.Turns, oneLine(req.Prompt, 160)),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Without it a running workflow of that ID would be returned as
		// if this follow-up had started it.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, workflows.TaskWorkflowName, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			// Another follow-up started first: its metadata stands.
			return before, &TaskRunningError{ID: id, Status: "another follow-up started"}
		}
		_ = activities.WriteTaskMeta(t.Home, before)
		return before, fmt.Errorf("resume task %s: %w", id, err)
	}
	return m, nil
}

// awaitClosed waits (a little) for the task's last workflow to close: its
// end is in the metadata a moment before the workflow completes. One that
// does not close is still running; one the engine no longer has is closed.
func (t Tasks) awaitClosed(ctx context.Context, wid string) error {
	wctx, cancel := context.WithTimeout(ctx, closedWithin)
	defer cancel()
	err := t.Client.GetWorkflow(wctx, wid, "").Get(wctx, nil)
	var (
		ended *temporal.WorkflowExecutionError
		nf    *serviceerror.NotFound
	)
	switch {
	case err == nil, errors.As(err, &ended), errors.As(err, &nf):
		return nil // closed: completed, failed, cancelled or long gone
	case ctx.Err() != nil:
		return ctx.Err()
	case wctx.Err() != nil:
		return ErrTaskRunning
	}
	return err
}

// TaskSpecialist is the specialist a task named name would run: one that
// exists in the scopes of dirs, and, if it is a project specialist, of a
// repository the person trusts (trustProject: specialists.trust_project)
// with tools within the project scope. Surfaces call it before reaching
// the engine, so a bad name costs no daemon start.
func TaskSpecialist(dirs specialist.Dirs, name string, trustProject bool) (*specialist.Specialist, error) {
	set, err := specialist.Load(dirs)
	if err != nil {
		return nil, err
	}
	sp, err := set.Get(name)
	if err != nil {
		return nil, err
	}
	if sp.Scope == specialist.ScopeProject {
		if !trustProject {
			return nil, &ProjectSpecialistError{Name: sp.Name, Path: sp.Path}
		}
		if err := specialist.CheckProjectScope(sp); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// ErrEmptyPrompt: a task needs something to do.
var ErrEmptyPrompt = errors.New("the prompt is empty: say what the specialist should do")

// ProjectSpecialistError refuses a project specialist of a repository
// the person has not said they trust.
type ProjectSpecialistError struct{ Name, Path string }

func (e *ProjectSpecialistError) Error() string {
	return activities.UntrustedProjectSpecialist(e.Name, e.Path)
}

// Get reads one task's metadata. Stop and Output start here, so an ID
// that is not one (../server) never becomes a path.
func (t Tasks) Get(id string) (activities.TaskMeta, error) {
	if err := CheckID("task", id); err != nil {
		return activities.TaskMeta{}, err
	}
	m, err := activities.ReadTaskMeta(t.Home, id)
	if errors.Is(err, os.ErrNotExist) {
		return m, &TaskNotFoundError{ID: id}
	}
	return m, err
}

// List returns every task, newest first.
func (t Tasks) List() ([]activities.TaskMeta, error) {
	ents, err := os.ReadDir(activities.TasksDir(t.Home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	var out []activities.TaskMeta
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		m, err := activities.ReadTaskMeta(t.Home, id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b activities.TaskMeta) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// Stop cancels a task's workflow: its session is aborted, its end recorded.
func (t Tasks) Stop(ctx context.Context, id string) error {
	m, err := t.Get(id)
	if err != nil {
		return err
	}
	if activities.TaskTerminal(m.Status) {
		return fmt.Errorf("stop task %s: %w (%s)", id, ErrTaskEnded, m.Status)
	}
	if err := t.Client.CancelWorkflow(ctx, workflows.TaskWorkflowID(id), ""); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return fmt.Errorf("stop task %s: %w", id, ErrTaskEnded)
		}
		return fmt.Errorf("stop task %s: %w", id, err)
	}
	return nil
}

// followEvery is how often Output looks for more of a running task.
const followEvery = 200 * time.Millisecond

// Output calls emit for each event of the task's stream in order, every
// turn's. With follow it waits for more until the task has ended: its
// metadata says so and nothing is left to read, which is at its last
// turn's end event (an end event alone is not the end: a follow-up may
// come after it). ctx ending stops it with ctx's error (Ctrl-C detaches:
// the task goes on).
func (t Tasks) Output(ctx context.Context, id string, follow bool, emit func(activities.TaskEvent) error) error {
	if _, err := t.Get(id); err != nil {
		return err
	}
	path := activities.TaskOutputPath(t.Home, id)
	var (
		off     int64
		pending []byte
	)
	for {
		f, err := os.Open(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("task output %s: %w", path, err)
		default:
			n, rest, err := readEvents(f, off, pending, emit)
			f.Close()
			if err != nil {
				return err
			}
			off, pending = n, rest
		}
		if !follow {
			return nil
		}
		// The metadata turns terminal after the end event is written
		// (FinishTask writes the stream first), and pending again before a
		// follow-up starts: terminal with nothing unread is the end.
		if m, err := t.Get(id); err == nil && activities.TaskTerminal(m.Status) && len(pending) == 0 {
			if fi, err := os.Stat(path); err != nil || fi.Size() <= off {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followEvery):
		}
	}
}

// readEvents emits the whole lines of f from off (pending is an
// unfinished line read before) and returns the new offset and what remains
// of an unfinished line.
func readEvents(f *os.File, off int64, pending []byte, emit func(activities.TaskEvent) error) (int64, []byte, error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, pending, fmt.Errorf("task output: %w", err)
	}
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadBytes('\n')
		off += int64(len(line))
		if err != nil {
			return off, append(pending, line...), nil
		}
		line = append(pending, line...)
		pending = nil
		var ev activities.TaskEvent
		if jerr := json.Unmarshal(line, &ev); jerr != nil {
			return off, nil, fmt.Errorf("task output %s: line at byte %d: %w", filepath.Base(f.Name()), off-int64(len(line)), jerr)
		}
		if err := emit(ev); err != nil {
			return off, nil, err
		}
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
