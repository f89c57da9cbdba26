package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// EnvPrefix prefixes every environment variable horizon reads.
const EnvPrefix = "HORIZON"

// RepoFile is the repository's config file, relative to the repo root.
const RepoFile = ".horizon/config.yaml"

// DefaultRoadmap is supervisor.roadmap's default, relative to the repo root.
const DefaultRoadmap = ".horizon/roadmap.md"

// NotifyDeliveryLimit is the longest one notification's delivery may
// take, every attempt and backoff included: the engine gives the delivery
// activity this long and would cut a longer one short.
const NotifyDeliveryLimit = 5 * time.Minute

// NotifyFirstBackoff is the wait before a notification's second attempt;
// each next wait doubles, up to 30 s.
const NotifyFirstBackoff = time.Second

// NotifyMaxDuration is the longest one delivery of timeout per attempt
// and attempts attempts can take.
func NotifyMaxDuration(timeout time.Duration, attempts int) time.Duration {
	total, wait := time.Duration(0), NotifyFirstBackoff
	for i := 0; i < attempts; i++ {
		if i > 0 {
			total += wait
			wait = min(wait*2, 30*time.Second)
		}
		total += timeout
	}
	return total
}

// MaxAttemptsLimit bounds run.max_attempts (and --max-attempts): past it a
// one-feature run is a failure loop, not a retry policy.
const MaxAttemptsLimit = 100

// MinCatchupWindow is the shortest supervisor.catchup_window: Temporal
// Schedules refuse a shorter one.
const MinCatchupWindow = 10 * time.Second

// Options says where Load looks.
type Options struct {
	// Repo is the repository whose .horizon/config.yaml applies ("" for none).
	Repo string
	// UserFile overrides the user's config path (tests); "" means
	// $XDG_CONFIG_HOME/horizon/config.yaml or ~/.config/horizon/config.yaml.
	UserFile string
	// Flags are bound by key: FlagKeys maps a flag name to a config key.
	// Names the flag set does not define are skipped, so one map can serve
	// every command.
	Flags    *pflag.FlagSet
	FlagKeys map[string]string
}

