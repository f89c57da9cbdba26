package core

// The verbs on supervisors and their schedules: the one way a surface
// starts, steers and stops a SupervisorWorkflow and changes its queue.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// ScheduleMemoCron is the schedule memo field holding the cron spec as
// written in the configuration: the engine keeps cron specs as calendars.
const ScheduleMemoCron = "cron"

// Supervisors changes horizon's supervisors in one namespace; new ones
// (and the workflows their schedules start) go to TaskQueue.
type Supervisors struct {
	Client    client.Client
	Namespace string
	TaskQueue string
}

// Schedules is what the two schedules of a supervisor run and when: the
// repository's nightly decomposition and the engine's daily pass.
type Schedules struct {
	DecomposeCron  string
	DailyCron      string
	TimeZone       string
	CatchupWindow  time.Duration
	DecomposeAhead int
	StallAttempts  int
	DayCeiling     float64
}

// DayCeilingRequest is what a person said about a supervisor's day
// ceiling: an amount, or that they accept unlimited spend (or neither).
type DayCeilingRequest struct {
	USD       *float64 // nil: no amount given
	Unlimited bool
}

// DayCeiling is a supervisor's day ceiling as decided: an amount in USD
// that all runs of this home may spend per UTC day, or unlimited spend the
// person accepted. The zero value is undecided, and no supervisor starts
// on it.
type DayCeiling struct {
	USD       float64
	Unlimited bool
	// Configured: the amount is spend.day_ceiling, not one given at start.
	Configured bool
}

// Decided says whether the person chose: an amount, or unlimited.
func (d DayCeiling) Decided() bool { return d.Unlimited || d.USD > 0 }

// Day-ceiling errors of ChooseDayCeiling and Start; surfaces name their
// own inputs (flags, fields) around them.
var (
	// ErrNoDayCeiling: neither an amount nor unlimited spend was chosen,
	// and spend.day_ceiling is not set.
	ErrNoDayCeiling = errors.New("a supervisor spends unattended, so it needs a day ceiling or an explicit choice of unlimited spend")
	// ErrDayCeilingConflict: an amount and unlimited spend both.
	ErrDayCeilingConflict = errors.New("a day ceiling and unlimited spend were both asked for")
	// ErrDayCeilingAmount: the amount is not a positive number of USD.
	ErrDayCeilingAmount = errors.New("the day ceiling must be a positive amount in USD")
)

// ChooseDayCeiling is the rule for a supervisor's day ceiling: what the
// person asked for at start (an amount or unlimited spend), else the
// configured spend.day_ceiling, which they set themselves; with none of
// those, no supervisor starts (ErrNoDayCeiling).
func ChooseDayCeiling(req DayCeilingRequest, configured float64) (DayCeiling, error) {
	switch {
	case req.USD != nil && req.Unlimited:
		return DayCeiling{}, ErrDayCeilingConflict
	case req.USD != nil:
		if usd := *req.USD; usd <= 0 || math.IsNaN(usd) || math.IsInf(usd, 0) {
			return DayCeiling{}, fmt.Errorf("%w (got %v)", ErrDayCeilingAmount, usd)
		}
		return DayCeiling{USD: *req.USD}, nil
	case req.Unlimited:
		return DayCeiling{Unlimited: true}, nil
	case configured > 0:
		return DayCeiling{USD: configured, Configured: true}, nil
	}
	return DayCeiling{}, ErrNoDayCeiling
}

