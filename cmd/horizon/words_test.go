package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/workflows"
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
	require.Equal(t, "one feature, up to 1 attempt", describeMode(workflows.RunInput{MaxAttempts: 1}))
}

func TestPlainReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no accepted change after 3 attempts", "no accepted change after 3 attempts"},
		{"model fake/x is unknown (type: UnknownModel, retryable: false)", "model fake/x is unknown"},
		{"activity failed (type: AgentSession, retryable: true): session timed out (type: Timeout, retryable: false)", "activity failed: session timed out"},
		{"a note (type of change: big)", "a note (type of change: big)"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, plainReason(tt.in))
	}
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

func TestOrList(t *testing.T) {
	require.Equal(t, "", orList(nil))
	require.Equal(t, "a", orList([]string{"a"}))
	require.Equal(t, "a or b", orList([]string{"a", "b"}))
	require.Equal(t, "a, b or c", orList([]string{"a", "b", "c"}))
}

// With no model the leaderboard ranks, start says so once for every role
// without one, in a few lines ending with what to run.
func TestNoRoleModelsSaysItOnce(t *testing.T) {
	lb, err := activities.LoadLeaderboard("")
	require.NoError(t, err)
	for _, tt := range []struct {
		name      string
		connected []string
		want      []string
	}{
		{"a model the leaderboard does not rank", []string{"fake/fake-coder"}, []string{
			"no model for worker (build) and auditor (analyze):",
			"(fake/fake-coder).",
			"--model fake/fake-coder (or HORIZON_MODELS_DEFAULT=fake/fake-coder)",
			"opencode auth login"}},
		{"many", []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"}, []string{"(a/1, a/2, a/3, a/4, a/5 and 2 more (`horizon models`))", "--model a/1"}},
		{"none", nil, []string{"it reaches none", "opencode auth login"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := activities.ResolveRoles(lb, "", tt.connected)
			require.Error(t, err)
			msg := noRoleModels(err, tt.connected)
			for _, w := range tt.want {
				require.Contains(t, msg, w)
			}
			require.LessOrEqual(t, strings.Count(msg, "\n"), 2, "a few lines: %s", msg)
			require.Equal(t, 1, strings.Count(msg, "no model for"), "said once: %s", msg)
		})
	}
	require.Empty(t, noRoleModels(errors.New("models.file: unreadable"), nil), "another error is left as it is")
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
	require.Contains(t, out, "2 models reachable through OpenCode")
	require.Contains(t, out, "reachable   fake/fake-coder, fake/other\n")
}
