package core

// App is the application layer: every use case a surface offers (the CLI,
// the console, the web), each a verb with its own request and result
// types, over one engine connection and one resolved configuration.
// Surfaces call these verbs and render what they return; they never name
// the engine's packages (boundary_test.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/workflows"
)

// App holds the engine connection and the configuration the verbs follow.
type App struct {
	c   client.Client
	cfg *config.Config
}

// New is the App over c with cfg's namespace, queues and settings.
func New(c client.Client, cfg *config.Config) *App {
	if cfg == nil {
		cfg = &config.Config{}
	}
	return &App{c: c, cfg: cfg}
}

// Close closes the engine connection.
func (a *App) Close() { a.c.Close() }

// Config is the configuration the verbs follow.
func (a *App) Config() *config.Config { return a.cfg }

func (a *App) reader() Reader {
	return Reader{Client: a.c, Namespace: a.cfg.Temporal.Namespace}
}

func (a *App) runs() Runs {
	return Runs{Client: a.c, Namespace: a.cfg.Temporal.Namespace, TaskQueue: a.cfg.Temporal.TaskQueue}
}

// Supervisors is the verbs on supervisors by their workflow ID.
func (a *App) Supervisors() Supervisors {
	return Supervisors{Client: a.c, Namespace: a.cfg.Temporal.Namespace, TaskQueue: a.cfg.Temporal.TaskQueue}
}

// Tasks is the verbs on background tasks.
func (a *App) Tasks() Tasks {
	return Tasks{Client: a.c, Home: a.cfg.DataDir(), TaskQueue: a.cfg.Temporal.TaskQueue, PaidQueue: a.cfg.PaidQueue(), Spend: spendLimits(a.cfg)}
}

// Loops is the verbs on `horizon loop`.
func (a *App) Loops() Loops {
	return Loops{Client: a.c, TaskQueue: a.cfg.Temporal.TaskQueue, PaidQueue: a.cfg.PaidQueue(), Spend: spendLimits(a.cfg)}
}

// spendLimits are the ceilings every task's or loop's session observes.
func spendLimits(cfg *config.Config) workflows.SpendLimits {
	return workflows.SpendLimits{Ceiling: cfg.Spend.Ceiling, DayCeiling: cfg.Spend.DayCeiling, ThrottleAt: cfg.Spend.ThrottleAt}
}

// --- reads ---

// RunView is one run's state as a surface shows it.
type RunView struct {
	State *horizon.RunState
	// Live is false when the run is open but no worker answered: the
	// daemon is down, the state is what the engine's records say.
	Live bool
}

// Run reads one run's state (its status query while it runs, its result
// or failure details once closed). An unknown run is a *NotFoundError.
func (a *App) Run(ctx context.Context, id string) (*RunView, error) {
	st, live, err := a.reader().Run(ctx, id)
	if err != nil {
		return nil, err
	}
	st.Reason = PlainReason(st.Reason)
	return &RunView{State: st, Live: live}, nil
}

// ListRequest narrows the run list.
type ListRequest struct {
	// Status keeps the runs with this status ("": all).
	Status horizon.Status
	// Repo keeps the runs of the repository at this root ("": all).
	Repo string
	// Open keeps the runs the engine still runs.
	Open bool
	// Limit is the most runs returned (0: all).
	Limit int
}

// Check refuses a status horizon does not know, before anything is asked.
func (req ListRequest) Check() error {
	switch req.Status {
	case "", horizon.StatusRunning, horizon.StatusCompleted, horizon.StatusFailed, horizon.StatusBlocked, horizon.StatusCancelled:
		return nil
	}
	return inputf("--status %q: use running, completed, failed, blocked or cancelled", req.Status)
}

