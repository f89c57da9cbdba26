package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// flagCase is one command line and the options it must bind, or the error
// it must end with (err, a substring).
type flagCase[O any] struct {
	name string
	args []string
	want O
	err  string
}

// parseCmd builds a command whose run function only records its options,
// and runs args through it: flags and arguments are parsed and checked,
// nothing is run.
func parseCmd[O any](newCmd func(*app, func(context.Context, *O) error) *cobra.Command, args []string) (*O, error) {
	var got *O
	cmd := newCmd(nil, func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return got, cmd.Execute()
}

func testFlags[O any](t *testing.T, newCmd func(*app, func(context.Context, *O) error) *cobra.Command, cases []flagCase[O]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCmd(newCmd, tt.args)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.Nil(t, got, "the command ran despite the error")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got, "the run function was not called")
			require.Equal(t, tt.want, *got)
		})
	}
}

func TestStartFlags(t *testing.T) {
	none := map[string]bool{}
	testFlags(t, newStartCmd, []flagCase[startOptions]{
		{name: "defaults", args: []string{"Add", "CSV", "export"},
			want: startOptions{goal: "Add CSV export", maxAttempts: 3, kind: defaultKind, set: none}},
		{name: "goal trimmed", args: []string{"  fix the test  "},
			want: startOptions{goal: "fix the test", maxAttempts: 3, kind: defaultKind, set: none}},
		{name: "one feature", args: []string{"--single", "--kind", "open", "--max-attempts", "5", "-m", "p/m", "-d", "--json", "--allow-dirty", "g"},
			want: startOptions{goal: "g", single: true, kind: "open", maxAttempts: 5, model: "p/m", detach: true, json: true, allowDirty: true,
				set: map[string]bool{"kind": true, "max-attempts": true}}},
		{name: "planned", args: []string{"--autonomy", "semi", "--budget-time", "8h", "--budget-spend", "2.5", "g"},
			want: startOptions{goal: "g", maxAttempts: 3, kind: defaultKind, autonomy: "semi", budgetTime: 8 * time.Hour, budgetSpend: 2.5,
				set: map[string]bool{"autonomy": true, "budget-time": true, "budget-spend": true}}},
		{name: "no goal", args: nil, err: "start needs a goal"},
		{name: "blank goal", args: []string{" "}, err: "start needs a goal"},
		{name: "bad duration", args: []string{"--budget-time", "soon", "g"}, err: "budget-time"},
	})
}

func TestStatusFlags(t *testing.T) {
	testFlags(t, newStatusCmd, []flagCase[statusOptions]{
		{name: "latest", args: nil, want: statusOptions{}},
		{name: "named, json", args: []string{"run-1", "--json"}, want: statusOptions{runID: "run-1", json: true}},
		{name: "two runs", args: []string{"a", "b"}, err: "takes at most 1 argument"},
	})
}

func TestListFlags(t *testing.T) {
	testFlags(t, newListCmd, []flagCase[listOptions]{
		{name: "defaults", args: nil, want: listOptions{limit: 50}},
		{name: "all flags", args: []string{"--status", "running", "--here", "--json", "--limit", "0"},
			want: listOptions{status: "running", here: true, json: true, limit: 0}},
		{name: "an argument", args: []string{"run-1"}, err: "takes no arguments"},
		{name: "a kind", args: []string{"--kind", "loop", "--status", "running"}, want: listOptions{limit: 50, kind: "loop", status: "running"}},
		{name: "an unknown kind", args: []string{"--kind", "runs"}, err: `--kind "runs": use run, loop or task`},
		{name: "tasks of a repository", args: []string{"--kind", "task", "--here"}, err: "not kept per repository"},
	})
}

func TestCancelFlags(t *testing.T) {
	testFlags(t, newCancelCmd, []flagCase[cancelOptions]{
		{name: "default wait", args: []string{"run-1"}, want: cancelOptions{runID: "run-1", wait: 30 * time.Second}},
		{name: "wait", args: []string{"run-1", "--wait", "5s"}, want: cancelOptions{runID: "run-1", wait: 5 * time.Second}},
		{name: "no run", args: nil, err: "takes 1 argument"},
	})
}

