package console

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/golden"
)

// Without a terminal the console prints its first screen once as text:
// the runs, what needs you with the command for each, the first run's
// detail. It does nothing to any run.
func TestPrintPlain(t *testing.T) {
	f := newFake()
	var out bytes.Buffer
	require.NoError(t, Print(context.Background(), &out, f))
	golden.Assert(t, "plain.golden", out.String())
	require.Empty(t, f.calls)
}

func TestPrintNoRuns(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, Print(context.Background(), &out, &fake{}))
	require.Equal(t, "no runs yet; start one with `horizon start \"<goal>\"`\n", out.String())
}

// A run that cannot be read is an error naming it; nothing is printed
// half.
func TestPrintReadError(t *testing.T) {
	f := newFake()
	f.rows = append(f.rows, RunRow{ID: "run-20261201-090000-dd44dd", Status: core.EngineRunning})
	var out bytes.Buffer
	err := Print(context.Background(), &out, f)
	require.ErrorContains(t, err, `read run run-20261201-090000-dd44dd: no run "run-20261201-090000-dd44dd"`)
	require.Empty(t, out.String())
}

// The printed needs hold a supervisor's queued plan waiting for approval,
// with the command that approves it, with runs listed or none.
func TestPrintQueuedPlan(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    *fake
	}{
		{"beside runs", newFake()},
		{"no runs", &fake{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.sups = []horizon.SupervisorState{waitingSupervisor()}
			var out bytes.Buffer
			require.NoError(t, Print(context.Background(), &out, tt.f))
			require.Contains(t, out.String(), "approve  "+supervisorID+"  queued plan q3 waits for approval before it runs: Add rate limits to the export API\n"+
				"           horizon approve --repo /home/ann/src/reports q3\n")
			require.NotContains(t, out.String(), "q4")
		})
	}
}

// Loops and tasks show beside the runs: the running ones counted in the
// console's header, each with its status in the printed console.
func TestLoopsAndTasksBesideRuns(t *testing.T) {
	f := newFake()
	f.loops = []core.LoopRow{
		{LoopResult: core.LoopResult{Loop: "loop-20260303-100000-aaaaaa", Status: horizon.LoopRunning, Role: "build", Activations: 2, Cost: 0.01}},
		{LoopResult: core.LoopResult{Loop: "loop-20260302-100000-bbbbbb", Status: horizon.LoopSatisfied, Role: "build", Activations: 4}},
	}
	f.tasks = []core.TaskMeta{{ID: "20260303-110000-cccccc", Specialist: "explorer", Status: core.TaskRunning, Prompt: "where is the parser?"}}

	var out bytes.Buffer
	require.NoError(t, Print(context.Background(), &out, f))
	require.Regexp(t, `(?m)^loop-20260303-100000-aaaaaa\s+running\s+build\s+2\s+\$0\.0100$`, out.String())
	require.Regexp(t, `(?m)^loop-20260302-100000-bbbbbb\s+satisfied\s`, out.String())
	require.Regexp(t, `(?m)^20260303-110000-cccccc\s+running\s+explorer\s+where is the parser\?$`, out.String())

	require.Equal(t, "1 loop, 1 task running", goingOn(f.loops, f.tasks))
	require.Equal(t, "", goingOn(f.loops[1:], nil), "nothing running, nothing said")
}
