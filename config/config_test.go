package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// isolate clears every HORIZON_* variable a developer may have set.
func isolate(t *testing.T) {
	t.Helper()
	for _, k := range Keys() {
		t.Setenv(EnvName(k), "")
		// t.Setenv restores afterwards; an empty value still counts as set for
		// viper, so unset it for real.
		unsetenv(t, EnvName(k))
	}
	t.Setenv("HORIZON_HOME", t.TempDir())
}

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("model", "", "")
	fs.Int("max-attempts", 3, "")
	fs.String("autonomy", "", "")
	fs.Duration("budget-time", 0, "")
	fs.Float64("budget-spend", 0, "")
	require.NoError(t, fs.Parse(args))
	return fs
}

var flagKeys = map[string]string{
	"model": "models.default", "max-attempts": "run.max_attempts",
	"autonomy": "run.autonomy", "budget-time": "run.budget_time", "budget-spend": "run.budget_spend",
}

func TestPrecedence(t *testing.T) {
	isolate(t)
	user := filepath.Join("testdata", "user.yaml")
	repo := filepath.Join("testdata", "repo")

	// defaults < user file < repo file < env < flags, one layer at a time.
	c, err := Load(Options{UserFile: filepath.Join("testdata", "missing.yaml")})
	require.NoError(t, err)
	require.Equal(t, 7233, c.Temporal.Port)
	require.Equal(t, 8233, c.UI.Port)
	require.Equal(t, "default", c.Temporal.Namespace)
	require.Equal(t, "", c.Models.Default)
	require.True(t, c.Embedded())

	c, err = Load(Options{UserFile: user})
	require.NoError(t, err)
	require.Equal(t, 7001, c.Temporal.Port)
	require.Equal(t, "from-user", c.Temporal.Namespace)
	require.Equal(t, "user/model", c.Models.Default)

	c, err = Load(Options{UserFile: user, Repo: repo})
	require.NoError(t, err)
	require.Equal(t, 7002, c.Temporal.Port)
	require.Equal(t, 8002, c.UI.Port)
	require.Equal(t, "from-user", c.Temporal.Namespace, "a key only the user file sets survives the repo file")
	require.Equal(t, "repo/model", c.Models.Default)
	require.Equal(t, 5, c.Run.MaxAttempts)

	t.Setenv("HORIZON_TEMPORAL_PORT", "7003")
	t.Setenv("HORIZON_UI_PORT", "8003")
	t.Setenv("HORIZON_MODELS_DEFAULT", "env/model")
	t.Setenv("HORIZON_TEMPORAL_ADDRESS", "temporal.example:7233")
	c, err = Load(Options{UserFile: user, Repo: repo, Flags: flags(t), FlagKeys: flagKeys})
	require.NoError(t, err)
	require.Equal(t, 7003, c.Temporal.Port)
	require.Equal(t, 8003, c.UI.Port)
	require.Equal(t, "env/model", c.Models.Default)
	require.Equal(t, 5, c.Run.MaxAttempts, "an unchanged flag does not override the file")
	require.False(t, c.Embedded())
	require.Equal(t, "temporal.example:7233", c.FrontendAddress())
	require.Equal(t, "", c.UIURL())

	c, err = Load(Options{UserFile: user, Repo: repo, Flags: flags(t, "--model", "flag/model", "--max-attempts", "9"), FlagKeys: flagKeys})
	require.NoError(t, err)
	require.Equal(t, "flag/model", c.Models.Default)
	require.Equal(t, 9, c.Run.MaxAttempts)
}

