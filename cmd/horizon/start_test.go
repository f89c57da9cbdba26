package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// Flags that the chosen mode would ignore are refused, not dropped.
func TestStartModeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		planned bool // run.planned
		want    string
	}{
		{"planned by default", nil, true, ""},
		{"planned with its flags", []string{"--autonomy", "semi", "--budget-time", "8h", "--budget-spend", "3"}, true, ""},
		{"single with its flags", []string{"--single", "--max-attempts", "5", "--kind", "open"}, true, ""},
		{"max attempts needs single", []string{"--max-attempts", "5"}, true, "--max-attempts is for a one-feature run: add --single"},
		{"kind needs single", []string{"--kind", "open"}, true, "--kind is for a one-feature run"},
		{"both need single", []string{"--kind", "open", "--max-attempts", "2"}, true, "--max-attempts and --kind are for a one-feature run"},
		{"autonomy needs a plan", []string{"--single", "--autonomy", "semi"}, true, "--autonomy is for a planned run: drop --single"},
		{"budget needs a plan", []string{"--single", "--budget-time", "1h", "--budget-spend", "2"}, true, "--budget-time and --budget-spend are for a planned run"},
		{"config says single", []string{"--autonomy", "semi"}, false, "run.planned is false"},
		{"config says single, max attempts fine", []string{"--max-attempts", "2"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseCmd(newStartCmd, append(tt.args, "a goal"))
			require.NoError(t, err)
			err = o.checkMode(tt.planned && !o.single)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, ExitUsage, exitCode(err))
		})
	}
}

func TestDescribeMode(t *testing.T) {
	require.Equal(t, "one feature, up to 3 attempts", describeMode(&core.Prepared{MaxAttempts: 3}))
	require.Equal(t, "planned, autonomy full, budget 72h, no spend limit",
		describeMode(&core.Prepared{Planned: true, BudgetTime: 72 * time.Hour}))
	require.Equal(t, "planned, autonomy semi, no time limit, $5.00",
		describeMode(&core.Prepared{Planned: true, Autonomy: horizon.AutonomySemi, BudgetSpend: 5}))
	require.Equal(t, "1h30m", core.ShortDuration(90*time.Minute))
	require.Equal(t, "45s", core.ShortDuration(45*time.Second))
}