// Runs lists runs, newest first, from the engine's visibility store (no
// run is asked anything). A status horizon does not know is bad input.
func (a *App) Runs(ctx context.Context, req ListRequest) ([]RunRow, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var f runFilter
	if req.Status != "" {
		clause, _ := whereEqual(workflows.SearchStatus.GetName(), string(req.Status)) // a plain word: exact
		f.where = append(f.where, clause)
	}
	if req.Open {
		f.where = append(f.where, "ExecutionStatus = 'Running'")
	}
	if req.Repo != "" {
		root := req.Repo
		f.equal(workflows.SearchRepo.GetName(), root, func(r RunRow) bool { return r.Repo == root })
	}
	rows, err := a.reader().Runs(ctx, f.query(), f.listLimit(req.Limit))
	if err != nil {
		return nil, err
	}
	return f.apply(rows, req.Limit), nil
}

// ErrNoRuns says there is no run yet.
var ErrNoRuns = errors.New("no runs yet; start one with `horizon start \"<goal>\"`")

// Latest is the newest run's ID; with none, bad input (ErrNoRuns).
func (a *App) Latest(ctx context.Context) (string, error) {
	rows, err := a.reader().Runs(ctx, "", 1)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "", &InputError{Err: ErrNoRuns}
	}
	return rows[0].ID, nil
}

// RunsSince reads every run open now or closed since t.
func (a *App) RunsSince(ctx context.Context, t time.Time) ([]horizon.RunState, error) {
	return a.reader().RunsSince(ctx, t)
}

// Needs is what waits for a person: checkpoints, blockers, ceilings, and
// supervisors' queued plans.
func (a *App) Needs(ctx context.Context) ([]Need, error) { return a.reader().Needs(ctx) }

// AllSupervisors reads the supervisors of every repository.
func (a *App) AllSupervisors(ctx context.Context) ([]horizon.SupervisorState, error) {
	return a.reader().Supervisors(ctx)
}

// Report is a daily report in both its forms.
type Report struct {
	Date     string          `json:"date"`
	Markdown string          `json:"markdown"`
	Report   json.RawMessage `json:"report"`
}

// Report reads the daily report of date ("": the newest).
func (a *App) Report(_ context.Context, date string) (*Report, error) {
	r := Reports{DataDir: a.cfg.DataDir()}
	if date == "" {
		latest, err := r.Latest()
		if err != nil {
			return nil, err
		}
		date = latest
	}
	md, err := r.Markdown(date)
	if err != nil {
		return nil, err
	}
	js, err := r.JSON(date)
	if err != nil {
		return nil, err
	}
	return &Report{Date: date, Markdown: string(md), Report: js}, nil
}

// Spend is what was spent on each of the last days UTC days, oldest first.
func (a *App) Spend(_ context.Context, days int) ([]horizon.DaySpend, error) {
	return Spend{DataDir: a.cfg.DataDir(), DayCeiling: a.cfg.Spend.DayCeiling}.Days(time.Now(), days)
}

// supervisorOf is the ID of the supervisor of the repository at dir; a
// path that is no repository is bad input.
func supervisorOf(dir string) (string, repo.Info, error) {
	info, err := repo.Inspect(dir)
	if err != nil {
		return "", info, asInput(err)
	}
	return horizon.SupervisorID(info.Root), info, nil
}

// onSupervisor calls verb with the ID of the supervisor of the repository
// at dir: the verbs a surface names by a repository's path.
func onSupervisor[T any](dir string, verb func(id string) (T, error)) (T, error) {
	id, _, err := supervisorOf(dir)
	if err != nil {
		var zero T
		return zero, err
	}
	return verb(id)
}

// Queue is the queue of the supervisor of the repository at dir.
func (a *App) Queue(ctx context.Context, dir string) ([]QueueView, error) {
	return onSupervisor(dir, func(id string) ([]QueueView, error) { return a.Supervisors().Queue(ctx, id) })
}

// Roadmap is the roadmap of the repository at dir, each item with its
// state in the supervisor's records.
func (a *App) Roadmap(ctx context.Context, dir string) (*RoadmapView, error) {
	_, info, err := supervisorOf(dir)
	if err != nil {
		return nil, err
	}
	v, err := a.Supervisors().Roadmap(ctx, info.Root, strings.TrimPrefix(info.Ref, "refs/heads/"), a.cfg.Supervisor.Roadmap)
	return v, asInput(err)
}