// The planned-run keys go through every layer like the others: the repo
// file sets autonomy and budget, env and flags override them.
func TestRunPlanKeys(t *testing.T) {
	isolate(t)
	repo := filepath.Join("testdata", "repo")

	c, err := Load(Options{UserFile: "-none-", Repo: repo})
	require.NoError(t, err)
	require.Equal(t, horizon.AutonomySemi, c.Run.Autonomy, "case and spaces are forgiven")
	require.Equal(t, 24*time.Hour, c.Run.BudgetTime)
	require.Equal(t, 12.5, c.Run.BudgetSpend)
	require.True(t, c.Run.Planned, "a key the file does not set keeps its default")

	t.Setenv("HORIZON_RUN_PLANNED", "false")
	t.Setenv("HORIZON_RUN_AUTONOMY", "supervised")
	t.Setenv("HORIZON_RUN_BUDGET_TIME", "0")
	t.Setenv("HORIZON_RUN_RECOVERY_ESCALATION_INTERVAL", "3")
	t.Setenv("HORIZON_RUN_FEATURES_PER_HISTORY", "4")
	c, err = Load(Options{UserFile: "-none-", Repo: repo, Flags: flags(t), FlagKeys: flagKeys})
	require.NoError(t, err)
	require.False(t, c.Run.Planned)
	require.Equal(t, horizon.AutonomySupervised, c.Run.Autonomy)
	require.Zero(t, c.Run.BudgetTime, "0 means no time limit")
	require.Equal(t, 12.5, c.Run.BudgetSpend)
	require.Equal(t, 3, c.Run.RecoveryEscalationInterval)
	require.Equal(t, 4, c.Run.FeaturesPerHistory)
	require.Equal(t, time.Minute, c.Run.StallBackoff.Base, "run.stall_backoff defaults: 1m doubling to 1h, blocking after 6")
	require.Equal(t, time.Hour, c.Run.StallBackoff.Max)
	require.Equal(t, 6, c.Run.StallBlockAfter)

	c, err = Load(Options{UserFile: "-none-", Repo: repo, FlagKeys: flagKeys,
		Flags: flags(t, "--autonomy", "FULL", "--budget-time", "90m", "--budget-spend", "3")})
	require.NoError(t, err)
	require.Equal(t, horizon.AutonomyFull, c.Run.Autonomy)
	require.Equal(t, 90*time.Minute, c.Run.BudgetTime)
	require.Equal(t, 3.0, c.Run.BudgetSpend)
}