// Start starts the supervisor of in.Repo (one already running is left as
// it is) and creates, or brings up to date, its schedules. Its runs and
// its daily pass observe ceiling, which must be decided (ChooseDayCeiling):
// a supervisor never starts with no day ceiling unless the person said so.
func (s Supervisors) Start(ctx context.Context, in workflows.SupervisorInput, sched Schedules, ceiling DayCeiling) error {
	if !ceiling.Decided() {
		return fmt.Errorf("start supervisor of %s: %w", in.Repo, ErrNoDayCeiling)
	}
	in.Run.DayCeiling, sched.DayCeiling = ceiling.USD, ceiling.USD
	// One already running is left as it is: say so when the person asked
	// for something else of it, rather than seem to have done it.
	if cur, err := s.Supervisor(ctx, in.ID); err == nil && cur.Status != horizon.SupervisorStopped && cur.Autonomy != in.Autonomy {
		return &SupervisorDiffersError{Repo: in.Repo, Running: cur.Autonomy, Asked: in.Autonomy}
	}
	opts := client.StartWorkflowOptions{
		ID: in.ID, TaskQueue: s.TaskQueue,
		StaticSummary:            "supervisor · " + in.Repo,
		Memo:                     map[string]any{workflows.MemoRepo: in.Repo},
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
	if in.Run.SearchAttributes {
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(workflows.SearchRepo.ValueSet(in.Repo))
	}
	if _, err := s.Client.ExecuteWorkflow(ctx, opts, workflows.SupervisorWorkflowName, in); err != nil {
		return fmt.Errorf("start supervisor of %s: %w", in.Repo, err)
	}
	return s.ensureSchedules(ctx, in.ID, sched)
}

// ensureSchedules creates (or brings up to the configuration) the
// repository's nightly decomposition and the engine's daily pass.
func (s Supervisors) ensureSchedules(ctx context.Context, supervisor string, sc Schedules) error {
	policy := func(id, cron string, action *client.ScheduleWorkflowAction) client.ScheduleOptions {
		return client.ScheduleOptions{
			ID:            id,
			Spec:          client.ScheduleSpec{CronExpressions: []string{cron}, TimeZoneName: sc.TimeZone},
			Action:        action,
			Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			CatchupWindow: sc.CatchupWindow,
			Memo:          map[string]any{ScheduleMemoCron: cron},
		}
	}
	for _, o := range []client.ScheduleOptions{
		policy(horizon.DecomposeScheduleID(supervisor), sc.DecomposeCron, &client.ScheduleWorkflowAction{
			ID: supervisor + "-decompose-run", Workflow: workflows.DecomposeWorkflowName, TaskQueue: s.TaskQueue,
			Args: []any{workflows.DecomposeInput{Supervisor: supervisor, Ahead: sc.DecomposeAhead}},
		}),
		policy(horizon.DailyScheduleID, sc.DailyCron, &client.ScheduleWorkflowAction{
			ID: horizon.DailyScheduleID + "-run", Workflow: workflows.DailyPassWorkflowName, TaskQueue: s.TaskQueue,
			Args: []any{workflows.DailyPassInput{StallAttempts: sc.StallAttempts, DayCeiling: sc.DayCeiling}},
		}),
	} {
		_, err := s.Client.ScheduleClient().Create(ctx, o)
		if err == nil {
			continue
		}
		var exists *serviceerror.AlreadyExists
		if !errors.As(err, &exists) && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return fmt.Errorf("create schedule %s: %w", o.ID, err)
		}
		// Made again, so a changed cron, window or action applies (the
		// memo that keeps the cron as written cannot be updated in place).
		if err := s.Client.ScheduleClient().GetHandle(ctx, o.ID).Delete(ctx); err != nil {
			return fmt.Errorf("replace schedule %s: %w", o.ID, err)
		}
		if _, err := s.Client.ScheduleClient().Create(ctx, o); err != nil {
			return fmt.Errorf("create schedule %s: %w", o.ID, err)
		}
	}
	return nil
}

// Supervisor reads a supervisor's state; one that does not run is
// *SupervisorNotFoundError.
//
// The state is the workflow's own, corrected by what the engine knows and
// the workflow cannot say: that it was closed from outside (cancelled,
// terminated), and which of its steps the engine is retrying, with the
// last error.
func (s Supervisors) Supervisor(ctx context.Context, id string) (*horizon.SupervisorState, error) {
	desc, err := s.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, &SupervisorNotFoundError{ID: id}
		}
		return nil, fmt.Errorf("read supervisor %s: %w", id, err)
	}
	var st horizon.SupervisorState
	if err := query(ctx, s.Client, id, &st); err != nil {
		return nil, fmt.Errorf("read supervisor %s: %w", id, err)
	}
	// A supervisor that stopped itself (supervisor stop) says so; one
	// closed from outside still reads as it last was.
	if status := desc.GetWorkflowExecutionInfo().GetStatus(); status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && st.Status != horizon.SupervisorStopped {
		st.Status = horizon.SupervisorStopped
		st.Ended = closedStatus(status)
	}
	st.Retrying = retrying(desc.GetPendingActivities())
	st.Outage = SupervisorOutage(ctx, s.Client, desc)
	return &st, nil
}

// closedStatus is a closed workflow's status in words.
func closedStatus(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new"
	}
	return "completed"
}

