package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// dayLedger stands in for $HORIZON_HOME/spend/<day>.jsonl: each mocked
// metered activity adds its cost, as the real ones do (recordSpend), and
// DaySpend reads it. So a test sees the cost of one call weigh on the next.
type dayLedger struct {
	mu    sync.Mutex
	spent float64
}

func (d *dayLedger) add(c float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.spent += c
}

func (d *dayLedger) read(context.Context) (float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.spent, nil
}

// raiseDay sends set-day-ceiling usd to the workflow under test.
func raiseDay(t *testing.T, e *testsuite.TestWorkflowEnvironment, usd float64) {
	e.UpdateWorkflow(UpdateSetDayCeiling, "raise", &testsuite.TestUpdateCallback{
		OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}, usd)
}

// planEnv is PlanWorkflow with a metered lead (the T4 rung, cloud/lead),
// local/lead as the lead's local model when local, and the day's ledger.
// leads records each lead session as "model queue".
func planEnv(t *testing.T, local string, day *dayLedger, leads *[]string) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.RegisterWorkflow(PlanWorkflow)
	e.RegisterActivity(&activities.Activities{})
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "run-queue"})
	pre := meteredLead(local)
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(*pre, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lane"}, nil)
	e.OnActivity(a.DaySpend, mock.Anything).Return(day.read)
	var mu sync.Mutex
	queues := map[string]string{}
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		queues[info.ActivityID] = info.TaskQueue
	})
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		mu.Lock()
		q := queues[activity.GetInfo(ctx).ActivityID]
		*leads = append(*leads, in.Model+" "+q)
		mu.Unlock()
		require.Equal(t, horizon.RoleLead, in.Role)
		day.add(0.4)
		var b horizon.PlanBlock
		require.NoError(t, json.Unmarshal([]byte(validPlan), &b))
		p, err := horizon.PlanFromBlock(in.Goal, b)
		require.NoError(t, err)
		return activities.SessionOutput{Plan: &p, Usage: horizon.Usage{Cost: 0.4}}, nil
	})
	return e
}

func planIn(foreground bool) PlanInput {
	return PlanInput{RunID: "plan-1", Goal: "Make add.sh add", Repo: "/repo", BaseCommit: "abc", PaidQueue: "paid",
		Spend: SpendLimits{DayCeiling: 1, ThrottleAt: 0.8}, Foreground: foreground}
}

// The lead of `horizon plan` and of a supervisor's decomposition goes
// through the spend authority: on the paid queue below the throttle
// point, on its local model near the day ceiling, and at the day ceiling
// with no local model a decomposition pauses (visibly, until `horizon
// set-ceiling --day` raises it) while `horizon plan` refuses at once.
func TestPlanWorkflowSpendAuthority(t *testing.T) {
	for _, tc := range []struct {
		name       string
		local      string
		daySpent   float64
		foreground bool
		want       []string // lead sessions, "model queue"
		refused    bool
	}{
		{"far from the ceiling: metered, on the paid queue", "local/lead", 0.1, false, []string{"cloud/lead paid"}, false},
		{"near the ceiling: the lead's local model, on its own queue", "local/lead", 0.85, false, []string{"local/lead run-queue"}, false},
		{"near the ceiling in the foreground: local too", "local/lead", 0.85, true, []string{"local/lead run-queue"}, false},
		{"at the ceiling in the foreground, no local model: refused", "", 1, true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			day := &dayLedger{spent: tc.daySpent}
			var leads []string
			e := planEnv(t, tc.local, day, &leads)
			e.ExecuteWorkflow(PlanWorkflow, planIn(tc.foreground))
			require.True(t, e.IsWorkflowCompleted())
			require.Equal(t, tc.want, leads)
			if tc.refused {
				err := e.GetWorkflowError()
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "%v", err)
				require.Equal(t, FailureSpendCeiling, app.Type())
				require.Contains(t, app.Message(), "today's spend $1.0000 has reached the day ceiling $1.0000")
				require.Contains(t, app.Message(), "`horizon set-ceiling --day")
				return
			}
			require.NoError(t, e.GetWorkflowError())
			// The lead's cost is in the day's spend.
			require.InDelta(t, tc.daySpent+0.4, day.spent, 1e-9)
		})
	}
}

