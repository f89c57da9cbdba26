package core

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

func usd(v float64) *float64 { return &v }

// A supervisor's day ceiling is what the person asked for at start, else
// spend.day_ceiling; with neither, and no explicit choice of unlimited
// spend, there is none to start with.
func TestChooseDayCeiling(t *testing.T) {
	tests := []struct {
		name       string
		req        DayCeilingRequest
		configured float64
		want       DayCeiling
		err        error
	}{
		{"an amount", DayCeilingRequest{USD: usd(20)}, 0, DayCeiling{USD: 20}, nil},
		{"an amount over the configured one", DayCeilingRequest{USD: usd(3)}, 50, DayCeiling{USD: 3}, nil},
		{"unlimited", DayCeilingRequest{Unlimited: true}, 0, DayCeiling{Unlimited: true}, nil},
		{"unlimited over the configured one", DayCeilingRequest{Unlimited: true}, 50, DayCeiling{Unlimited: true}, nil},
		{"configured", DayCeilingRequest{}, 12.5, DayCeiling{USD: 12.5, Configured: true}, nil},
		{"nothing said", DayCeilingRequest{}, 0, DayCeiling{}, ErrNoDayCeiling},
		{"both", DayCeilingRequest{USD: usd(5), Unlimited: true}, 0, DayCeiling{}, ErrDayCeilingConflict},
		{"zero", DayCeilingRequest{USD: usd(0)}, 50, DayCeiling{}, ErrDayCeilingAmount},
		{"negative", DayCeilingRequest{USD: usd(-1)}, 0, DayCeiling{}, ErrDayCeilingAmount},
		{"not a number", DayCeilingRequest{USD: usd(math.NaN())}, 0, DayCeiling{}, ErrDayCeilingAmount},
		{"infinite", DayCeilingRequest{USD: usd(math.Inf(1))}, 0, DayCeiling{}, ErrDayCeilingAmount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseDayCeiling(tt.req, tt.configured)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				require.False(t, got.Decided())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.True(t, got.Decided())
		})
	}
}

// startClient records what Start asks of the engine.
type startClient struct {
	client.Client
	started   []workflows.SupervisorInput
	schedules []client.ScheduleOptions
	// running, when set, is the supervisor that already runs.
	running *horizon.SupervisorState
}

func (c *startClient) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if c.running == nil {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}}, nil
}

func (c *startClient) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	p, err := converter.GetDefaultDataConverter().ToPayloads(c.running)
	if err != nil {
		return nil, err
	}
	return client.NewValue(p), nil
}

func (c *startClient) ExecuteWorkflow(_ context.Context, _ client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	c.started = append(c.started, args[0].(workflows.SupervisorInput))
	return nil, nil
}

func (c *startClient) ScheduleClient() client.ScheduleClient { return startSchedules{c: c} }

type startSchedules struct {
	client.ScheduleClient
	c *startClient
}

func (s startSchedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	s.c.schedules = append(s.c.schedules, o)
	return nil, nil
}

// Start is where the rule holds, whichever surface calls it: an undecided
// ceiling starts nothing, and a decided one is what the supervisor's runs
// and its daily pass observe, whatever the template or schedules said.
func TestSupervisorStartNeedsADecidedDayCeiling(t *testing.T) {
	in := workflows.SupervisorInput{ID: "sup", Repo: "/src/app", Run: workflows.RunInput{DayCeiling: 99}}
	sched := Schedules{DecomposeCron: "0 2 * * *", DailyCron: "0 7 * * *", DayCeiling: 99}

	c := &startClient{}
	err := Supervisors{Client: c}.Start(context.Background(), in, sched, DayCeiling{})
	require.ErrorIs(t, err, ErrNoDayCeiling)
	require.Empty(t, c.started, "an undecided ceiling started a supervisor")
	require.Empty(t, c.schedules)

	for _, tt := range []struct {
		name    string
		ceiling DayCeiling
		want    float64
	}{
		{"an amount", DayCeiling{USD: 7}, 7},
		{"unlimited", DayCeiling{Unlimited: true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &startClient{}
			require.NoError(t, Supervisors{Client: c}.Start(context.Background(), in, sched, tt.ceiling))
			require.Len(t, c.started, 1)
			require.Equal(t, tt.want, c.started[0].Run.DayCeiling)
			require.Len(t, c.schedules, 2)
			daily := c.schedules[1].Action.(*client.ScheduleWorkflowAction).Args[0].(workflows.DailyPassInput)
			require.Equal(t, tt.want, daily.DayCeiling)
		})
	}

	// One that runs is left as it is: the same autonomy again is fine,
	// another is refused, not ignored.
	semi := in
	semi.Autonomy = horizon.AutonomySemi
	c = &startClient{running: &horizon.SupervisorState{ID: "sup", Repo: "/src/app", Status: horizon.SupervisorRunning, Autonomy: horizon.AutonomySemi}}
	require.NoError(t, Supervisors{Client: c}.Start(context.Background(), semi, sched, DayCeiling{USD: 7}))
	full := in
	full.Autonomy = horizon.AutonomyFull
	c.started = nil
	err = Supervisors{Client: c}.Start(context.Background(), full, sched, DayCeiling{USD: 7})
	var differs *SupervisorDiffersError
	require.ErrorAs(t, err, &differs)
	require.ErrorContains(t, err, "already runs for /src/app with autonomy semi")
	require.Empty(t, c.started)
}