func defaults() map[string]any {
	return map[string]any{
		"home":                                     "",
		"temporal.address":                         "",
		"temporal.namespace":                       "default",
		"temporal.port":                            7233,
		"temporal.task_queue":                      "horizon",
		"temporal.api_key":                         "",
		"temporal.api_key_file":                    "",
		"temporal.tls.cert":                        "",
		"temporal.tls.key":                         "",
		"temporal.tls.ca":                          "",
		"temporal.tls.server_name":                 "",
		"ui.enabled":                               true,
		"ui.port":                                  8233,
		"web.port":                                 8234,
		"web.public_reads":                         false,
		"engine.sqlite_synchronous":                "FULL",
		"engine.retention_days":                    30,
		"engine.database":                          "sqlite",
		"engine.postgres.dsn":                      "",
		"engine.postgres.max_conns":                20,
		"temporal.listen":                          "",
		"models.default":                           "",
		"models.file":                              "",
		"agent.opencode_bin":                       "",
		"agent.claude_bin":                         "",
		"agent.codex_bin":                          "",
		"agent.opencode_config":                    "",
		"agent.session_timeout":                    "45m",
		"agent.heartbeat_timeout":                  "30s",
		"run.max_attempts":                         3,
		"run.allow_dirty":                          false,
		"run.planned":                              true,
		"run.autonomy":                             string(horizon.DefaultAutonomy),
		"run.budget_time":                          "72h",
		"run.budget_spend":                         0.0,
		"run.recovery_escalation_interval":         2,
		"run.features_per_history":                 0,
		"run.line_ceiling":                         400,
		"run.keep_failed_lanes":                    "72h",
		"run.stall_backoff.base":                   "1m",
		"run.stall_backoff.max":                    "1h",
		"run.stall_block_after":                    6,
		"run.auto_approve_milestones":              false,
		"run.decision_confidence_threshold":        0.8,
		"gate.timeout":                             "10m",
		"gate.env_allow":                           []string{},
		"gate.allow_env":                           []string{},
		"agent.env_allow":                          []string{},
		"gate.protected":                           horizon.DefaultGateProtected,
		"gate.test_command":                        "",
		"gate.lint_command":                        "",
		"log.level":                                "info",
		"worker.paid_poller":                       true,
		"worker.shared_dir":                        "",
		"spend.ceiling":                            0.0,
		"spend.day_ceiling":                        0.0,
		"spend.throttle_at":                        0.8,
		"reader.base_url":                          "",
		"reader.model":                             "",
		"reader.api_key":                           "",
		"agent.ast_grep_bin":                       "",
		"advisor.enabled":                          false,
		"advisor.watchdog_model":                   "",
		"advisor.consult_model":                    "",
		"advisor.review_mode":                      ReviewStep,
		"advisor.review_interval":                  1,
		"advisor.max_tool_steps":                   3,
		"advisor.max_notes_per_update":             3,
		"advisor.immune_turns":                     3,
		"advisor.timeout":                          "60s",
		"advisor.require_evidence":                 true,
		"advisor.consult.enabled":                  true,
		"advisor.consult.max_tokens":               1024,
		"advisor.consult.include_context_messages": 12,
		"advisor.delivery.blocker":                 DeliverWake,
		"advisor.delivery.concern":                 DeliverMessage,
		"advisor.delivery.nit":                     DeliverMessage,
		"advisor.system_prompt":                    "",
		"advisor.tools":                            []string{"read", "grep", "glob"},
		"specialists.trust_project":                false,
		"supervisor.roadmap":                       DefaultRoadmap,
		"supervisor.max_active_runs":               1,
		"supervisor.decompose_cron":                "0 2 * * *",
		"supervisor.daily_cron":                    "0 7 * * *",
		"supervisor.decompose_ahead":               2,
		"supervisor.stall_attempts":                6,
		"supervisor.catchup_window":                "24h",
		"supervisor.decompose_timeout":             "2h",
		"supervisor.autonomy":                      "",
		"notify.webhook":                           "",
		"notify.webhook_headers":                   []string{},
		"notify.command":                           "",
		"notify.timeout":                           "10s",
		"notify.attempts":                          3,
		"notify.outage_after":                      "15m",
		"notify.events":                            []string{"all"},
		"service.name":                             "horizon",
		"service.env":                              []string{"PATH"},
	}
}

// Keys lists every known key, sorted.
func Keys() []string {
	d := defaults()
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// EnvName is the environment variable for a key.
func EnvName(key string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return EnvPrefix + "_" + strings.ToUpper(r.Replace(key))
}

// UserFilePath is the user's config file.
func UserFilePath() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "horizon", "config.yaml")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "horizon", "config.yaml")
}

// UserSpecialistsDir is the user scope of specialists, beside the user's
// config file ("" when there is no home).
func UserSpecialistsDir() string {
	p := UserFilePath()
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "specialists")
}