func TestDefaultsAndDerived(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	t.Setenv("HORIZON_HOME", home)
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, home, c.Home)
	require.Equal(t, "127.0.0.1:7233", c.FrontendAddress())
	require.Equal(t, "http://127.0.0.1:8233", c.UIURL())
	require.Equal(t, 45*time.Minute, c.Agent.SessionTimeout)
	require.Equal(t, "FULL", c.Engine.SQLiteSynchronous)
	require.GreaterOrEqual(t, c.Engine.RetentionDays, 30)
	require.True(t, c.Run.Planned)
	require.Equal(t, horizon.AutonomyFull, c.Run.Autonomy)
	require.Equal(t, 72*time.Hour, c.Run.BudgetTime)
	require.Zero(t, c.Run.BudgetSpend)
	require.Equal(t, 2, c.Run.RecoveryEscalationInterval)
	require.Zero(t, c.Run.FeaturesPerHistory)
	require.Equal(t, 400, c.Run.LineCeiling)
	require.Equal(t, 72*time.Hour, c.Run.KeepFailedLanes)
	require.Equal(t, []string{".horizon/", ".zecor/", ".fleet/"}, c.Gate.Protected, "the gate directories are protected by default")

	t.Setenv("HORIZON_RUN_KEEP_FAILED_LANES", "0")
	c, err = Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Zero(t, c.Run.KeepFailedLanes, "0 removes a failed run's lanes at its end")
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		repo string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"invalid yaml", "testdata/badyaml", nil, []string{"badyaml/.horizon/config.yaml", "not valid YAML"}},
		{"unknown key", "testdata/unknown", nil, []string{"unknown key(s) temporl.port", "known keys:"}},
		{"bad values name their file", "testdata/badvalue", nil, []string{"badvalue/.horizon/config.yaml", "session_timeout"}},
		{"port from env", "", map[string]string{"HORIZON_TEMPORAL_PORT": "70000"}, []string{"HORIZON_TEMPORAL_PORT", "70000 is not a TCP port"}},
		{"same ports", "", map[string]string{"HORIZON_UI_PORT": "7233"}, []string{"HORIZON_UI_PORT", "also temporal.port"}},
		{"bad model", "", map[string]string{"HORIZON_MODELS_DEFAULT": "gpt"}, []string{"HORIZON_MODELS_DEFAULT", "PROVIDER/MODEL"}},
		{"bad address", "", map[string]string{"HORIZON_TEMPORAL_ADDRESS": "nohostport"}, []string{"HORIZON_TEMPORAL_ADDRESS", "host:port"}},
		{"bad level", "", map[string]string{"HORIZON_LOG_LEVEL": "loud"}, []string{"log.level"}},
		{"half tls", "", map[string]string{"HORIZON_TEMPORAL_TLS_CERT": "/c.pem"}, []string{"temporal.tls.key"}},
		{"zero attempts", "", map[string]string{"HORIZON_RUN_MAX_ATTEMPTS": "0"}, []string{"run.max_attempts"}},
		{"bad autonomy in a file", "testdata/badrun", nil, []string{"badrun/.horizon/config.yaml", "run.autonomy", `"yolo"`, "full", "semi", "supervised"}},
		{"bad autonomy from env", "", map[string]string{"HORIZON_RUN_AUTONOMY": "auto"}, []string{"HORIZON_RUN_AUTONOMY", "run.autonomy", "full", "semi", "supervised"}},
		{"negative spend budget", "", map[string]string{"HORIZON_RUN_BUDGET_SPEND": "-1"}, []string{"HORIZON_RUN_BUDGET_SPEND", "run.budget_spend"}},
		{"negative time budget", "", map[string]string{"HORIZON_RUN_BUDGET_TIME": "-1h"}, []string{"run.budget_time"}},
		{"bad time budget", "", map[string]string{"HORIZON_RUN_BUDGET_TIME": "three days"}, []string{"HORIZON_RUN_BUDGET_TIME", "run.budget_time"}},
		{"zero escalation interval", "", map[string]string{"HORIZON_RUN_RECOVERY_ESCALATION_INTERVAL": "0"}, []string{"run.recovery_escalation_interval"}},
		{"negative lane keep", "", map[string]string{"HORIZON_RUN_KEEP_FAILED_LANES": "-1h"}, []string{"HORIZON_RUN_KEEP_FAILED_LANES", "run.keep_failed_lanes"}},
		{"negative features per history", "", map[string]string{"HORIZON_RUN_FEATURES_PER_HISTORY": "-2"}, []string{"run.features_per_history"}},
		{"negative line ceiling", "", map[string]string{"HORIZON_RUN_LINE_CEILING": "-1"}, []string{"run.line_ceiling"}},
		{"absolute protected path", "", map[string]string{"HORIZON_GATE_PROTECTED": "/etc/"}, []string{"gate.protected", `"/etc/"`, "relative to the repository root"}},
		{"zero stall backoff", "", map[string]string{"HORIZON_RUN_STALL_BACKOFF_BASE": "0s"}, []string{"run.stall_backoff.base", "1m"}},
		{"stall cap under its base", "", map[string]string{"HORIZON_RUN_STALL_BACKOFF_BASE": "10m", "HORIZON_RUN_STALL_BACKOFF_MAX": "5m"}, []string{"run.stall_backoff.max", "run.stall_backoff.base (10m0s)"}},
		{"notify slower than its limit", "", map[string]string{"HORIZON_NOTIFY_TIMEOUT": "10m"}, []string{"notify.timeout", "more than the 5m0s a notification may take"}},
		{"absurd attempts", "", map[string]string{"HORIZON_RUN_MAX_ATTEMPTS": "99999999999"}, []string{"run.max_attempts", "at most 100"}},
		{"bad agent env_allow glob", "", map[string]string{"HORIZON_AGENT_ENV_ALLOW": "MY_["}, []string{"agent.env_allow", `"MY_["`}},
		{"blank gate env_allow glob", "", map[string]string{"HORIZON_GATE_ENV_ALLOW": " "}, []string{"gate.env_allow"}},
		{"relative home", "", map[string]string{"HORIZON_HOME": "rel/home"}, []string{`"rel/home" is relative`, "absolute path"}},
		{"zero stall block", "", map[string]string{"HORIZON_RUN_STALL_BLOCK_AFTER": "0"}, []string{"run.stall_block_after"}},
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

