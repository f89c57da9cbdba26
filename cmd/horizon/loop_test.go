package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

func TestLoopFlags(t *testing.T) {
	testFlags(t, newLoopCmd, []flagCase[loopOptions]{
		{name: "defaults", args: []string{"--max", "5", "--", "make", "the", "tests", "pass"},
			want: loopOptions{prompt: "make the tests pass", role: "build", max: 5, compactAt: 0.80}},
		{name: "every flag", args: []string{"--agent", "Quick", "--max", "100", "--compact-at", "0.6", "--gate", "-d", "--json", "--", "g"},
			want: loopOptions{prompt: "g", role: "quick", max: 100, compactAt: 0.6, gate: true, detach: true, json: true}},
		{name: "max required", args: []string{"--", "g"}, err: "--max N is required"},
		{name: "max zero", args: []string{"--max", "0", "g"}, err: "--max 0 is not in 1..100"},
		{name: "max over", args: []string{"--max", "101", "g"}, err: "--max 101 is not in 1..100"},
		{name: "compact under", args: []string{"--max", "3", "--compact-at", "0.4", "g"}, err: "--compact-at 0.40 is not in 0.50..0.95"},
		{name: "compact over", args: []string{"--max", "3", "--compact-at", "0.96", "g"}, err: "not in 0.50..0.95"},
		{name: "runtime agent id refused", args: []string{"--agent", "horizon-worker", "--max", "3", "g"}, err: `--agent "horizon-worker" is not a role`},
		{name: "session role refused", args: []string{"--agent", "worker", "--max", "3", "g"}, err: "is not a role"},
		{name: "no prompt", args: []string{"--max", "3"}, err: "takes at least 1 argument"},
		{name: "blank prompt", args: []string{"--max", "3", "--", " "}, err: "the prompt is empty"},
	})
}

func TestLoopRefusalsAreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--agent", "horizon-worker", "--max", "3", "g"},
		{"--max", "0", "g"},
		{"--max", "3", "--compact-at", "1", "g"},
	} {
		_, err := parseCmd(newLoopCmd, args)
		require.Equal(t, ExitUsage, exitCode(err), "%v: %v", args, err)
	}
}

func TestPrintLoop(t *testing.T) {
	var b bytes.Buffer
	st := activities.LoopResult{Activations: 2, Compactions: 1, Report: &horizon.Report{Status: horizon.ReportContinue, Summary: "half done"}}
	printLoopProgress(&b, activities.LoopResult{Activations: 1}, st, 5)
	require.Equal(t, "session compacted (1 so far)\nactivation 2 of 5: continue · half done\n", b.String())

	b.Reset()
	printLoopEnd(&b, activities.LoopResult{Loop: "loop-1", Status: horizon.LoopSatisfied, Activations: 4, Compactions: 1, Model: "fake/m", Session: "ses_1",
		Branch: "horizon/loop-1", Commit: "0123456789abcdef"})
	require.Equal(t, "loop loop-1 satisfied after 4 activations, 1 compaction\n  model fake/m · session ses_1\n  branch horizon/loop-1 at 0123456789ab\n", b.String())
}

// A watched loop's end counts the advisor's notes, the others only when
// there are any, and says where their records are.
func TestLoopAdviceLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    horizon.AdviceCounts
		dir  string
		want string
	}{
		{"none", horizon.AdviceCounts{}, "", "advisor: 0 notes delivered"},
		{"one delivered", horizon.AdviceCounts{Delivered: 1}, "/h/runs/loop-1/transcripts", "advisor: 1 note delivered · records in /h/runs/loop-1/transcripts"},
		{"every verdict", horizon.AdviceCounts{Delivered: 2, Woke: 1, Downgraded: 1, Recorded: 1, Refuted: 2, Suppressed: 1, Failed: 1}, "",
			"advisor: 2 notes delivered (1 woke the session), 1 downgraded, 1 recorded only, 2 refuted, 1 suppressed, 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, loopAdvice(tc.n, tc.dir))
		})
	}
	var b bytes.Buffer
	printLoopEnd(&b, activities.LoopResult{Loop: "loop-1", Status: horizon.LoopSatisfied, Activations: 1, Model: "fake/m", Session: "ses_1",
		Notes: &horizon.AdviceCounts{Delivered: 1}, Advice: []activities.LoopAdvice{{Activation: 1, File: "/h/runs/loop-1/transcripts/loop-activation-1-advice.md"}}})
	require.Contains(t, b.String(), "\n  advisor: 1 note delivered · records in /h/runs/loop-1/transcripts\n")
}