// Load resolves the configuration once. Errors name the input at fault.
func Load(o Options) (*Config, error) {
	v := viper.New()
	for k, val := range defaults() {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()

	src := &sources{flags: map[string]string{}}
	userFile := o.UserFile
	if userFile == "" {
		userFile = UserFilePath()
	}
	files := []string{userFile}
	if o.Repo != "" {
		files = append(files, filepath.Join(o.Repo, RepoFile))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		fv, err := readFile(f)
		if err != nil {
			return nil, err
		}
		if fv == nil {
			continue
		}
		if f != userFile {
			if err := vouchesForItself(f, fv); err != nil {
				return nil, err
			}
		}
		if err := v.MergeConfigMap(fv.AllSettings()); err != nil {
			return nil, fmt.Errorf("config: merge %s: %w", f, err)
		}
		src.files = append(src.files, fileSource{path: f, v: fv})
	}
	if o.Flags != nil {
		for name, key := range o.FlagKeys {
			fl := o.Flags.Lookup(name)
			if fl == nil {
				continue
			}
			if err := v.BindPFlag(key, fl); err != nil {
				return nil, fmt.Errorf("config: bind --%s: %w", name, err)
			}
			if fl.Changed {
				src.flags[key] = "--" + name
			}
		}
	}

	var c Config
	if err := v.Unmarshal(&c, decodeHooks); err != nil {
		return nil, fmt.Errorf("config: %w", describeDecodeError(err, src))
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	if err := c.validate(src); err != nil {
		return nil, err
	}
	return &c, nil
}

// Fallback is the configuration to go on with when Load fails, for the
// commands that must work whatever the settings say (stopping the daemon,
// printing the version): the defaults, with the home taken from wherever
// it can still be read (HORIZON_HOME, else a home: key of a file that is
// valid YAML, the repository's first), so that the daemon is found where
// it runs. It never fails.
func Fallback(o Options) *Config {
	v := viper.New()
	for k, val := range defaults() {
		v.SetDefault(k, val)
	}
	var c Config
	_ = v.Unmarshal(&c, decodeHooks)
	userFile := o.UserFile
	if userFile == "" {
		userFile = UserFilePath()
	}
	files := []string{userFile}
	if o.Repo != "" {
		files = append(files, filepath.Join(o.Repo, RepoFile))
	}
	for _, f := range files {
		fv := viper.New()
		fv.SetConfigFile(f)
		fv.SetConfigType("yaml")
		if f != "" && fv.ReadInConfig() == nil && fv.GetString("home") != "" {
			c.Home = fv.GetString("home")
		}
	}
	if h := os.Getenv(EnvName("home")); h != "" {
		c.Home = h
	}
	_ = c.finish()
	return &c
}

// decodeHooks turn strings into durations and lists.
func decodeHooks(dc *mapstructure.DecoderConfig) {
	dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	)
}

// readFile reads one YAML file into its own viper so unknown keys and parse
// errors can be reported against the file that has them. A missing file is
// not an error.
func readFile(path string) (*viper.Viper, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, &Error{Source: path, Problems: []string{"is a directory, expected a YAML file"}}
	}
	fv := viper.New()
	fv.SetConfigFile(path)
	fv.SetConfigType("yaml")
	if err := fv.ReadInConfig(); err != nil {
		return nil, &Error{Source: path, Problems: []string{"not valid YAML: " + err.Error()}}
	}
	known := defaults()
	var unknown []string
	for _, k := range fv.AllKeys() {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &Error{Source: path, Problems: []string{
			fmt.Sprintf("unknown key(s) %s; known keys: %s", strings.Join(unknown, ", "), strings.Join(Keys(), ", ")),
		}}
	}
	return fv, nil
}

// selfTrust are the keys that say how far horizon trusts the repository
// itself: the repository's own file may not set them, or any repository
// could vouch for itself.
var selfTrust = []string{"specialists.trust_project"}

// vouchesForItself refuses a repository's file (path) that sets a key of
// selfTrust.
func vouchesForItself(path string, fv *viper.Viper) error {
	for _, k := range selfTrust {
		if fv.IsSet(k) {
			return &Error{Source: path, Problems: []string{fmt.Sprintf(
				"%s cannot be set in the repository's own file: a repository cannot vouch for itself; set it in %s or with %s=true",
				k, displayUserFile(), EnvName(k))}}
		}
	}
	return nil
}

// displayUserFile names the user's config file in messages.
func displayUserFile() string {
	if p := UserFilePath(); p != "" {
		return p
	}
	return "~/.config/horizon/config.yaml"
}

type fileSource struct {
	path string
	v    *viper.Viper
}

// sources answers "where did this value come from?" for error messages.
type sources struct {
	flags map[string]string
	files []fileSource
}

func (s *sources) of(key string) string {
	if f, ok := s.flags[key]; ok {
		return f
	}
	if _, ok := os.LookupEnv(EnvName(key)); ok {
		return EnvName(key)
	}
	for i := len(s.files) - 1; i >= 0; i-- {
		if s.files[i].v.IsSet(key) {
			return s.files[i].path
		}
	}
	return "default"
}