// --- verbs on runs ---

// Start prepares req (Prepare) and starts it.
func (a *App) Start(ctx context.Context, req StartRequest) (*Started, error) {
	p, err := Prepare(ctx, a.cfg, req)
	if err != nil {
		return nil, err
	}
	return a.StartPrepared(ctx, p)
}

// StartPrepared starts a run Prepare checked.
func (a *App) StartPrepared(ctx context.Context, p *Prepared) (*Started, error) {
	if err := a.runs().Start(ctx, p.input); err != nil {
		return nil, err
	}
	return &Started{RunID: p.RunID, Branch: p.Branch}, nil
}

// ApproveRequest lets a run waiting at a checkpoint go on. A non-empty
// Subject must name the checkpoint, so a late approval cannot pass the
// next one.
type ApproveRequest struct {
	Run     string `json:"run"`
	Subject string `json:"subject,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Approve lets a waiting run go on.
func (a *App) Approve(ctx context.Context, req ApproveRequest) (*horizon.RunState, error) {
	return a.runs().Approve(ctx, req.Run, workflows.Approve{Subject: strings.TrimSpace(req.Subject), Note: strings.TrimSpace(req.Note)})
}

// UnblockRequest puts a blocked feature ("" for a one-feature run) back in
// line with the person's note, which its next attempt reads.
type UnblockRequest struct {
	Run     string `json:"run"`
	Feature string `json:"feature,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Unblock puts a blocked feature back in line.
func (a *App) Unblock(ctx context.Context, req UnblockRequest) (*horizon.RunState, error) {
	return a.runs().Unblock(ctx, req.Run, workflows.Unblock{Feature: strings.TrimSpace(req.Feature), Note: strings.TrimSpace(req.Note)})
}

// SkipRequest leaves a planned run's feature out, as a person's decision
// with a note (required) that the handoff lists under "Skipped".
type SkipRequest struct {
	Run     string `json:"run"`
	Feature string `json:"feature"`
	Note    string `json:"note"`
}

// Skip leaves a feature out: a running one is stopped first. Features
// that depend on it stay blocked unless they are skipped too. A
// one-feature run has no feature to skip (*RefusedError).
func (a *App) Skip(ctx context.Context, req SkipRequest) (*horizon.RunState, error) {
	req.Feature, req.Note = strings.TrimSpace(req.Feature), strings.TrimSpace(req.Note)
	switch {
	case req.Feature == "":
		return nil, &RefusedError{Op: "skip", ID: req.Run, Reason: "name the feature to skip (`horizon status " + req.Run + "` lists them)"}
	case req.Note == "":
		return nil, &RefusedError{Op: "skip", ID: req.Run, Reason: "a note is required: say why the feature is left out"}
	}
	v, err := a.Run(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	if v.State.Plan == nil && v.State.Status.Terminal() {
		return nil, &EndedError{Op: "skip", ID: req.Run}
	}
	if v.State.Plan == nil && v.State.Phase != horizon.PhasePlanning && v.State.Phase != horizon.PhasePreflight && v.State.Phase != horizon.PhaseBaseline {
		return nil, &RefusedError{Op: "skip", ID: req.Run, Reason: "a one-feature run has no features to skip; `horizon cancel " + req.Run + "` ends it"}
	}
	return a.runs().Skip(ctx, req.Run, workflows.Skip{Feature: req.Feature, Note: req.Note})
}

// Pause holds a run before its next attempt.
func (a *App) Pause(ctx context.Context, id string) (*horizon.RunState, error) {
	return a.runs().Pause(ctx, id)
}

// Resume lets a paused run go on.
func (a *App) Resume(ctx context.Context, id string) (*horizon.RunState, error) {
	return a.runs().Resume(ctx, id)
}

// CeilingRequest sets a run's spend ceiling in USD, or with Day the daily
// ceiling it observes.
type CeilingRequest struct {
	Run string  `json:"run"`
	USD float64 `json:"usd"`
	Day bool    `json:"day,omitempty"`
}

// SetCeiling sets a run's (or its day's) ceiling.
func (a *App) SetCeiling(ctx context.Context, req CeilingRequest) (*horizon.RunState, error) {
	return a.runs().SetCeiling(ctx, req.Run, req.USD, req.Day)
}

// Cancel asks the engine to cancel a running run, task or loop; it stops
// in the background. An ended one is an *EndedError.
func (a *App) Cancel(ctx context.Context, id string) error { return a.runs().Cancel(ctx, id) }

// --- verbs on supervisors ---

// ApproveQueuedRequest lets a supervisor's queued plan run in its turn.
type ApproveQueuedRequest struct {
	Supervisor string `json:"supervisor"`
	Entry      string `json:"entry"`
	Note       string `json:"note,omitempty"`
}

// ApproveQueued approves a queued plan; one that no longer waits is refused.
func (a *App) ApproveQueued(ctx context.Context, req ApproveQueuedRequest) (*horizon.SupervisorState, error) {
	return a.Supervisors().Approve(ctx, req.Supervisor, workflows.Approve{Subject: strings.ToLower(req.Entry), Note: strings.TrimSpace(req.Note)})
}

// SupervisorStart starts the supervisor of req.Repo (PrepareSupervisor,
// then StartSupervisor) and reads it back.
func (a *App) SupervisorStart(ctx context.Context, req SupervisorRequest) (*horizon.SupervisorState, error) {
	p, err := PrepareSupervisor(ctx, a.cfg, req)
	if err != nil {
		return nil, err
	}
	if err := a.StartSupervisor(ctx, p); err != nil {
		return nil, err
	}
	return a.Supervisors().Supervisor(ctx, p.ID)
}

// SupervisorStop stops the supervisor of the repository at dir.
func (a *App) SupervisorStop(ctx context.Context, dir string) (*horizon.SupervisorState, error) {
	return onSupervisor(dir, func(id string) (*horizon.SupervisorState, error) { return a.Supervisors().Stop(ctx, id) })
}

// QueueAddRequest adds a goal to the queue of the repository's supervisor.
type QueueAddRequest struct {
	Repo  string             `json:"repo"`
	Entry horizon.QueueEntry `json:"entry"`
}

// QueueAdd adds an entry; it returns the entry as queued (its ID set).
func (a *App) QueueAdd(ctx context.Context, req QueueAddRequest) (*horizon.QueueEntry, error) {
	return onSupervisor(req.Repo, func(id string) (*horizon.QueueEntry, error) { return a.Supervisors().QueueAdd(ctx, id, req.Entry) })
}

// QueueEntryRequest names an entry of the queue of the repository's
// supervisor.
type QueueEntryRequest struct {
	Repo  string `json:"repo"`
	Entry string `json:"entry"`
}

// QueueRemove removes the entry.
func (a *App) QueueRemove(ctx context.Context, req QueueEntryRequest) (*horizon.SupervisorState, error) {
	return onSupervisor(req.Repo, func(id string) (*horizon.SupervisorState, error) {
		return a.Supervisors().QueueRemove(ctx, id, req.Entry)
	})
}

// QueueMove moves the entry to the front of the queue.
func (a *App) QueueMove(ctx context.Context, req QueueEntryRequest) (*horizon.SupervisorState, error) {
	return onSupervisor(req.Repo, func(id string) (*horizon.SupervisorState, error) {
		return a.Supervisors().QueueMove(ctx, id, req.Entry)
	})
}

// History is a workflow's whole history as JSON, as the Temporal CLI
// exports it (replay fixtures are made of it).
func (a *App) History(ctx context.Context, id string) ([]byte, error) {
	it := a.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id, err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	return b, nil
}

// Going counts what goes on besides runs.
type Going struct {
	Supervisors int `json:"supervisors"`
	// Plans are plans being made (`horizon plan`, a supervisor's
	// decomposition).
	Plans int `json:"plans"`
}

// Going counts the running supervisors and plans being made; what the
// engine cannot say counts as none.
func (a *App) Going(ctx context.Context) Going {
	count := func(typ string) int {
		exs, err := a.reader().List(ctx, typ, "ExecutionStatus = 'Running'", 0)
		if err != nil {
			return 0
		}
		return len(exs)
	}
	return Going{Supervisors: count(workflows.SupervisorWorkflowName), Plans: count(workflows.PlanWorkflowName)}
}

// --- tasks and loops ---

// LoopResult is where a loop stands, or how it ended.
type LoopResult = activities.LoopResult

// TaskMeta is a background task's record; TaskEvent one line of its output.
type (
	TaskMeta  = activities.TaskMeta
	TaskEvent = activities.TaskEvent
)

// TaskCompleted is the status of a task that did its work.
const TaskCompleted = activities.TaskCompleted

// TaskTerminal reports whether a task's status is an end.
func TaskTerminal(status string) bool { return activities.TaskTerminal(status) }

// StartLoop starts a loop with the configured models and session limits;
// it returns the loop's ID.
func (a *App) StartLoop(ctx context.Context, req LoopRequest) (string, error) {
	req.Model, req.ModelsFile = a.cfg.Models.Default, a.cfg.Models.File
	req.Limits = workflows.Limits{SessionTimeout: a.cfg.Agent.SessionTimeout, HeartbeatTimeout: a.cfg.Agent.HeartbeatTimeout, GateTimeout: a.cfg.Gate.Timeout,
		Advisor: advisorSettings(a.cfg.Advisor)}
	return a.Loops().Start(ctx, req)
}

// StartTask starts a background task with the configured models and
// session limits.
func (a *App) StartTask(ctx context.Context, req TaskRequest) (TaskMeta, error) {
	req.Model, req.ModelsFile, req.TrustProject = a.cfg.Models.Default, a.cfg.Models.File, a.cfg.Specialists.TrustProject
	req.Limits = workflows.Limits{SessionTimeout: a.cfg.Agent.SessionTimeout, HeartbeatTimeout: a.cfg.Agent.HeartbeatTimeout}
	return a.Tasks().Start(ctx, req)
}

// ResumeTask gives a task that has ended a follow-up, a new turn of its
// session, with the configured models and session limits.
func (a *App) ResumeTask(ctx context.Context, req TaskResumeRequest) (TaskMeta, error) {
	req.Model, req.ModelsFile, req.TrustProject = a.cfg.Models.Default, a.cfg.Models.File, a.cfg.Specialists.TrustProject
	req.Limits = workflows.Limits{SessionTimeout: a.cfg.Agent.SessionTimeout, HeartbeatTimeout: a.cfg.Agent.HeartbeatTimeout}
	return a.Tasks().Resume(ctx, req)
}

// TaskRecords reads the tasks' records and output without the engine
// (`horizon task list`, `task output`); it cannot start or stop one.
func TaskRecords(cfg *config.Config) Tasks { return Tasks{Home: cfg.DataDir()} }

// ReportNow writes today's report now, in this process, as the daily pass
// writes it (over the window since the last report), and reads it back.
// It needs no supervisor: only the engine's records of the runs.
func (a *App) ReportNow(ctx context.Context) (*Report, error) {
	acts := &activities.Activities{Home: a.cfg.DataDir(), Engine: a.reader()}
	out, err := acts.DailyReport(ctx, activities.DailyInput{
		Until: time.Now().UTC(), StallAttempts: a.cfg.Supervisor.StallAttempts, DayCeiling: a.cfg.Spend.DayCeiling,
	})
	if err != nil {
		return nil, err
	}
	return a.Report(ctx, out.Date)
}

// TaskRunning is the status of a task at work.
const TaskRunning = activities.TaskRunning
