package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

func TestSupervisorDefaults(t *testing.T) {
	isolate(t)
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, Supervisor{
		Roadmap:        ".horizon/roadmap.md",
		MaxActiveRuns:  1,
		DecomposeCron:  "0 2 * * *",
		DailyCron:      "0 7 * * *",
		DecomposeAhead: 2,
		StallAttempts:  6,
		CatchupWindow:  24 * time.Hour,
		Autonomy:       horizon.AutonomyFull,
		// A decomposition the lead has not finished in two hours is
		// cancelled and counts as failed.
		DecomposeTimeout: 2 * time.Hour,
	}, c.Supervisor)
	require.Contains(t, Keys(), "supervisor.catchup_window")
	require.Equal(t, "24h0m0s", c.Settings()["supervisor.catchup_window"])
	require.Contains(t, Keys(), "supervisor.decompose_timeout")
	require.Equal(t, "2h0m0s", c.Settings()["supervisor.decompose_timeout"])
}

// supervisor.decompose_timeout is set like any key: here by its
// environment variable.
func TestSupervisorDecomposeTimeoutFromEnv(t *testing.T) {
	isolate(t)
	t.Setenv("HORIZON_SUPERVISOR_DECOMPOSE_TIMEOUT", "45m")
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, 45*time.Minute, c.Supervisor.DecomposeTimeout)
}

// supervisor.autonomy follows run.autonomy unless set itself, at every
// layer.
func TestSupervisorAutonomyFollowsRun(t *testing.T) {
	isolate(t)
	t.Setenv("HORIZON_RUN_AUTONOMY", "supervised")
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, horizon.AutonomySupervised, c.Supervisor.Autonomy)

	t.Setenv("HORIZON_SUPERVISOR_AUTONOMY", " Semi ")
	c, err = Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, horizon.AutonomySemi, c.Supervisor.Autonomy)
	require.Equal(t, horizon.AutonomySupervised, c.Run.Autonomy, "the supervisor's level does not change run.autonomy")
}

// defaults < repo file < env < flags, for the supervisor keys.
func TestSupervisorKeys(t *testing.T) {
	isolate(t)
	repo := filepath.Join("testdata", "supervisor")

	c, err := Load(Options{UserFile: "-none-", Repo: repo})
	require.NoError(t, err)
	s := c.Supervisor
	require.Equal(t, "docs/ROADMAP.md", s.Roadmap, "the path is cleaned")
	require.Equal(t, 2, s.MaxActiveRuns)
	require.Equal(t, "30 1 * * MON-FRI", s.DecomposeCron)
	require.Equal(t, "0 6 * * *", s.DailyCron, "runs of spaces collapse")
	require.Equal(t, 3, s.DecomposeAhead)
	require.Equal(t, 8, s.StallAttempts)
	require.Equal(t, 6*time.Hour, s.CatchupWindow)
	require.Equal(t, horizon.AutonomySemi, s.Autonomy, "unset: run.autonomy from the same file")

	t.Setenv("HORIZON_SUPERVISOR_STALL_ATTEMPTS", "4")
	t.Setenv("HORIZON_SUPERVISOR_DAILY_CRON", "15 8 * * 1-5")
	t.Setenv("HORIZON_SUPERVISOR_ROADMAP", "plan/roadmap.md")
	fs := pflag.NewFlagSet("supervisor", pflag.ContinueOnError)
	fs.Int("max-active-runs", 1, "")
	fs.String("roadmap", "", "")
	keys := map[string]string{"max-active-runs": "supervisor.max_active_runs", "roadmap": "supervisor.roadmap"}
	require.NoError(t, fs.Parse([]string{"--max-active-runs", "5"}))
	c, err = Load(Options{UserFile: "-none-", Repo: repo, Flags: fs, FlagKeys: keys})
	require.NoError(t, err)
	s = c.Supervisor
	require.Equal(t, 4, s.StallAttempts)
	require.Equal(t, "15 8 * * 1-5", s.DailyCron)
	require.Equal(t, "plan/roadmap.md", s.Roadmap, "an unchanged flag does not override the env")
	require.Equal(t, 5, s.MaxActiveRuns)
	require.Equal(t, 3, s.DecomposeAhead, "a key only the file sets survives")
}