func TestResumeFlags(t *testing.T) {
	testFlags(t, newResumeCmd, []flagCase[resumeOptions]{
		{name: "every run", args: nil, want: resumeOptions{}},
		{name: "one run, followed", args: []string{"run-1", "-f", "--json"}, want: resumeOptions{runID: "run-1", follow: true, json: true}},
		{name: "two runs", args: []string{"a", "b"}, err: "takes at most 1 argument"},
	})
}

func TestUIFlags(t *testing.T) {
	testFlags(t, newUICmd, []flagCase[uiOptions]{
		{name: "all runs", args: nil, want: uiOptions{}},
		{name: "one run", args: []string{"run-1"}, want: uiOptions{runID: "run-1"}},
		{name: "two runs", args: []string{"a", "b"}, err: "takes at most 1 argument"},
	})
}

func TestDoctorFlags(t *testing.T) {
	testFlags(t, newDoctorCmd, []flagCase[doctorOptions]{
		{name: "text", args: nil, want: doctorOptions{}},
		{name: "json", args: []string{"--json"}, want: doctorOptions{json: true}},
		{name: "an argument", args: []string{"x"}, err: "takes no arguments"},
	})
}

func TestNoFlagCommands(t *testing.T) {
	testFlags(t, newVersionCmd, []flagCase[versionOptions]{
		{name: "version", args: nil, want: versionOptions{}},
		{name: "version with an argument", args: []string{"x"}, err: "takes no arguments"},
	})
	testFlags(t, newServerCmd, []flagCase[serverOptions]{
		{name: "server", args: nil, want: serverOptions{}},
		{name: "engine only", args: []string{"--engine-only", "--listen", "0.0.0.0"}, want: serverOptions{engineOnly: true}},
		{name: "server with an argument", args: []string{"x"}, err: "takes no arguments"},
	})
	testFlags(t, newWorkerCmd, []flagCase[workerOptions]{
		{name: "worker", args: nil, want: workerOptions{}},
		{name: "worker with its settings", args: []string{"--paid-poller=false", "--shared-dir", "/shared"}, want: workerOptions{}},
		{name: "worker with an argument", args: []string{"x"}, err: "takes no arguments"},
	})
	testFlags(t, newPauseCmd, []flagCase[pauseOptions]{
		{name: "pause", args: []string{"run-1"}, want: pauseOptions{runID: "run-1"}},
		{name: "pause without a run", args: nil, err: "takes 1 argument"},
	})
	testFlags(t, newHistoryCmd, []flagCase[historyOptions]{
		{name: "history", args: []string{"run-1"}, want: historyOptions{runID: "run-1"}},
		{name: "history without a run", args: nil, err: "takes 1 argument"},
	})
}

func TestStopFlags(t *testing.T) {
	testFlags(t, newStopCmd, []flagCase[stopOptions]{
		{name: "default timeout", args: nil, want: stopOptions{timeout: 60 * time.Second}},
		{name: "timeout", args: []string{"--timeout", "2s"}, want: stopOptions{timeout: 2 * time.Second}},
	})
}

func TestDemoFlags(t *testing.T) {
	testFlags(t, newDemoCmd, []flagCase[demoOptions]{
		{name: "defaults", args: nil, want: demoOptions{}},
		{name: "dir, keep", args: []string{"--dir", "/tmp/d", "--keep-model"}, want: demoOptions{dir: "/tmp/d", keep: true}},
	})
}

func TestGateFlags(t *testing.T) {
	testFlags(t, newGateCmd, []flagCase[gateOptions]{
		{name: "defaults", args: nil, want: gateOptions{}},
		{name: "json, quiet", args: []string{"--json", "-q"}, want: gateOptions{json: true, quiet: true}},
	})
}