// A supervisor's decomposition at the day ceiling, its lead metered with
// no local model, pauses before the lead's call, shows why and the
// command, and plans once the day's ceiling is raised.
func TestPlanWorkflowPausesAtDayCeiling(t *testing.T) {
	day := &dayLedger{spent: 1}
	var leads []string
	e := planEnv(t, "", day, &leads)
	var paused horizon.RunState
	var leadsAtPause int
	e.RegisterDelayedCallback(func() {
		paused = query(t, e)
		leadsAtPause = len(leads)
		raiseDay(t, e, 10)
	}, 30*time.Minute)
	e.ExecuteWorkflow(PlanWorkflow, planIn(false))
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	require.Equal(t, horizon.PhasePaused, paused.Phase)
	require.Contains(t, paused.Reason, "the lead's model cloud/lead is metered")
	require.Contains(t, paused.Reason, "horizon set-ceiling plan-1 USD")
	require.Zero(t, leadsAtPause, "no metered call at the ceiling")
	require.Equal(t, []string{"cloud/lead paid"}, leads)
}

// A loop's turns go through the spend authority: each turn's cost joins
// the day's spend, and the turn after the day ceiling is reached waits
// (the loop's query says why) until the ceiling is raised.
func TestLoopPausesAtDayCeiling(t *testing.T) {
	day := &dayLedger{}
	w := &loopWorld{turn: func(_ context.Context, k int) (activities.LoopActivationOutput, error) {
		day.add(0.5)
		st := horizon.ReportContinue
		if k == 3 {
			st = horizon.ReportSatisfied
		}
		return activities.LoopActivationOutput{Report: report(st, "turn"), Usage: horizon.Usage{Cost: 0.5}}, nil
	}}
	w.plan = &activities.LoopPlan{Agent: activities.AgentWorker, Model: "cloud/m", Paid: true, Dir: "/lane", Branch: "horizon/loop-1"}
	e := w.env(t)
	e.OnActivity(a.DaySpend, mock.Anything).Return(day.read)
	var paused activities.LoopResult
	var turnsAtPause int
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryLoop)
		require.NoError(t, err)
		require.NoError(t, v.Get(&paused))
		turnsAtPause = len(w.prompts)
		raiseDay(t, e, 10)
	}, 30*time.Minute)
	in := loopIn(5, false)
	in.PaidQueue, in.Spend = "paid", SpendLimits{DayCeiling: 1, ThrottleAt: 0.8}
	e.ExecuteWorkflow(LoopWorkflow, in)
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	require.Equal(t, 2, turnsAtPause, "the third turn waits: two turns spent the day's $1")
	require.Contains(t, paused.Paused, "the build's model cloud/m is metered")
	require.Contains(t, paused.Paused, "horizon set-ceiling loop-1 USD")
	require.Len(t, w.prompts, 3)
	require.InDelta(t, 1.5, day.spent, 1e-9)
}

// Near the day ceiling a loop's turn moves to its role's local model,
// where the role has one, off the paid queue.
func TestLoopThrottledToLocal(t *testing.T) {
	var models []string
	w := &loopWorld{turn: func(_ context.Context, k int) (activities.LoopActivationOutput, error) {
		return activities.LoopActivationOutput{Report: report(horizon.ReportSatisfied, "done")}, nil
	}}
	w.plan = &activities.LoopPlan{Agent: activities.AgentWorker, Model: "cloud/m", Paid: true, Local: "local/m", Dir: "/lane"}
	e := w.env(t)
	e.OnActivity(a.DaySpend, mock.Anything).Return(0.9, nil)
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == "LoopActivation" {
			var in activities.LoopActivationInput
			require.NoError(t, args.Get(&in))
			models = append(models, in.Plan.Model+" "+info.TaskQueue)
		}
	})
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "run-queue"})
	in := loopIn(3, false)
	in.PaidQueue, in.Spend = "paid", SpendLimits{DayCeiling: 1, ThrottleAt: 0.8}
	e.ExecuteWorkflow(LoopWorkflow, in)
	require.NoError(t, e.GetWorkflowError())
	require.Equal(t, []string{"local/m run-queue"}, models)
}