func TestSupervisorBadInput(t *testing.T) {
	tests := []struct {
		name string
		repo string
		env  map[string]string
		want []string
	}{
		{"bad cron in a file", "testdata/badsupervisor", nil, []string{"badsupervisor/.horizon/config.yaml", "supervisor.daily_cron", "field 2 (hour)", "25 is out of range 0-23"}},
		{"four fields", "", map[string]string{"HORIZON_SUPERVISOR_DECOMPOSE_CRON": "0 2 * *"}, []string{"HORIZON_SUPERVISOR_DECOMPOSE_CRON", "has 4 fields", "five"}},
		{"macro", "", map[string]string{"HORIZON_SUPERVISOR_DAILY_CRON": "@daily"}, []string{"supervisor.daily_cron", "has 1 fields"}},
		{"absolute roadmap", "", map[string]string{"HORIZON_SUPERVISOR_ROADMAP": "/etc/roadmap.md"}, []string{"HORIZON_SUPERVISOR_ROADMAP", "is absolute"}},
		{"roadmap outside the repo", "", map[string]string{"HORIZON_SUPERVISOR_ROADMAP": "docs/../../x.md"}, []string{"supervisor.roadmap", "not a file inside the repository"}},
		{"empty roadmap", "", map[string]string{"HORIZON_SUPERVISOR_ROADMAP": " "}, []string{"supervisor.roadmap", "relative to the repository root"}},
		{"no active runs", "", map[string]string{"HORIZON_SUPERVISOR_MAX_ACTIVE_RUNS": "0"}, []string{"HORIZON_SUPERVISOR_MAX_ACTIVE_RUNS", "at least 1"}},
		{"decompose nothing ahead", "", map[string]string{"HORIZON_SUPERVISOR_DECOMPOSE_AHEAD": "0"}, []string{"supervisor.decompose_ahead", "at least 1"}},
		{"stall at one attempt", "", map[string]string{"HORIZON_SUPERVISOR_STALL_ATTEMPTS": "1"}, []string{"supervisor.stall_attempts", "at least 2"}},
		{"short catch-up", "", map[string]string{"HORIZON_SUPERVISOR_CATCHUP_WINDOW": "1s"}, []string{"supervisor.catchup_window", "at least 10s"}},
		{"bad catch-up", "", map[string]string{"HORIZON_SUPERVISOR_CATCHUP_WINDOW": "a day"}, []string{"HORIZON_SUPERVISOR_CATCHUP_WINDOW", "supervisor.catchup_window"}},
		{"short decomposition", "", map[string]string{"HORIZON_SUPERVISOR_DECOMPOSE_TIMEOUT": "30s"}, []string{"HORIZON_SUPERVISOR_DECOMPOSE_TIMEOUT", "supervisor.decompose_timeout", "at least 1m0s"}},
		{"bad autonomy", "", map[string]string{"HORIZON_SUPERVISOR_AUTONOMY": "yolo"}, []string{"HORIZON_SUPERVISOR_AUTONOMY", "supervisor.autonomy", "run.autonomy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := Load(Options{UserFile: "-none-", Repo: tt.repo})
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestValidateCron(t *testing.T) {
	good := []string{
		"0 2 * * *", "*/15 * * * *", "0 0-23/2 * * *", "5,35 9-17 * * mon-fri", "0 7 1 JAN,jul *",
		"0 0 * * 7", "0 0 31 12 0", "59 23 * * SUN", "0 12 1-15/3 * *", "10/5 * * * *",
	}
	for _, s := range good {
		require.NoError(t, ValidateCron(s), s)
	}
	bad := map[string]string{
		"":                "has 0 fields",
		"0 2 * * * *":     "has 6 fields",
		"60 * * * *":      "60 is out of range 0-59",
		"* 24 * * *":      "24 is out of range 0-23",
		"* * 0 * *":       "0 is out of range 1-31",
		"* * * 13 *":      "13 is out of range 1-12",
		"* * * * 8":       "8 is out of range 0-7",
		"* * * foo *":     `"foo" is not a number 1-12 or a name JAN…DEC`,
		"*/0 * * * *":     `step "0" is not a positive number`,
		"*/x * * * *":     `step "x" is not a positive number`,
		"*/90 * * * *":    "step 90 is larger",
		"5-1 * * * *":     "range 5-1 runs backwards",
		"1,,2 * * * *":    "empty list entry",
		"- * * * *":       "missing value",
		"* * ? * *":       `"?" is not a number 1-31`,
		"0 2 * * mon-xyz": `"xyz" is not a number 0-7 or a name SUN…SAT`,
	}
	for s, want := range bad {
		err := ValidateCron(s)
		require.Error(t, err, s)
		require.Contains(t, err.Error(), want, s)
	}
}
