package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/app/engine"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"usage", usagef("bad"), ExitUsage},
		{"config", fmt.Errorf("wrap: %w", &config.Error{Source: "f", Problems: []string{"x"}}), ExitUsage},
		{"joined config errors", errors.Join(&config.Error{Source: "a"}, &config.Error{Source: "b"}), ExitUsage},
		{"not git", fmt.Errorf("repo: %w", repo.ErrNotGit), ExitUsage},
		{"dirty", &repo.DirtyError{Root: "/r", Files: []string{"a"}}, ExitUsage},
		{"no gate", &gate.NoGateError{Dir: "/r"}, ExitUsage},
		{"supervisor runs otherwise", fmt.Errorf("start: %w", &core.SupervisorDiffersError{Repo: "/r", Running: "semi", Asked: "full"}), ExitUsage},
		{"tool missing", &tools.NotFoundError{Name: "opencode"}, ExitEnvironment},
		{"daemon running", &daemon.AlreadyRunningError{Home: "/h", PID: 1}, ExitEnvironment},
		{"unreachable", &engine.UnreachableError{Address: "x", Err: errors.New("no")}, ExitEnvironment},
		{"port", &engine.PortInUseError{What: "ui", Addr: "x", Err: errors.New("in use")}, ExitEnvironment},
		{"not running", daemon.ErrNotRunning, ExitEnvironment},
		{"chosen", exitErr{code: ExitInterrupted}, ExitInterrupted},
		{"other", errors.New("boom"), ExitRunEnded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, exitCode(tt.err))
		})
	}
}

// Every command explains itself: a short line, and either a long text or an
// example, so `--help` teaches.
func TestHelpTeaches(t *testing.T) {
	a := &app{}
	root := a.rootCmd()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		require.NotEmpty(t, c.Short, c.Name())
		require.True(t, c.Long != "" || c.Example != "" || len(c.Short) > 30, "%s needs more help text", c.Name())
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"start", "--help"})
	require.NoError(t, root.Execute())
	for _, want := range []string{"--model", "--max-attempts", "--detach", "--json", "horizon/<run>", "Exit:",
		"--single", "--autonomy", "full", "semi", "supervised", "--budget-time", "--budget-spend", "hard stop", "horizon approve RUN"} {
		require.Contains(t, out.String(), want)
	}
}

