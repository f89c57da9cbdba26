package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
)

func TestSupervisorStartFlags(t *testing.T) {
	twenty := 20.0
	testFlags(t, newSupervisorStartCmd, []flagCase[supervisorStartOptions]{
		{name: "nothing said", args: nil, want: supervisorStartOptions{}},
		{name: "a day ceiling", args: []string{"--day-ceiling", "20", "--autonomy", "semi", "--json"},
			want: supervisorStartOptions{autonomy: "semi", json: true, ceiling: core.DayCeilingRequest{USD: &twenty}}},
		{name: "no ceiling", args: []string{"--no-ceiling"}, want: supervisorStartOptions{ceiling: core.DayCeilingRequest{Unlimited: true}}},
		{name: "both", args: []string{"--day-ceiling", "5", "--no-ceiling"}, err: "[day-ceiling no-ceiling] were all set"},
		{name: "not an amount", args: []string{"--day-ceiling", "lots"}, err: "day-ceiling"},
		{name: "an argument", args: []string{"x", "--no-ceiling"}, err: "takes no arguments"},
		{name: "one model for every role", args: []string{"--model", "fake/fake-coder", "--no-ceiling"}, want: supervisorStartOptions{ceiling: core.DayCeilingRequest{Unlimited: true}}},
		{name: "an empty model", args: []string{"--model", " ", "--no-ceiling"}, err: "--model is empty"},
	})
}

// Without --day-ceiling, --no-ceiling or spend.day_ceiling, a supervisor
// start is bad usage (exit 2) naming both flags; with any of them it says
// which ceiling the supervisor will use.
func TestSupervisorStartDayCeiling(t *testing.T) {
	tests := []struct {
		name       string
		req        core.DayCeilingRequest
		configured float64
		says       string
		err        []string
	}{
		{"flag", core.DayCeilingRequest{USD: amount(20)}, 0, "day ceiling: $20.00 per UTC day across all runs (--day-ceiling)", nil},
		{"configured", core.DayCeilingRequest{}, 8, "day ceiling: $8.00 per UTC day across all runs (spend.day_ceiling)", nil},
		{"flag over configured", core.DayCeilingRequest{USD: amount(2)}, 8, "day ceiling: $2.00 per UTC day across all runs (--day-ceiling)", nil},
		{"no ceiling", core.DayCeilingRequest{Unlimited: true}, 8, "day ceiling: none, spend is unlimited (--no-ceiling)", nil},
		{"nothing said", core.DayCeilingRequest{}, 0, "", []string{"--day-ceiling USD", "--no-ceiling", "spend.day_ceiling"}},
		{"zero", core.DayCeilingRequest{USD: amount(0)}, 0, "", []string{"--day-ceiling", "positive", "--no-ceiling"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{cfg: &config.Config{}}
			a.cfg.Spend.DayCeiling = tt.configured
			c, err := a.dayCeiling(tt.req)
			if tt.err != nil {
				require.Error(t, err)
				require.Equal(t, ExitUsage, exitCode(err))
				for _, w := range tt.err {
					require.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.says, describeDayCeiling(c))
		})
	}
}

// The refusal comes before anything else: no repository, engine or
// daemon is looked at.
func TestSupervisorStartRefusedWithoutCeiling(t *testing.T) {
	code, out, errOut := runCLI(t, "supervisor", "start", "--repo", t.TempDir())
	require.Equal(t, ExitUsage, code, out+errOut)
	require.Contains(t, errOut, "--day-ceiling USD")
	require.Contains(t, errOut, "--no-ceiling")
}

func amount(v float64) *float64 { return &v }

// supervisor status names what the decomposition in flight waits out, as
// `horizon status` names a run's outage.
func TestSupervisorStatusShowsOutage(t *testing.T) {
	since := time.Date(2026, 3, 1, 9, 30, 5, 0, time.Local)
	s := &horizon.SupervisorState{ID: "supervisor-ab12", Repo: "/src/app", Base: "main", Status: horizon.SupervisorRunning,
		Autonomy: horizon.AutonomyFull, Runs: []horizon.SupervisedRun{},
		Waiting: "the lead decomposes r1 (Provide upper) since 09:30:00 UTC", WaitingSince: since,
		Outage: &horizon.Outage{On: "model provider unreachable", Activity: "AgentSession", Feature: "decomposition of r1",
			Since: since, Tries: 3, LastError: "503 Service Unavailable"}}
	var b strings.Builder
	writeSupervisor(&b, &core.SupervisorView{Supervisor: s})
	require.Contains(t, b.String(), "\noutage     model provider unreachable (decomposition of r1) since 09:30:05 (3 tries): 503 Service Unavailable\n")

	s.Outage = nil
	b.Reset()
	writeSupervisor(&b, &core.SupervisorView{Supervisor: s})
	require.NotContains(t, b.String(), "outage")
}

// stop says stopped once the supervisor has ended, else exactly what it
// still waits for.
func TestSupervisorStopMessage(t *testing.T) {
	s := &horizon.SupervisorState{Repo: "/src/app", Status: horizon.SupervisorStopped}
	require.Contains(t, stopMessage(s), "supervisor of /src/app stopped; its runs go on")
	s = &horizon.SupervisorState{Repo: "/src/app", Status: horizon.SupervisorRunning,
		Waiting: "stopping: it waits for gate · merge of main to finish"}
	msg := stopMessage(s)
	require.Contains(t, msg, "supervisor of /src/app stopping: it waits for gate · merge of main to finish, then it ends")
	require.NotContains(t, msg, "stopped;")
	s.Waiting = ""
	require.Contains(t, stopMessage(s), "stopping: it finishes its current step")
}