// Error is a configuration problem; Source names the file, variable or flag.
type Error struct {
	Source   string
	Problems []string
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return fmt.Sprintf("config: %s: %s", e.Source, e.Problems[0])
	}
	return fmt.Sprintf("config: %s:\n  - %s", e.Source, strings.Join(e.Problems, "\n  - "))
}

func describeDecodeError(err error, src *sources) error {
	// mapstructure names the field ("'agent.session_timeout' time: invalid
	// duration"); add where the bad value came from.
	msg := err.Error()
	for _, k := range Keys() {
		if strings.Contains(msg, "'"+k+"'") || strings.Contains(msg, "\""+k+"\"") {
			return &Error{Source: src.of(k), Problems: []string{fmt.Sprintf("%s: %v", k, err)}}
		}
	}
	return err
}

func (c *Config) finish() error {
	if c.Home == "" {
		if h := os.Getenv("HORIZON_HOME"); h != "" {
			c.Home = h
		} else if x := os.Getenv("XDG_DATA_HOME"); x != "" {
			c.Home = filepath.Join(x, "horizon")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return fmt.Errorf("config: no home directory for HORIZON_HOME; set HORIZON_HOME: %w", err)
			}
			c.Home = filepath.Join(home, ".local", "share", "horizon")
		}
	}
	if strings.HasPrefix(c.Home, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			c.Home = filepath.Join(home, c.Home[2:])
		}
	}
	if strings.HasPrefix(c.Advisor.SystemPrompt, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			c.Advisor.SystemPrompt = filepath.Join(home, c.Advisor.SystemPrompt[2:])
		}
	}
	// A relative home would name another directory from every working
	// directory: each would start a daemon of its own.
	if !filepath.IsAbs(c.Home) {
		abs, _ := filepath.Abs(c.Home)
		return &Error{Source: "home", Problems: []string{fmt.Sprintf("%q is relative, so each working directory would get a home of its own; give an absolute path (here: HORIZON_HOME=%s)", c.Home, abs)}}
	}
	c.Home = filepath.Clean(c.Home)
	if c.Worker.SharedDir != "" {
		var err error
		if c.Worker.SharedDir, err = filepath.Abs(c.Worker.SharedDir); err != nil {
			return fmt.Errorf("config: worker.shared_dir %q: %w", c.Worker.SharedDir, err)
		}
	}
	c.Gate.EnvAllow = append(c.Gate.EnvAllow, c.Gate.AllowEnv...)
	c.Gate.AllowEnv = nil
	c.Engine.SQLiteSynchronous = strings.ToUpper(c.Engine.SQLiteSynchronous)
	c.Engine.Database = strings.ToLower(strings.TrimSpace(c.Engine.Database))
	c.Log.Level = strings.ToLower(c.Log.Level)
	c.Run.Autonomy = horizon.Autonomy(strings.ToLower(strings.TrimSpace(string(c.Run.Autonomy))))
	if c.Run.Autonomy == "" {
		c.Run.Autonomy = horizon.DefaultAutonomy
	}
	c.Supervisor.Autonomy = horizon.Autonomy(strings.ToLower(strings.TrimSpace(string(c.Supervisor.Autonomy))))
	if c.Supervisor.Autonomy == "" {
		c.Supervisor.Autonomy = c.Run.Autonomy
	}
	c.Supervisor.DecomposeCron = strings.Join(strings.Fields(c.Supervisor.DecomposeCron), " ")
	c.Supervisor.DailyCron = strings.Join(strings.Fields(c.Supervisor.DailyCron), " ")
	if r, err := cleanRoadmapPath(c.Supervisor.Roadmap); err == nil {
		c.Supervisor.Roadmap = r
	}
	return nil
}

