package horizon

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoopBrief(t *testing.T) {
	const goal = "Make ./test.sh pass."
	last := Report{Status: ReportContinue, Summary: "fixed add.sh; the test for negative numbers still fails"}
	gate := &GateRun{Verdict: "fail", ExitCode: 1, Command: "test.sh", Failing: []string{"test_negative"}, Tail: "FAIL test_negative\n"}
	for _, tc := range []struct {
		name  string
		brief string
	}{
		{"loop_first.txt", LoopBrief{Loop: "loop-1", Goal: goal, Activation: 1, Max: 5}.String()},
		{"loop_next.txt", LoopBrief{Loop: "loop-1", Goal: goal, Activation: 2, Max: 5, Last: &last}.String()},
		{"loop_checkpoint.txt", LoopCheckpoint("loop-1", goal, 3, 5, last, nil)},
		{"loop_gate.txt", LoopBrief{Loop: "loop-1", Goal: goal, Activation: 4, Max: 5, Last: &Report{Status: ReportSatisfied, Summary: "done"}, Gate: gate}.String()},
		{"loop_checkpoint_gate.txt", LoopCheckpoint("loop-1", goal, 4, 5, Report{Status: ReportSatisfied, Summary: "done"}, gate)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, tc.brief, "horizon-report")
			goldenFile(t, tc.name, tc.brief)
		})
	}
}

func TestLoopCheckpointCarriesGoalAndReport(t *testing.T) {
	b := LoopCheckpoint("loop-x", "GOAL-TEXT", 3, 5, Report{Status: ReportContinue, Summary: "SUMMARY-TEXT"}, nil)
	require.Contains(t, b, LoopMarker("loop-x", 3, 5))
	require.Contains(t, b, "GOAL-TEXT")
	require.Contains(t, b, "activation 3 of 5")
	require.Contains(t, b, "Last report (activation 2): continue")
	require.Contains(t, b, "SUMMARY-TEXT")
}

func TestCheckLoop(t *testing.T) {
	for _, tc := range []struct {
		max     int
		compact float64
		ok      bool
	}{
		{1, 0.8, true}, {100, 0.5, true}, {5, 0.95, true},
		{0, 0.8, false}, {101, 0.8, false}, {5, 0.49, false}, {5, 0.96, false},
		{5, math.NaN(), false}, {5, math.Inf(1), false},
	} {
		err := CheckLoop(tc.max, tc.compact)
		if tc.ok {
			require.NoError(t, err, "%d %.2f", tc.max, tc.compact)
		} else {
			require.ErrorIs(t, err, ErrLoopLimits, "%d %.2f", tc.max, tc.compact)
		}
	}
}

func TestParseLoopRole(t *testing.T) {
	for _, ok := range []string{"lead", "quick", "build", "explore", "analyze", "Research "} {
		_, err := ParseLoopRole(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"horizon-worker", "worker", "auditor", "explorer", ""} {
		_, err := ParseLoopRole(bad)
		require.ErrorIs(t, err, ErrLoopLimits, bad)
	}
}