func TestEnvName(t *testing.T) {
	require.Equal(t, "HORIZON_TEMPORAL_ADDRESS", EnvName("temporal.address"))
	require.Equal(t, "HORIZON_AGENT_OPENCODE_BIN", EnvName("agent.opencode-bin"))
}

func TestSettingsHidesSecrets(t *testing.T) {
	isolate(t)
	t.Setenv("HORIZON_TEMPORAL_API_KEY", "secret")
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	s := c.Settings()
	require.Equal(t, "(set)", s["temporal.api_key"])
	require.False(t, strings.Contains(strings.Join(func() []string {
		var out []string
		for _, v := range s {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}(), " "), "secret"))
}

// NaN and Inf are not amounts: refused, naming the input, wherever they
// come from (they would pass the range checks, then fail deep inside when
// a run's input is encoded).
func TestAmountsAreNumbers(t *testing.T) {
	keys := []string{"spend.ceiling", "spend.day_ceiling", "spend.throttle_at", "run.budget_spend"}
	for _, key := range keys {
		for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "infinity"} {
			t.Run(key+"="+v, func(t *testing.T) {
				isolate(t)
				t.Setenv(EnvName(key), v)
				_, err := Load(Options{UserFile: "-none-"})
				require.Error(t, err)
				require.ErrorContains(t, err, EnvName(key))
				require.ErrorContains(t, err, key)
			})
		}
	}
	t.Run("flag", func(t *testing.T) {
		isolate(t)
		_, err := Load(Options{UserFile: "-none-", Flags: flags(t, "--budget-spend", "NaN"), FlagKeys: flagKeys})
		require.ErrorContains(t, err, "--budget-spend")
		require.ErrorContains(t, err, "NaN")
	})
	t.Run("file", func(t *testing.T) {
		isolate(t)
		f := filepath.Join(t.TempDir(), "config.yaml")
		require.NoError(t, os.WriteFile(f, []byte("spend:\n  ceiling: .inf\n  throttle_at: .nan\n"), 0o600))
		_, err := Load(Options{UserFile: f})
		require.ErrorContains(t, err, f)
		require.ErrorContains(t, err, "spend.ceiling: +Inf")
		require.ErrorContains(t, err, "spend.throttle_at: NaN")
	})
}

// Fallback goes on with the defaults when Load fails, but keeps the home
// wherever it can still be read, so the daemon is found where it runs.
func TestFallback(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("home: /srv/horizon\ntemporl:\n  port: 1\n"), 0o600))
	broken := filepath.Join(dir, "broken.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("home: [\n"), 0o600))
	tests := []struct {
		name string
		file string
		env  string // HORIZON_HOME
		want string
	}{
		{"home from a file with an unknown key", bad, "", "/srv/horizon"},
		{"HORIZON_HOME wins", bad, "/h", "/h"},
		{"unreadable file: HORIZON_HOME", broken, "/h", "/h"},
		{"no file", "-none-", "/h", "/h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			unsetenv(t, "HORIZON_HOME")
			if tt.env != "" {
				t.Setenv("HORIZON_HOME", tt.env)
			}
			_, err := Load(Options{UserFile: tt.file})
			if tt.file == bad {
				require.Error(t, err, "Load refuses the file Fallback reads")
			}
			c := Fallback(Options{UserFile: tt.file})
			require.Equal(t, tt.want, c.Home)
			require.Equal(t, 7233, c.Temporal.Port, "everything else is the defaults")
			require.Equal(t, "info", c.Log.Level)
		})
	}
}