func (c *Config) validate(src *sources) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Error{Source: src.of(key), Problems: []string{key + ": " + fmt.Sprintf(format, args...)}})
	}
	port := func(key string, p int) {
		if p < 1 || p > 65535 {
			bad(key, "%d is not a TCP port (1-65535)", p)
		}
	}
	port("temporal.port", c.Temporal.Port)
	if c.UI.Enabled {
		port("ui.port", c.UI.Port)
		if c.UI.Port == c.Temporal.Port {
			bad("ui.port", "%d is also temporal.port; choose another port for the Web UI", c.UI.Port)
		}
	}
	port("web.port", c.Web.Port)
	if c.Web.Port == c.Temporal.Port || (c.UI.Enabled && c.Web.Port == c.UI.Port) {
		bad("web.port", "%d is also temporal.port or ui.port; choose another port for `horizon web`", c.Web.Port)
	}
	if c.Temporal.Address != "" {
		if _, _, err := net.SplitHostPort(c.Temporal.Address); err != nil {
			bad("temporal.address", "%q is not host:port (%v)", c.Temporal.Address, err)
		}
	}
	if c.Temporal.Namespace == "" {
		bad("temporal.namespace", "must not be empty")
	}
	if c.Temporal.TaskQueue == "" {
		bad("temporal.task_queue", "must not be empty")
	}
	if (c.Temporal.TLS.Cert == "") != (c.Temporal.TLS.Key == "") {
		bad("temporal.tls.cert", "set both temporal.tls.cert and temporal.tls.key, or neither")
	}
	switch c.Engine.SQLiteSynchronous {
	case "FULL", "NORMAL", "EXTRA":
	default:
		bad("engine.sqlite_synchronous", "%q: use FULL (survives power loss) or NORMAL (survives process crashes)", c.Engine.SQLiteSynchronous)
	}
	switch c.Engine.Database {
	case "sqlite":
	case "postgres":
		if c.Engine.Postgres.DSN == "" {
			bad("engine.postgres.dsn", "must be set with engine.database: postgres (postgres://user:password@host:5432/temporal?sslmode=disable)")
		}
	default:
		bad("engine.database", "%q: use sqlite (a file in home) or postgres (engine.postgres.dsn)", c.Engine.Database)
	}
	if c.Engine.Postgres.MaxConns < 1 {
		bad("engine.postgres.max_conns", "%d: must be at least 1", c.Engine.Postgres.MaxConns)
	}
	if c.Temporal.Listen != "" && net.ParseIP(c.Temporal.Listen) == nil {
		bad("temporal.listen", "%q is not an IP address (127.0.0.1 for this machine only, 0.0.0.0 for every interface)", c.Temporal.Listen)
	}
	if c.Engine.RetentionDays < 1 {
		bad("engine.retention_days", "%d: must be at least 1", c.Engine.RetentionDays)
	}
	if c.Models.Default != "" {
		if err := ValidateModelName(c.Models.Default); err != nil {
			bad("models.default", "%v", err)
		}
	}
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			bad(key, "%s: must be a positive duration such as 30s or 10m", d)
		}
	}
	positive("agent.session_timeout", c.Agent.SessionTimeout)
	positive("agent.heartbeat_timeout", c.Agent.HeartbeatTimeout)
	positive("gate.timeout", c.Gate.Timeout)
	for _, list := range []struct {
		key   string
		globs []string
	}{{"gate.env_allow", c.Gate.EnvAllow}, {"agent.env_allow", c.Agent.EnvAllow}} {
		key := list.key
		for _, g := range list.globs {
			if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
				bad(key, "%q is not a variable name glob: use names with * and ? wildcards, e.g. MY_SERVICE_*", g)
			}
		}
	}
	for _, p := range c.Gate.Protected {
		if err := ladder.ValidatePattern(p); err != nil {
			bad("gate.protected", "%q: use paths relative to the repository root, e.g. .horizon/ or tests/**/*.golden", p)
		}
	}
	for _, cmd := range []struct{ key, line, eg string }{
		{"gate.test_command", c.Gate.TestCommand, "go test ./..."},
		{"gate.lint_command", c.Gate.LintCommand, "golangci-lint run"},
	} {
		if msg := commandProblem(cmd.line); msg != "" {
			bad(cmd.key, "%q %s: give a shell command line run with sh -c in the lane, e.g. %q, or leave it empty for none", cmd.line, msg, cmd.eg)
		}
	}
	// NaN passes every comparison below and Inf passes some; neither can
	// be carried to a run (its input is JSON), so both are refused first.
	amount := func(key string, v float64, none string) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			bad(key, "%g: must be 0 (%s) or a positive amount in USD", v, none)
		}
	}
	amount("spend.ceiling", c.Spend.Ceiling, "no ceiling")
	amount("spend.day_ceiling", c.Spend.DayCeiling, "no ceiling")
	if math.IsNaN(c.Spend.ThrottleAt) || c.Spend.ThrottleAt <= 0 || c.Spend.ThrottleAt > 1 {
		bad("spend.throttle_at", "%g: must be a fraction in (0, 1], e.g. 0.8", c.Spend.ThrottleAt)
	}
	if c.Run.MaxAttempts < 1 {
		bad("run.max_attempts", "%d: must be at least 1", c.Run.MaxAttempts)
	} else if c.Run.MaxAttempts > MaxAttemptsLimit {
		bad("run.max_attempts", "%d: at most %d; each attempt is a worker and an auditor session, and a goal that fails this often needs another plan, not more tries", c.Run.MaxAttempts, MaxAttemptsLimit)
	}
	if !c.Run.Autonomy.Valid() {
		bad("run.autonomy", "%q: use full (never waits), semi (waits at a HIGH-ambiguity plan and between milestones) or supervised (also before each feature)", c.Run.Autonomy)
	}
	if c.Run.BudgetTime < 0 {
		bad("run.budget_time", "%s: must be 0 (no time limit) or a positive duration such as 72h", c.Run.BudgetTime)
	}
	amount("run.budget_spend", c.Run.BudgetSpend, "no spend limit")
	if c.Run.RecoveryEscalationInterval < 1 {
		bad("run.recovery_escalation_interval", "%d: must be at least 1 (attempts per recovery strategy)", c.Run.RecoveryEscalationInterval)
	}
	if c.Run.LineCeiling < 0 {
		bad("run.line_ceiling", "%d: must be 0 (no ceiling) or a positive number of changed lines", c.Run.LineCeiling)
	}
	if c.Run.KeepFailedLanes < 0 {
		bad("run.keep_failed_lanes", "%s: must be 0 (remove a failed run's lanes when it ends) or a positive duration such as 72h", c.Run.KeepFailedLanes)
	}
	if c.Run.FeaturesPerHistory < 0 {
		bad("run.features_per_history", "%d: must be 0 (let Temporal decide) or a positive number of features", c.Run.FeaturesPerHistory)
	}
	if c.Run.StallBackoff.Base <= 0 {
		bad("run.stall_backoff.base", "%s: must be a positive duration such as 1m (the first wait of a stalled feature)", c.Run.StallBackoff.Base)
	}
	if c.Run.StallBackoff.Max < c.Run.StallBackoff.Base {
		bad("run.stall_backoff.max", "%s: must be at least run.stall_backoff.base (%s), e.g. 1h", c.Run.StallBackoff.Max, c.Run.StallBackoff.Base)
	}
	if t := c.Run.DecisionConfidenceThreshold; t <= 0 || t > 1 {
		bad("run.decision_confidence_threshold", "%g: must be above 0 and at most 1 (the share of the previous milestone's attempts that were accepted, e.g. 0.8)", t)
	}
	if c.Run.StallBlockAfter < 1 {
		bad("run.stall_block_after", "%d: must be at least 1 (attempts a stalled feature makes before it blocks)", c.Run.StallBlockAfter)
	}
	c.validateSupervisor(bad)
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q: use debug, info, warn or error", c.Log.Level)
	}
	c.validateNotify(bad)
	c.validateService(bad)
	c.validateAdvisor(bad)
	return errors.Join(errs...)
}