// A task's session goes through the spend authority: at the day ceiling
// with no local model it waits (phase paused, why in the status query)
// until the ceiling is raised; near it with a local model it runs there.
func TestTaskSpendAuthority(t *testing.T) {
	t.Run("at the ceiling: pauses until raised", func(t *testing.T) {
		w := &taskWorld{session: func(context.Context, activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
			return activities.TaskSessionOutput{SessionID: "ses_1", Usage: horizon.Usage{Cost: 0.3}}, nil
		}}
		e := w.env(t)
		e.OnActivity(a.DaySpend, mock.Anything).Return(1.0, nil)
		var paused horizon.RunState
		started := -1
		e.RegisterDelayedCallback(func() {
			paused = query(t, e)
			w.mu.Lock()
			_, ran := w.queues["TaskSession"]
			w.mu.Unlock()
			started = map[bool]int{false: 0, true: 1}[ran]
			raiseDay(t, e, 10)
		}, 30*time.Minute)
		e.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: activities.TaskInput{ID: "t1", Specialist: "sp", Prompt: "p", Repo: "/repo"},
			PaidQueue: "paid", Spend: SpendLimits{DayCeiling: 1, ThrottleAt: 0.8}})
		require.NoError(t, e.GetWorkflowError())
		require.Equal(t, horizon.PhasePaused, paused.Phase)
		require.Contains(t, paused.Reason, "horizon set-ceiling task-t1 USD")
		require.Zero(t, started, "no metered session at the ceiling")
		require.Equal(t, "paid", w.queues["TaskSession"])
	})
	t.Run("near the ceiling: the local model", func(t *testing.T) {
		var model string
		w := &taskWorld{session: func(_ context.Context, in activities.TaskSessionInput) (activities.TaskSessionOutput, error) {
			model = in.Plan.Model
			return activities.TaskSessionOutput{SessionID: "ses_1"}, nil
		}}
		w.plan = &activities.TaskPlan{Agent: "a", Model: "cloud/m", Paid: true, Local: "local/m", Dir: "/repo"}
		e := w.env(t)
		e.OnActivity(a.DaySpend, mock.Anything).Return(0.9, nil)
		e.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "run-queue"})
		e.ExecuteWorkflow(TaskWorkflow, TaskInput{Task: activities.TaskInput{ID: "t1", Specialist: "sp", Prompt: "p", Repo: "/repo"},
			PaidQueue: "paid", Spend: SpendLimits{DayCeiling: 1, ThrottleAt: 0.8}})
		require.NoError(t, e.GetWorkflowError())
		require.Equal(t, "local/m", model)
		require.Equal(t, "run-queue", w.queues["TaskSession"])
		require.Equal(t, "local/m", w.ends[0].Plan.Model, "the task records the model it ran on")
	})
}

// The authority's word on a worker's consults: on below the throttle
// point (with the day ceiling for the consult tool to weigh again), off
// past it, saying why.
func TestAuthorityConsults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		daySpent float64
		off      bool
	}{
		{"far from the day ceiling", 0.5, false},
		{"past the throttle point", 8.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &runStatus{state: horizon.RunState{RunID: "run-1", DayCeiling: 10, DaySpent: tc.daySpent}}
			c := authority{s: s, throttleAt: 0.8}.consults(0)
			require.Equal(t, 10.0, c.DayCeiling)
			require.Equal(t, 0.8, c.ThrottleAt)
			if !tc.off {
				require.Empty(t, c.Off)
				return
			}
			require.Contains(t, c.Off, "consults use a metered model and are off")
		})
	}
}