func TestStartFlagsBindConfig(t *testing.T) {
	t.Setenv("HORIZON_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a := &app{repoDir: t.TempDir()}
	cmd := newStartCmd(a, nil)
	require.NoError(t, cmd.ParseFlags([]string{"--model", "p/m", "--max-attempts", "7", "--allow-dirty"}))
	require.NoError(t, a.setup(cmd))
	require.Equal(t, "p/m", a.cfg.Models.Default)
	require.Equal(t, 7, a.cfg.Run.MaxAttempts)
	require.True(t, a.cfg.Run.AllowDirty)
	require.True(t, a.cfg.Run.Planned, "planned by default")
	require.Equal(t, horizon.AutonomyFull, a.cfg.Run.Autonomy)
	require.Equal(t, 72*time.Hour, a.cfg.Run.BudgetTime)

	a = &app{repoDir: t.TempDir()}
	cmd = newStartCmd(a, nil)
	require.NoError(t, cmd.ParseFlags([]string{"--autonomy", "Semi", "--budget-time", "8h", "--budget-spend", "2.5"}))
	require.NoError(t, a.setup(cmd))
	require.Equal(t, horizon.AutonomySemi, a.cfg.Run.Autonomy)
	require.Equal(t, 8*time.Hour, a.cfg.Run.BudgetTime)
	require.Equal(t, 2.5, a.cfg.Run.BudgetSpend)

	a = &app{repoDir: t.TempDir()}
	cmd = newStartCmd(a, nil)
	require.NoError(t, cmd.ParseFlags([]string{"--autonomy", "yolo"}))
	err := a.setup(cmd)
	require.ErrorContains(t, err, "--autonomy")
	require.ErrorContains(t, err, "full")
	require.Equal(t, ExitUsage, exitCode(err))
}

// This package's executable is the test binary: `<it> server` would run
// the tests again, not a daemon.
func init() {
	spawn = func(daemon.Paths, string, []string) (int, error) {
		return 0, errors.New("the CLI's unit tests start no daemon")
	}
}

// runCLI runs one command line in this process, in a home and config of
// its own, and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if os.Getenv("HORIZON_HOME") == "" {
		t.Setenv("HORIZON_HOME", t.TempDir())
	}
	if os.Getenv("XDG_CONFIG_HOME") == "" {
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	}
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Every way a command line can be wrong is bad usage (exit 2), and says
// what the command takes; nothing runs.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing argument", []string{"cancel"}, []string{"horizon cancel takes 1 argument, got none", "usage: horizon cancel RUN"}},
		{"missing second argument", []string{"set-ceiling", "run-1"}, []string{"takes 2 arguments", `got "run-1"`}},
		{"extra argument", []string{"status", "a", "b"}, []string{"takes at most 1 argument", `got "a" "b"`}},
		{"argument to a command that takes none", []string{"doctor", "now"}, []string{"horizon doctor takes no arguments"}},
		{"too many", []string{"unblock", "r", "f1", "f2", "--note", "x"}, []string{"takes 1 to 2 arguments"}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`, "horizon --help"}},
		{"misspelled command", []string{"stauts"}, []string{"did you mean", "status?"}},
		{"unknown flag", []string{"status", "--frobnicate"}, []string{"frobnicate"}},
		{"negative number", []string{"set-ceiling", "run-1", "-5"}, []string{"-5 is read as a flag", "can be negative", `"--"`}},
		{"negative number after --", []string{"set-ceiling", "run-1", "--", "-5"}, []string{`USD "-5"`}},
		{"negative fraction", []string{"set-ceiling", "run-1", "-0.5"}, []string{"-0.5 is read as a flag"}},
		{"a goal that starts with -", []string{"start", "-fix the parser"}, []string{"unknown shorthand flag", `goes after "--"`, "horizon start [flags] --"}},
		{"at least, not up to a million", []string{"task", "run"}, []string{"takes at least 2 arguments"}},
		{"absurd attempts", []string{"start", "--single", "--max-attempts", "99999999999", "goal"}, []string{"run.max_attempts", "at most 100"}},
		{"a goal too long", []string{"start", strings.Repeat("g", 100<<10)}, []string{"the goal is 102400 bytes", "a file of the repository"}},
		{"a queued goal too long", []string{"queue", "add", strings.Repeat("g", 100<<10)}, []string{"queue add: the goal is 102400 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			require.Equal(t, ExitUsage, code, errOut)
			for _, w := range tt.want {
				require.Contains(t, errOut, w)
			}
		})
	}
	code, out, _ := runCLI(t)
	require.Equal(t, ExitOK, code, "no command shows the help")
	require.Contains(t, out, "Start here:")
}

// NaN and Inf are refused where they are typed, naming the input, before
// anything is dialled or started.
func TestAmountsAreNumbers(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"--budget-spend", nil, []string{"start", "--budget-spend", "NaN", "goal"}, "--budget-spend"},
		{"--budget-spend Inf", nil, []string{"start", "--budget-spend", "Inf", "goal"}, "--budget-spend"},
		{"spend.ceiling", []string{"HORIZON_SPEND_CEILING", "NaN"}, []string{"start", "goal"}, "HORIZON_SPEND_CEILING"},
		{"spend.throttle_at", []string{"HORIZON_SPEND_THROTTLE_AT", "NaN"}, []string{"start", "goal"}, "HORIZON_SPEND_THROTTLE_AT"},
		{"set-ceiling", nil, []string{"set-ceiling", "run-1", "NaN"}, `USD "NaN"`},
		{"set-ceiling Inf", nil, []string{"set-ceiling", "run-1", "Inf"}, `USD "Inf"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != nil {
				t.Setenv(tt.env[0], tt.env[1])
			}
			code, _, errOut := runCLI(t, append([]string{"--repo", t.TempDir()}, tt.args...)...)
			require.Equal(t, ExitUsage, code, errOut)
			require.Contains(t, errOut, tt.want)
		})
	}
}

// A misspelled HORIZON_* variable is reported (it would be ignored), with
// the variable meant; the command goes on.
func TestUnknownEnvWarned(t *testing.T) {
	t.Setenv("HORIZON_TEMPORALPORT", "7299")
	code, out, errOut := runCLI(t, "version")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "horizon ")
	require.Contains(t, errOut, "horizon: warning: HORIZON_TEMPORALPORT is not a horizon setting and is ignored; did you mean HORIZON_TEMPORAL_PORT (temporal.port)?")
}
