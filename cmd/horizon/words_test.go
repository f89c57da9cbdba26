package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
)

func TestAmountsShownAsTheyAre(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "$0.00"},
		{5, "$5.00"},
		{12.5, "$12.50"},
		{0.1 + 0.2, "$0.30"},
		{0.005, "$0.005"},
		{0.0001, "$0.0001"},
		{1.234, "$1.234"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, usd(tt.v), "%v", tt.v)
	}
	require.Equal(t, "no ceiling", ceiling(0))
	require.Equal(t, "ceiling $0.005", ceiling(0.005))
	require.Equal(t, "no daily ceiling", dayCeiling(0))
	require.Equal(t, "daily ceiling $20.00", dayCeiling(20))
}

func TestPlural(t *testing.T) {
	require.Equal(t, "0 features", plural(0, "feature"))
	require.Equal(t, "1 feature", plural(1, "feature"))
	require.Equal(t, "2 features", plural(2, "feature"))
	require.Equal(t, "one feature, up to 1 attempt", describeMode(&core.Prepared{MaxAttempts: 1}))
}

func TestNoRuns(t *testing.T) {
	require.Equal(t, "no runs yet; start one with `horizon start \"<goal>\"`", noRuns("", ""))
	require.Equal(t, "no running runs; `horizon list` shows all runs", noRuns("running", ""))
	require.Equal(t, "no runs of /src/app; `horizon list` shows all runs", noRuns("", "/src/app"))
	require.Equal(t, "no failed runs of /src/app; `horizon list` shows all runs", noRuns("failed", "/src/app"))
}

// An approved run's state still reads "waiting for approval" until it
// moves: the output does not repeat that.
func TestGoesOn(t *testing.T) {
	tests := []struct {
		s    horizon.RunState
		want string
	}{
		{horizon.RunState{Status: horizon.StatusRunning, Phase: horizon.PhaseApproval}, "it goes on"},
		{horizon.RunState{Status: horizon.StatusRunning, Phase: horizon.PhaseFeatures}, "it goes on (" + string(horizon.PhaseFeatures) + ")"},
		{horizon.RunState{Status: horizon.StatusRunning, Phase: horizon.PhaseApproval, Waiting: &horizon.Checkpoint{Kind: horizon.CheckpointMilestone, Subject: "m3"}}, "it now waits at milestone m3"},
		{horizon.RunState{Status: horizon.StatusCompleted}, "the run is completed"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, goesOn(&tt.s))
	}
}

// doctor exits like start would: 2 when the input is at fault, before 3
// for the environment.
func TestDoctorExit(t *testing.T) {
	ok := check{Name: "git", OK: true}
	env := check{Name: "opencode"}
	input := check{Name: "repo", input: true}
	require.Equal(t, ExitOK, doctorExit([]check{ok}))
	require.Equal(t, ExitEnvironment, doctorExit([]check{ok, env}))
	require.Equal(t, ExitUsage, doctorExit([]check{ok, input}))
	require.Equal(t, ExitUsage, doctorExit([]check{env, input}))
}

// An empty --model is an error, not "use the leaderboard".
func TestEmptyModel(t *testing.T) {
	for _, args := range [][]string{{"--model", "", "g"}, {"-m", " ", "g"}, {"--model=", "g"}} {
		_, err := parseCmd(newStartCmd, args)
		require.ErrorContains(t, err, "--model is empty")
		require.Equal(t, ExitUsage, exitCode(err))
		_, err = parseCmd(newPlanCmd, args)
		require.ErrorContains(t, err, "--model is empty")
	}
	o, err := parseCmd(newStartCmd, []string{"g"})
	require.NoError(t, err)
	require.Empty(t, o.model, "no --model: the leaderboard")
}

func TestBareRepository(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "app.git")
	require.NoError(t, exec.Command("git", "init", "-q", "--bare", bare).Run())
	_, err := repo.Inspect(bare)
	require.ErrorContains(t, err, "a bare repository")
	require.ErrorContains(t, err, "git clone "+bare)
	require.Equal(t, ExitUsage, exitCode(err))
	// horizon gate runs in any directory, but says a bare repository is
	// one, with nothing to run on.
	err = gateRun(context.Background(), &gateOptions{app: &app{repoDir: bare}})
	require.ErrorContains(t, err, "a bare repository")
	require.Equal(t, ExitUsage, exitCode(err))

	_, err = repo.Inspect(t.TempDir())
	require.ErrorContains(t, err, "not a git repository")
	require.NotContains(t, err.Error(), "bare")
}

// cancel refuses a run that has ended, like pause; the engine would accept
// the request and do nothing.
func TestCancelEndedRun(t *testing.T) {
	c := &mocks.Client{}
	c.On("DescribeWorkflowExecution", mock.Anything, "run-1", "").Return(&workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED},
	}, nil)
	c.On("Close").Return()
	var out bytes.Buffer
	a := &app{out: &out, connect: func(context.Context, bool) (client.Client, error) { return c, nil }}
	err := cancelRun(context.Background(), &cancelOptions{app: a, runID: "run-1"})
	require.Equal(t, ExitUsage, exitCode(err))
	require.EqualError(t, err, runEnded("cancel", "run-1").Error())
	require.Contains(t, err.Error(), "the run has ended")
	c.AssertNotCalled(t, "CancelWorkflow", mock.Anything, mock.Anything, mock.Anything)
	require.Empty(t, out.String())
}

// horizon models names the models OpenCode reaches, not only their count:
// they are what --model may take.
func TestModelsNamesWhatIsReachable(t *testing.T) {
	repo := gateRepo(t, goodGate)
	t.Setenv("HORIZON_HOME", t.TempDir())
	t.Setenv("HORIZON_TEMPORAL_ADDRESS", "")
	fakeOpenCode(t, "fake/fake-coder", "fake/other")
	code, out, errOut := runCLI(t, "models", "--repo", repo)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "2 models reachable")
	require.Contains(t, out, "reachable   fake/fake-coder, fake/other\n")
}
