package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// loopWorld mocks a loop's activities: turn answers activation k, gate the
// gate after a satisfied one.
type loopWorld struct {
	mu       sync.Mutex
	prompts  []string // each activation's prompt
	inputs   []activities.LoopActivationInput
	compacts []int // the activations a compaction preceded
	ends     []activities.LoopEnd
	turn     func(ctx context.Context, k int) (activities.LoopActivationOutput, error)
	gate     func(k int) horizon.GateRun
	// plan, when set, is PrepareLoop's answer.
	plan *activities.LoopPlan
	// A watched activation says it runs on worker A's host queue
	// (SignalSessionHost, as Activities.tellHost does) unless untold;
	// each takes after on the workflow's clock.
	untold bool
	after  time.Duration
}

// loopHost is the worker a loop's watched activation says it runs on.
var loopHost = activities.SessionHost{Queue: hostA, Worker: "horizon@a:1"}

func (w *loopWorld) env(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.RegisterWorkflowWithOptions(LoopWorkflow, workflow.RegisterOptions{Name: LoopWorkflowName})
	e.RegisterActivity(&activities.Activities{})
	e.OnActivity(a.PrepareLoop, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.LoopInput) (activities.LoopPlan, error) {
		if w.plan != nil {
			return *w.plan, nil
		}
		return activities.LoopPlan{Agent: activities.AgentWorker, Model: "fake/m", Dir: "/lanes/_loops/" + in.ID, Branch: activities.LoopBranch(in.ID), Base: in.BaseCommit, ContextLimit: 100000}, nil
	})
	e.OnActivity(a.LoopActivation, mock.Anything, mock.Anything).After(w.after).Return(func(ctx context.Context, in activities.LoopActivationInput) (activities.LoopActivationOutput, error) {
		if in.Watched && !w.untold {
			h := loopHost
			h.Feature, h.Attempt, h.Try = activities.LoopFeature, in.Activation, activity.GetInfo(ctx).Attempt
			e.SignalWorkflow(SignalSessionHost, h)
		}
		w.mu.Lock()
		w.prompts = append(w.prompts, in.Prompt)
		w.inputs = append(w.inputs, in)
		w.mu.Unlock()
		require.True(t, strings.HasPrefix(in.Prompt, horizon.LoopMarker(in.Loop.ID, in.Activation, in.Loop.Max)), in.Prompt)
		if in.Activation > 1 {
			require.Equal(t, "ses_1", in.SessionID, "every activation is the same session")
		}
		out, err := w.turn(ctx, in.Activation)
		out.SessionID = "ses_1"
		return out, err
	})
	e.OnActivity(a.CompactLoop, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.LoopCompactInput) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		require.Equal(t, "ses_1", in.SessionID)
		w.compacts = append(w.compacts, in.Activation)
		return nil
	})
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
		require.Equal(t, "loop", in.Feature)
		return w.gate(in.Attempt), nil
	})
	e.OnActivity(a.FinishLoop, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.LoopEnd) (activities.LoopResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.ends = append(w.ends, in)
		return activities.LoopResult{Loop: in.Loop.ID, Status: in.Status, Session: in.SessionID, Model: in.Plan.Model, Role: in.Loop.Role,
			Activations: in.Activations, Compactions: in.Compactions, Branch: in.Plan.Branch, Cost: in.Cost, Report: in.Report, Error: in.Error,
			Advice: in.Advice, Notes: in.Notes}, nil
	})
	return e
}

func loopIn(max int, gate bool) LoopWorkflowInput {
	return LoopWorkflowInput{Loop: activities.LoopInput{ID: "loop-1", Prompt: "GOAL: make it pass", Repo: "/repo", BaseCommit: "abc",
		Role: "build", Max: max, CompactAt: 0.6, Gate: gate}}
}

func report(st horizon.ReportStatus, summary string) *horizon.Report {
	return &horizon.Report{Status: st, Summary: summary}
}

func TestLoopWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		max         int
		gate        bool
		turn        func(k int) activities.LoopActivationOutput
		gateRun     func(k int) horizon.GateRun
		status      horizon.LoopStatus
		activations int
		compactions []int
		check       func(t *testing.T, w *loopWorld, res activities.LoopResult)
	}{
		{
			name: "compacted once, satisfied at 4", max: 5,
			turn: func(k int) activities.LoopActivationOutput {
				out := activities.LoopActivationOutput{Context: 1000, Report: report(horizon.ReportContinue, "step "+string(rune('0'+k)))}
				switch k {
				case 2:
					out.Context = 60000 // 60 % of the window: at the threshold
				case 4:
					out.Report = report(horizon.ReportSatisfied, "done")
				}
				return out
			},
			status: horizon.LoopSatisfied, activations: 4, compactions: []int{3},
			check: func(t *testing.T, w *loopWorld, _ activities.LoopResult) {
				require.Contains(t, w.prompts[0], "GOAL: make it pass")
				require.NotContains(t, w.prompts[1], "Checkpoint")
				cp := w.prompts[2]
				require.Contains(t, cp, "Checkpoint")
				require.Contains(t, cp, "GOAL: make it pass")
				require.Contains(t, cp, "activation 3 of 5")
				require.Contains(t, cp, "Last report (activation 2): continue")
				require.Contains(t, cp, "step 2")
				require.NotContains(t, w.prompts[3], "Checkpoint")
			},
		},
		{
			name: "always continue: limit reached", max: 2,
			turn: func(int) activities.LoopActivationOutput {
				return activities.LoopActivationOutput{Report: report(horizon.ReportContinue, "more")}
			},
			status: horizon.LoopLimitReached, activations: 2,
		},
		{
			name: "no report: protocol error", max: 5,
			turn: func(int) activities.LoopActivationOutput {
				return activities.LoopActivationOutput{ProtocolError: "no ```horizon-report block in the final message"}
			},
			status: horizon.LoopProtocolError, activations: 1,
			check: func(t *testing.T, _ *loopWorld, res activities.LoopResult) {
				require.Contains(t, res.Error, "activation 1: no ```horizon-report")
			},
		},
		{
			name: "blocked", max: 5,
			turn: func(int) activities.LoopActivationOutput {
				return activities.LoopActivationOutput{Report: &horizon.Report{Status: horizon.ReportBlocked, Blocker: &horizon.Blocker{Type: "credential", Evidence: "401"}}}
			},
			status: horizon.LoopBlocked, activations: 1,
		},
		{
			name: "gate refuses the first satisfied, its evidence starts the next", max: 5, gate: true,
			turn: func(int) activities.LoopActivationOutput {
				return activities.LoopActivationOutput{Report: report(horizon.ReportSatisfied, "done")}
			},
			gateRun: func(k int) horizon.GateRun {
				if k == 1 {
					return horizon.GateRun{Verdict: "fail", ExitCode: 1, Failing: []string{"test_add"}, Tail: "FAIL test_add"}
				}
				return horizon.GateRun{Verdict: "pass"}
			},
			status: horizon.LoopSatisfied, activations: 2,
			check: func(t *testing.T, w *loopWorld, _ activities.LoopResult) {
				require.Contains(t, w.prompts[1], "gate did not pass")
				require.Contains(t, w.prompts[1], "FAIL test_add")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &loopWorld{
				turn: func(_ context.Context, k int) (activities.LoopActivationOutput, error) { return tc.turn(k), nil },
				gate: tc.gateRun,
			}
			e := w.env(t)
			e.ExecuteWorkflow(LoopWorkflowName, loopIn(tc.max, tc.gate))
			require.True(t, e.IsWorkflowCompleted())
			require.NoError(t, e.GetWorkflowError())
			var res activities.LoopResult
			require.NoError(t, e.GetWorkflowResult(&res))
			require.Equal(t, tc.status, res.Status)
			require.Equal(t, tc.activations, res.Activations)
			require.Equal(t, len(tc.compactions), res.Compactions)
			require.Equal(t, tc.compactions, w.compacts)
			require.Equal(t, "ses_1", res.Session)
			require.Equal(t, "fake/m", res.Model)
			require.Equal(t, "horizon/loop-1", res.Branch)
			require.Len(t, w.prompts, tc.activations)
			require.Len(t, w.ends, 1, "the end is recorded once")
			if tc.check != nil {
				tc.check(t, w, res)
			}
		})
	}
}

func TestLoopWorkflowEnds(t *testing.T) {
	t.Run("session fails: failed, the end recorded", func(t *testing.T) {
		w := &loopWorld{turn: func(context.Context, int) (activities.LoopActivationOutput, error) {
			return activities.LoopActivationOutput{}, temporal.NewNonRetryableApplicationError("context overflow", activities.ErrTypeSessionFailed, nil)
		}}
		e := w.env(t)
		e.ExecuteWorkflow(LoopWorkflowName, loopIn(3, false))
		var app *temporal.ApplicationError
		require.ErrorAs(t, e.GetWorkflowError(), &app)
		require.Equal(t, FailureLoopFailed, app.Type())
		var res activities.LoopResult
		require.NoError(t, app.Details(&res))
		require.Equal(t, horizon.LoopFailed, res.Status)
		require.Len(t, w.ends, 1)
		require.Contains(t, w.ends[0].Error, "context overflow")
	})

	t.Run("cancelled: the activation is cancelled, the end still recorded", func(t *testing.T) {
		w := &loopWorld{turn: func(ctx context.Context, k int) (activities.LoopActivationOutput, error) {
			if k == 1 {
				return activities.LoopActivationOutput{Report: report(horizon.ReportContinue, "more")}, nil
			}
			for ctx.Err() == nil {
				activity.RecordHeartbeat(ctx, activities.LoopHeartbeat{SessionHeartbeat: activities.SessionHeartbeat{SessionID: "ses_1"}, Activation: k, Prompted: true})
				time.Sleep(10 * time.Millisecond)
			}
			return activities.LoopActivationOutput{}, ctx.Err()
		}}
		e := w.env(t)
		e.RegisterDelayedCallback(func() {
			var st activities.LoopResult
			v, err := e.QueryWorkflow(QueryLoop)
			require.NoError(t, err)
			require.NoError(t, v.Get(&st))
			require.Equal(t, horizon.LoopRunning, st.Status)
			require.Equal(t, 1, st.Activations)
			e.CancelWorkflow()
		}, time.Second)
		e.ExecuteWorkflow(LoopWorkflowName, loopIn(3, false))
		require.True(t, temporal.IsCanceledError(e.GetWorkflowError()), "%v", e.GetWorkflowError())
		require.Len(t, w.ends, 1)
		require.Equal(t, horizon.LoopCancelled, w.ends[0].Status)
		require.Equal(t, 1, w.ends[0].Activations)
	})
}