func (c *Config) validateNotify(bad func(key, format string, args ...any)) {
	n := c.Notify
	if n.Webhook != "" {
		u, err := url.Parse(n.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("notify.webhook", "%q is not an http(s) URL such as https://ntfy.sh/my-topic", RedactURL(n.Webhook))
		}
	}
	for _, h := range n.WebhookHeaders {
		if _, _, err := ParseHeader(h); err != nil {
			bad("notify.webhook_headers", "%v", err)
		}
	}
	if n.Timeout <= 0 {
		bad("notify.timeout", "%s: must be a positive duration such as 10s", n.Timeout)
	}
	if n.Attempts < 1 || n.Attempts > 10 {
		bad("notify.attempts", "%d: must be between 1 and 10", n.Attempts)
	}
	if d := NotifyMaxDuration(n.Timeout, n.Attempts); n.Timeout > 0 && n.Attempts >= 1 && d > NotifyDeliveryLimit {
		bad("notify.timeout", "one event may take %s (notify.timeout %s × notify.attempts %d, with backoff), more than the %s a notification may take: lower notify.timeout or notify.attempts", d, n.Timeout, n.Attempts, NotifyDeliveryLimit)
	}
	if n.OutageAfter <= 0 {
		bad("notify.outage_after", "%s: must be a positive duration such as 15m", n.OutageAfter)
	}
	for _, e := range n.Events {
		if e != "all" && !slices.Contains(NotifyKinds, e) {
			bad("notify.events", "%q is not an event kind; use all or some of %s", e, strings.Join(NotifyKinds, ", "))
		}
	}
}