// retrying describes the first pending activity the engine is retrying
// after a failure ("" when none is).
func retrying(pending []*workflowpb.PendingActivityInfo) string {
	for _, pa := range pending {
		if pa.GetAttempt() < 2 || pa.GetLastFailure() == nil {
			continue
		}
		return fmt.Sprintf("%s, attempt %d: %s", pa.GetActivityType().GetName(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
	}
	return ""
}

// Pause holds the supervisor: it starts nothing new.
func (s Supervisors) Pause(ctx context.Context, id string) (*horizon.SupervisorState, error) {
	return s.update(ctx, id, workflows.UpdatePause)
}

// Resume lets a paused supervisor go on.
func (s Supervisors) Resume(ctx context.Context, id string) (*horizon.SupervisorState, error) {
	return s.update(ctx, id, workflows.UpdateResume)
}

// Stop ends the supervisor (its runs go on) and deletes its nightly
// schedule; the daily pass stays, other repositories may need it. The
// answer is the supervisor stopped, or still stopping with Waiting
// saying on what ("stopping: it waits for ..."): the workflow cancels a
// decomposition in flight and answers once it has ended, or says what
// it still finishes (a gate on a merge, say). A supervisor from before
// that answers at once; it is read again for a few seconds until it has
// ended.
func (s Supervisors) Stop(ctx context.Context, id string) (*horizon.SupervisorState, error) {
	st, err := s.update(ctx, id, workflows.UpdateStop)
	if err != nil {
		return nil, err
	}
	for i := 0; st.Status != horizon.SupervisorStopped && !strings.HasPrefix(st.Waiting, "stopping: ") && i < 20; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if cur, err := s.Supervisor(ctx, id); err == nil && cur.Status == horizon.SupervisorStopped {
			st = cur
		}
	}
	if err := s.Client.ScheduleClient().GetHandle(ctx, horizon.DecomposeScheduleID(id)).Delete(ctx); err != nil {
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			return nil, fmt.Errorf("delete the nightly schedule: %w", err)
		}
	}
	return st, nil
}

// Approve lets a queued plan (entry q3) waiting for approval run in turn.
func (s Supervisors) Approve(ctx context.Context, id string, a workflows.Approve) (*horizon.SupervisorState, error) {
	return s.update(ctx, id, workflows.UpdateApprove, a)
}

// QueueAdd queues a goal; the answer is the entry with its ID.
func (s Supervisors) QueueAdd(ctx context.Context, id string, e horizon.QueueEntry) (*horizon.QueueEntry, error) {
	out, err := update[horizon.QueueEntry](ctx, s.Client, id, workflows.UpdateQueueAdd, e)
	return out, supervisorError(id, err)
}

// QueueRemove drops a queue entry.
func (s Supervisors) QueueRemove(ctx context.Context, id, entry string) (*horizon.SupervisorState, error) {
	return s.update(ctx, id, workflows.UpdateQueueRemove, entry)
}

// QueueMove moves a queue entry to the top.
func (s Supervisors) QueueMove(ctx context.Context, id, entry string) (*horizon.SupervisorState, error) {
	return s.update(ctx, id, workflows.UpdateQueueMove, workflows.QueueMove{ID: entry, Top: true})
}

// Trigger runs a schedule's action now.
func (s Supervisors) Trigger(ctx context.Context, scheduleID string) error {
	if err := s.Client.ScheduleClient().GetHandle(ctx, scheduleID).Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return &ScheduleNotFoundError{ID: scheduleID}
		}
		return fmt.Errorf("trigger %s: %w", scheduleID, err)
	}
	return nil
}

// ScheduleNotFoundError says the engine has no schedule with that ID.
type ScheduleNotFoundError struct{ ID string }

func (e *ScheduleNotFoundError) Error() string {
	return fmt.Sprintf("no schedule %s; `horizon supervisor start` makes it", e.ID)
}

func (s Supervisors) update(ctx context.Context, id, name string, args ...any) (*horizon.SupervisorState, error) {
	st, err := update[horizon.SupervisorState](ctx, s.Client, id, name, args...)
	return st, supervisorError(id, err)
}

// supervisorError says an unknown or ended supervisor as one that does
// not run.
func supervisorError(id string, err error) error {
	var nf *NotFoundError
	var ended *EndedError
	if errors.As(err, &nf) || errors.As(err, &ended) {
		return &SupervisorNotFoundError{ID: id}
	}
	return err
}
