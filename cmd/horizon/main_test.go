package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/daemon"
	"github.com/horizon/horizon/internal/engine"
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