// ParseHeader splits a "Name: value" header setting.
func ParseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n\"(),/;<=>?@[\\]{}") || strings.ContainsAny(value, "\r\n") {
		return "", "", fmt.Errorf("%q is not a header; write it as \"Name: value\", e.g. \"Authorization: Bearer TOKEN\"", redactHeader(h))
	}
	return name, strings.TrimSpace(value), nil
}

// redactHeader keeps a header's name and hides its value, which is often a
// token.
func redactHeader(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok {
		return name + ": …"
	}
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// RedactURL keeps scheme and host: a webhook's path or query is often its
// secret (Slack, Discord).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if len(raw) > 12 {
			return raw[:12] + "…"
		}
		return raw
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

var serviceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *Config) validateAdvisor(bad func(key, format string, args ...any)) {
	a := c.Advisor
	model := func(key, m string) {
		if m == "" {
			return
		}
		if err := ValidateModelName(m); err != nil {
			bad(key, "%v", err)
		}
	}
	model("advisor.watchdog_model", a.WatchdogModel)
	model("advisor.consult_model", a.ConsultModel)
	if a.ReviewMode != ReviewStep && a.ReviewMode != ReviewIdle && a.ReviewMode != ReviewExecution {
		bad("advisor.review_mode", "%q: use step (review each finished model step), idle (review each time the session goes idle) or execution (review each step whose tools changed files)", a.ReviewMode)
	}
	atLeast := func(key string, v, least int, what string) {
		if v < least {
			bad(key, "%d: must be at least %d (%s)", v, least, what)
		}
	}
	atLeast("advisor.review_interval", a.ReviewInterval, 1, "review every Nth turn boundary")
	atLeast("advisor.max_tool_steps", a.MaxToolSteps, 0, "tool rounds per review")
	atLeast("advisor.max_notes_per_update", a.MaxNotesPerUpdate, 1, "notes per review")
	atLeast("advisor.immune_turns", a.ImmuneTurns, 0, "turns after a wake that deliver concerns as nits")
	atLeast("advisor.consult.max_tokens", a.Consult.MaxTokens, 1, "tokens per answer")
	atLeast("advisor.consult.include_context_messages", a.Consult.IncludeContextMessages, 0, "messages sent with a question")
	if a.Timeout <= 0 {
		bad("advisor.timeout", "%s: must be a positive duration such as 60s", a.Timeout)
	}
	for _, d := range []struct{ key, mode string }{
		{"advisor.delivery.blocker", a.Delivery.Blocker}, {"advisor.delivery.concern", a.Delivery.Concern}, {"advisor.delivery.nit", a.Delivery.Nit},
	} {
		switch {
		case d.mode == DeliverWake && d.key != "advisor.delivery.blocker":
			bad(d.key, "%q: only a blocker may wake the worker; use deliver or record", d.mode)
		case d.mode != DeliverWake && d.mode != DeliverMessage && d.mode != DeliverRecord:
			bad(d.key, "%q: use wake (blockers only), deliver or record", d.mode)
		}
	}
	if len(a.Tools) == 0 {
		bad("advisor.tools", "empty: give the reviewer at least one of %s", strings.Join(AdvisorTools, ", "))
	}
	for _, t := range a.Tools {
		if !slices.Contains(AdvisorTools, t) {
			bad("advisor.tools", "%q: the reviewer is read-only; use some of %s", t, strings.Join(AdvisorTools, ", "))
		}
	}
	if p := a.SystemPrompt; p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || !filepath.IsAbs(p) {
			bad("advisor.system_prompt", "%q: give the absolute path of a readable file (its text is added to the reviewer's prompt)", p)
		}
	}
}