func TestModelsFlags(t *testing.T) {
	testFlags(t, newModelsCmd, []flagCase[modelsOptions]{
		{name: "text", args: nil, want: modelsOptions{}},
		{name: "json", args: []string{"--json"}, want: modelsOptions{json: true}},
	})
}

func TestSetCeilingFlags(t *testing.T) {
	testFlags(t, newSetCeilingCmd, []flagCase[setCeilingOptions]{
		{name: "run ceiling", args: []string{"run-1", "12.50"}, want: setCeilingOptions{runID: "run-1", usd: 12.5}},
		{name: "none", args: []string{"run-1", "0"}, want: setCeilingOptions{runID: "run-1"}},
		{name: "daily", args: []string{"run-1", "5", "--day"}, want: setCeilingOptions{runID: "run-1", usd: 5, day: true}},
		{name: "not a number", args: []string{"run-1", "five"}, err: `USD "five"`},
		{name: "NaN", args: []string{"run-1", "NaN"}, err: `USD "NaN"`},
		{name: "Inf", args: []string{"run-1", "Inf"}, err: `USD "Inf"`},
		{name: "infinity", args: []string{"run-1", "+infinity"}, err: `USD "+infinity"`},
		{name: "negative", args: []string{"run-1", "--", "-1"}, err: `USD "-1"`},
		{name: "no amount", args: []string{"run-1"}, err: "takes 2 arguments"},
	})
}

func TestPlanFlags(t *testing.T) {
	testFlags(t, newPlanCmd, []flagCase[planOptions]{
		{name: "goal", args: []string{"Add", "CSV"}, want: planOptions{goal: "Add CSV"}},
		{name: "model, json", args: []string{"-m", "p/m", "--json", "g"}, want: planOptions{goal: "g", model: "p/m", json: true}},
		{name: "no goal", args: nil, err: "plan needs a goal"},
	})
}

func TestApproveFlags(t *testing.T) {
	testFlags(t, newApproveCmd, []flagCase[approveOptions]{
		{name: "whatever it waits at", args: []string{"run-1"}, want: approveOptions{runID: "run-1"}},
		{name: "subject, note, json", args: []string{"run-1", "--subject", "m2", "--note", "CSV first", "--json"},
			want: approveOptions{runID: "run-1", subject: "m2", note: "CSV first", json: true}},
		{name: "no run", args: nil, err: "takes 1 argument"},
	})
}

// unblock sends the feature it names, and refuses to go without a note.
func TestUnblockFlags(t *testing.T) {
	testFlags(t, newUnblockCmd, []flagCase[unblockOptions]{
		{name: "a feature", args: []string{"run-1", "f3", "--note", "key added"}, want: unblockOptions{runID: "run-1", feature: "f3", note: "key added"}},
		{name: "the run's one blocker", args: []string{"run-1", "--note", "key added"}, want: unblockOptions{runID: "run-1", note: "key added"}},
		{name: "no note", args: []string{"run-1", "f3"}, err: "--note is required"},
		{name: "blank note", args: []string{"run-1", "--note", " "}, err: "--note is required"},
		{name: "three arguments", args: []string{"run-1", "f3", "f4", "--note", "x"}, err: "takes 1 to 2 arguments"},
	})
	_, err := parseCmd(newUnblockCmd, []string{"run-1"})
	require.Equal(t, ExitUsage, exitCode(err))
}

func TestFakeModelFlags(t *testing.T) {
	testFlags(t, newFakeModelCmd, []flagCase[fakeModelOptions]{
		{name: "defaults", args: nil, want: fakeModelOptions{addr: "127.0.0.1:0"}},
		{name: "all flags", args: []string{"--script", "s.json", "--addr", "127.0.0.1:9", "--opencode-config", "oc.json"},
			want: fakeModelOptions{script: "s.json", addr: "127.0.0.1:9", configOut: "oc.json"}},
	})
}
