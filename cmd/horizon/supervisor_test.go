package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/config"
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