func (c *Config) validateService(bad func(key, format string, args ...any)) {
	s := c.Service
	if !serviceName.MatchString(s.Name) || strings.HasSuffix(s.Name, ".service") || len(s.Name) > 64 {
		bad("service.name", "%q: use letters, digits, '.', '_' or '-' (no .service suffix), e.g. horizon", s.Name)
	}
	for _, e := range s.Env {
		if !envName.MatchString(e) {
			bad("service.env", "%q is not an environment variable name (letters, digits, '_')", e)
		}
	}
}

// ValidateModelName checks the provider/model shape OpenCode uses.
func ValidateModelName(m string) error {
	provider, model, ok := strings.Cut(m, "/")
	if !ok || provider == "" || model == "" || strings.ContainsAny(m, " \t\n") {
		return fmt.Errorf("%q is not PROVIDER/MODEL (for example anthropic/claude-sonnet-4-5)", m)
	}
	return nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// Settings returns the resolved configuration as key → value, for `horizon
// config` style output.
func (c *Config) Settings() map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			key := t.Field(i).Tag.Get("mapstructure")
			if prefix != "" {
				key = prefix + "." + key
			}
			f := v.Field(i)
			if f.Kind() == reflect.Struct {
				walk(key, f)
				continue
			}
			val := f.Interface()
			if d, ok := val.(time.Duration); ok {
				val = d.String()
			}
			if strings.HasSuffix(key, "api_key") && val != "" {
				val = "(set)"
			}
			if key == "notify.webhook" && val != "" {
				val = RedactURL(c.Notify.Webhook)
			}
			if key == "notify.command" && val != "" {
				// The program only: its arguments may hold a token.
				f := strings.Fields(c.Notify.Command)
				if len(f) > 1 {
					val = f[0] + " …"
				}
			}
			if key == "notify.webhook_headers" {
				names := []string{}
				for _, h := range c.Notify.WebhookHeaders {
					names = append(names, redactHeader(h))
				}
				val = names
			}
			out[key] = val
		}
	}
	walk("", reflect.ValueOf(*c))
	return out
}

// commandProblem says what makes line unusable as gate.test_command or
// gate.lint_command ("" when it is fine, or empty: none). A line of only
// whitespace would run `sh -c` on nothing and pass every time, a gate
// that judges nothing; a NUL byte cannot be handed to a process at all.
func commandProblem(line string) string {
	switch {
	case line == "":
		return ""
	case strings.TrimSpace(line) == "":
		return "is only whitespace"
	case strings.ContainsRune(line, 0):
		return "holds a NUL byte"
	}
	return ""
}
