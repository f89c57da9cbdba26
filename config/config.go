// Package config resolves horizon's settings once per process.
//
// Precedence, lowest to highest: built-in defaults, the user's file
// (~/.config/horizon/config.yaml), the repository's file
// (<repo>/.horizon/config.yaml), HORIZON_* environment variables (a key's
// dots and dashes become underscores: temporal.address is
// HORIZON_TEMPORAL_ADDRESS) and finally command-line flags. Only this package
// and cmd/ touch viper; everything else receives a plain *Config.
package config

import (
	"path/filepath"
	"time"

	"github.com/horizon/horizon/horizon"
)

// Config is every setting horizon reads. Field tags name the viper key.
type Config struct {
	// Home holds the engine database, logs, lanes and run artifacts.
	Home string `mapstructure:"home"`

	Temporal Temporal `mapstructure:"temporal"`
	UI       UI       `mapstructure:"ui"`
	Web      Web      `mapstructure:"web"`
	Engine   Engine   `mapstructure:"engine"`
	Models   Models   `mapstructure:"models"`
	Agent    Agent    `mapstructure:"agent"`
	Run      Run      `mapstructure:"run"`
	Gate     Gate     `mapstructure:"gate"`
	Log      Log      `mapstructure:"log"`
	Worker   Worker   `mapstructure:"worker"`
	Spend    Spend    `mapstructure:"spend"`
	Reader   Reader   `mapstructure:"reader"`
	Advisor  Advisor  `mapstructure:"advisor"`

	Specialists Specialists `mapstructure:"specialists"`

	Supervisor Supervisor `mapstructure:"supervisor"`
	Notify     Notify     `mapstructure:"notify"`
	Service    Service    `mapstructure:"service"`
}

// Supervisor configures unattended operation of a repository (`horizon
// supervisor start`): its goal queue, the roadmap it decomposes, the two
// Schedules that drive it and how the daily pass judges progress.
type Supervisor struct {
	// Roadmap is the roadmap file, relative to the repository root, read
	// from the tip of the base branch (never from the working tree, never
	// written by horizon).
	Roadmap string `mapstructure:"roadmap"`
	// MaxActiveRuns is how many of the queue's runs may go at once per
	// repository.
	MaxActiveRuns int `mapstructure:"max_active_runs"`
	// DecomposeCron is when the nightly decomposition plans roadmap items
	// ahead of the queue (five-field cron, UTC).
	DecomposeCron string `mapstructure:"decompose_cron"`
	// DailyCron is when the daily pass writes its report (five-field cron,
	// UTC).
	DailyCron string `mapstructure:"daily_cron"`
	// DecomposeAhead is how many decomposed but not yet started roadmap
	// plans the supervisor keeps ready.
	DecomposeAhead int `mapstructure:"decompose_ahead"`
	// StallAttempts is how many attempts since the last accepted feature
	// make the daily pass flag a feature or run as stalled.
	StallAttempts int `mapstructure:"stall_attempts"`
	// CatchupWindow is how late a Schedule's missed action (the machine
	// slept or was off at its time) still runs when the engine is back;
	// older misses are skipped. The default, 24h, means one missed nightly
	// decomposition or daily pass is made up the next time horizon runs
	// within a day, and never more than one (overlapping actions are
	// skipped).
	CatchupWindow time.Duration `mapstructure:"catchup_window"`
	// DecomposeTimeout bounds one decomposition of a roadmap item by the
	// lead: a lead with no plan by then (its model unreachable, say) is
	// cancelled and the item counts as a failed decomposition, tried
	// again after the backoff (run.stall_backoff).
	DecomposeTimeout time.Duration `mapstructure:"decompose_timeout"`
	// Autonomy is the level of the runs the supervisor starts, unless a
	// queue entry sets its own; empty means run.autonomy.
	Autonomy horizon.Autonomy `mapstructure:"autonomy"`
}

// Notify says where horizon tells a person that something needs them or
// happened while nobody watched: a webhook, a command, or both.
type Notify struct {
	// Webhook receives each event as a JSON POST (http or https URL); the
	// body has a text field, so Slack-style and templated ntfy endpoints
	// show it as is.
	Webhook string `mapstructure:"webhook"`
	// WebhookHeaders are extra request headers, each "Name: value"
	// (for example an Authorization header).
	WebhookHeaders []string `mapstructure:"webhook_headers"`
	// Command is run by /bin/sh -c with the event JSON on its stdin.
	Command string `mapstructure:"command"`
	// Timeout bounds one delivery attempt to one receiver.
	Timeout time.Duration `mapstructure:"timeout"`
	// Attempts is how many times a failing receiver is tried per event.
	Attempts int `mapstructure:"attempts"`
	// OutageAfter is how long the engine or every model provider must be
	// unreachable before an outage event is sent.
	OutageAfter time.Duration `mapstructure:"outage_after"`
	// Events lists the kinds that are sent ("all", or names from
	// NotifyKinds); the test kind is always sent.
	Events []string `mapstructure:"events"`
}

// NotifyKinds are the event kinds horizon can send, in the order the
// README documents them. internal/notify defines one constant per name.
var NotifyKinds = []string{
	"approval_waiting", "feature_blocked", "spend_paused", "stalled",
	"outage", "run_ended", "daily_report", "advisor_concern", "test",
}

// Configured reports whether any receiver is set.
func (n Notify) Configured() bool { return n.Webhook != "" || n.Command != "" }

// Service configures `horizon service install`: the unit that starts the
// daemon at boot (or login).
type Service struct {
	// Name names the unit: <name>.service (systemd) or local.<name>
	// (launchd).
	Name string `mapstructure:"name"`
	// Env names variables, besides every HORIZON_* one, whose values at
	// install time are written into the unit: PATH so the daemon finds git,
	// opencode and the gate's tools; a provider's API key if OpenCode needs
	// one from the environment.
	Env []string `mapstructure:"env"`
}

// Reader is the T2 reader: an OpenAI-compatible model asked for a
// diagnosis of a failed attempt, whose text a local model then applies.
// Unset, the T2 rung is unavailable and the ladder skips it.
type Reader struct {
	BaseURL string `mapstructure:"base_url"`
	Model   string `mapstructure:"model"`
	APIKey  string `mapstructure:"api_key"`
}

// Specialists configures how horizon uses specialists (README,
// "Specialists").
type Specialists struct {
	// TrustProject lets the repository's own specialists
	// (<repo>/.horizon/specialists) run: as the worker's delegates and as
	// background tasks. They come from whoever wrote to the repository,
	// so they run only when the person trusts it; the repository's own
	// config file cannot set this. Even then their tools stay within the
	// project scope's categories.
	TrustProject bool `mapstructure:"trust_project"`
}

// Advisor configures the advisor (README, "The advisor"): the watchdog
// that reviews a worker session at its turn boundaries and the consult
// tool a worker may call. Both inform; neither decides an attempt.
type Advisor struct {
	// Enabled starts a watchdog beside every worker session.
	Enabled bool `mapstructure:"enabled"`
	// WatchdogModel is the watchdog's provider/model; empty means the
	// leaderboard's best analyze model.
	WatchdogModel string `mapstructure:"watchdog_model"`
	// ConsultModel is the consult tool's provider/model; empty means the
	// leaderboard's best lead model.
	ConsultModel string `mapstructure:"consult_model"`
	// ReviewMode is which turn boundary counts for a review: step (each
	// finished model step of the worker), idle (each time the worker's
	// session goes idle) or execution (each finished step whose tools
	// changed files).
	ReviewMode string `mapstructure:"review_mode"`
	// ReviewInterval reviews every Nth boundary; the skipped ones are
	// part of the next review's delta.
	ReviewInterval int `mapstructure:"review_interval"`
	// MaxToolSteps bounds the tool rounds (read, grep, glob) of one review.
	MaxToolSteps int `mapstructure:"max_tool_steps"`
	// MaxNotesPerUpdate is the most notes one review may deliver.
	MaxNotesPerUpdate int `mapstructure:"max_notes_per_update"`
	// ImmuneTurns is how many worker turns after a waking blocker deliver
	// concerns as nits.
	ImmuneTurns int `mapstructure:"immune_turns"`
	// Timeout bounds one review; a review over it is dropped (fail-open).
	Timeout time.Duration `mapstructure:"timeout"`
	// RequireEvidence downgrades a blocker that names no checked fact to a
	// concern.
	RequireEvidence bool `mapstructure:"require_evidence"`
	// Consult configures the consult_advisor tool.
	Consult Consult `mapstructure:"consult"`
	// Delivery says, per severity, what a note that passes the judgement
	// does: wake (a blocker only: prompt an idle worker), deliver (a
	// message in the worker's session) or record (the run's record only).
	Delivery Delivery `mapstructure:"delivery"`
	// SystemPrompt is a file whose text is added to the reviewer's
	// prompt (the horizon-advice protocol stays); "" for none.
	SystemPrompt string `mapstructure:"system_prompt"`
	// Tools is the reviewer's read-only tool set: some of read, grep,
	// glob and list.
	Tools []string `mapstructure:"tools"`
}

// Delivery is advisor.delivery.
type Delivery struct {
	Blocker string `mapstructure:"blocker"`
	Concern string `mapstructure:"concern"`
	Nit     string `mapstructure:"nit"`
}

// Delivery modes of advisor.delivery.*.
const (
	DeliverWake    = "wake"
	DeliverMessage = "deliver"
	DeliverRecord  = "record"
)

// AdvisorTools are the tools advisor.tools may give the reviewer: the
// read-only ones, nothing that edits, runs or fetches.
var AdvisorTools = []string{"read", "grep", "glob", "list"}

// Consult configures the consult_advisor tool of `horizon mcp`.
type Consult struct {
	// Enabled registers the tool in the worker's OpenCode configuration.
	Enabled bool `mapstructure:"enabled"`
	// MaxTokens bounds one answer.
	MaxTokens int `mapstructure:"max_tokens"`
	// IncludeContextMessages is how many of the calling session's last
	// messages go with the question.
	IncludeContextMessages int `mapstructure:"include_context_messages"`
}

// Review modes of advisor.review_mode.
const (
	ReviewStep      = "step"
	ReviewIdle      = "idle"
	ReviewExecution = "execution"
)

// Spend bounds what a run may cost.
type Spend struct {
	// Ceiling is the most a run may spend, in USD, as OpenCode reports
	// costs; 0 means no ceiling. At it the run pauses until it is raised
	// (`horizon set-ceiling RUN USD`).
	Ceiling float64 `mapstructure:"ceiling"`
	// DayCeiling bounds the spend of all runs of this home per UTC day;
	// 0 means none. At it, runs pause until the next day or a raise.
	DayCeiling float64 `mapstructure:"day_ceiling"`
	// ThrottleAt is the fraction of a ceiling from which the ladder uses
	// only local tiers (T0, T1).
	ThrottleAt float64 `mapstructure:"throttle_at"`
}

// Worker configures the Temporal worker of a daemon.
type Worker struct {
	// PaidPoller makes this process poll the paid task queue, whose worker
	// runs one activity at a time. With several worker processes on one
	// engine, set it on exactly one of them: a single poller is what makes
	// "one paid call at a time" hold across all of them.
	PaidPoller bool `mapstructure:"paid_poller"`
	// SharedDir holds what every worker of one engine must see at the
	// same path: lanes/ (git worktrees the repositories record by absolute
	// path), runs/ (receipts, transcripts, handoffs), spend/ and reports/.
	// Empty means Home, right for one machine. Workers sharing an engine
	// set the same SharedDir (a shared disk) and each its own Home, which
	// keeps what must not be shared: the lock, logs and OpenCode's
	// session store.
	SharedDir string `mapstructure:"shared_dir"`
}

// DataDir is where lanes/, runs/, spend/, reports/ and tasks/ live: worker.shared_dir,
// else Home.
func (c *Config) DataDir() string {
	if c.Worker.SharedDir != "" {
		return c.Worker.SharedDir
	}
	return c.Home
}

// OpenCodeEndpoint is the file where the daemon of this home says where
// its running OpenCode answers (the daemon's Paths.OpenCodeEndpoint).
func (c *Config) OpenCodeEndpoint() string {
	return filepath.Join(c.Home, "opencode", "endpoint.json")
}

// PaidQueue is the task queue of metered agent sessions.
func (c *Config) PaidQueue() string { return c.Temporal.TaskQueue + "-paid" }

// Temporal says where the engine is. An empty Address means the embedded
// engine on 127.0.0.1:Port, run by `horizon server`.
type Temporal struct {
	Address   string `mapstructure:"address"`
	Namespace string `mapstructure:"namespace"`
	Port      int    `mapstructure:"port"`
	// Listen is the IP the embedded engine's frontend and Web UI bind;
	// empty means 127.0.0.1. Anything else serves workers on other
	// machines, over TLS and with the engine token as API key.
	Listen    string `mapstructure:"listen"`
	TaskQueue string `mapstructure:"task_queue"`
	// APIKey is presented to a remote engine; for another machine's (or
	// home's) embedded engine it is that home's engine.token. APIKeyFile,
	// used when APIKey is empty, is a file holding it.
	APIKey     string `mapstructure:"api_key"`
	APIKeyFile string `mapstructure:"api_key_file"`
	TLS        TLS    `mapstructure:"tls"`
}

// TLS files for a remote cluster (mTLS when Cert and Key are set).
type TLS struct {
	Cert       string `mapstructure:"cert"`
	Key        string `mapstructure:"key"`
	CA         string `mapstructure:"ca"`
	ServerName string `mapstructure:"server_name"`
}

// Web is `horizon web`: the JSON API and dashboard on 127.0.0.1.
type Web struct {
	Port int `mapstructure:"port"`
	// PublicReads lets the API's reads (and the dashboard's data) go
	// without the token; verbs always need it.
	PublicReads bool `mapstructure:"public_reads"`
}

// UI is the embedded Temporal Web UI.
type UI struct {
	Enabled bool `mapstructure:"enabled"`
	Port    int  `mapstructure:"port"`
}

// Engine tunes the embedded engine.
type Engine struct {
	// SQLiteSynchronous is the SQLite synchronous pragma (FULL or NORMAL);
	// both lose nothing on a process crash in WAL mode, FULL also survives
	// power loss. The README's bench figures measure what each costs.
	SQLiteSynchronous string `mapstructure:"sqlite_synchronous"`
	// RetentionDays is how long closed runs stay visible in the engine.
	RetentionDays int `mapstructure:"retention_days"`
	// Database is where the embedded engine keeps its state: sqlite (a
	// file in Home, one machine) or postgres (Postgres.DSN: what a cluster
	// of workers on several machines shares through one engine).
	Database string   `mapstructure:"database"`
	Postgres Postgres `mapstructure:"postgres"`
}

// Postgres is the engine's PostgreSQL server (engine.database: postgres).
type Postgres struct {
	// DSN is postgres://user:password@host:5432/<db>?sslmode=...; the
	// engine also uses <db>_visibility. Both are created if the user may.
	DSN string `mapstructure:"dsn"`
	// MaxConns bounds the engine's connections per database.
	MaxConns int `mapstructure:"max_conns"`
}

// Models chooses language models.
type Models struct {
	// Default, when set, is the provider/model for every role (like --model).
	// Empty: each role gets the best-ranked connected model of the leaderboard.
	Default string `mapstructure:"default"`
	// File is a leaderboard (zilX models.json format) replacing the bundled one.
	File string `mapstructure:"file"`
}

// Agent configures the agent runtime (OpenCode).
type Agent struct {
	// OpenCodeBin is the opencode executable; empty means PATH, then
	// node_modules/.bin next to the horizon binary or the working directory.
	OpenCodeBin string `mapstructure:"opencode_bin"`
	// OpenCodeConfig is an extra OpenCode config file (OPENCODE_CONFIG).
	OpenCodeConfig string `mapstructure:"opencode_config"`
	// AstGrepBin is the ast-grep executable for T0 codemods; empty: found
	// like opencode.
	AstGrepBin string `mapstructure:"ast_grep_bin"`
	// ClaudeBin and CodexBin are the Claude Code and Codex CLI executables
	// for claude-code/… and codex/… routes; empty: found like opencode.
	ClaudeBin string `mapstructure:"claude_bin"`
	CodexBin  string `mapstructure:"codex_bin"`
	// SessionTimeout bounds one agent session (start to close).
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// HeartbeatTimeout is how long a silent session activity is trusted before
	// the engine retries it elsewhere (after a crash, for example).
	HeartbeatTimeout time.Duration `mapstructure:"heartbeat_timeout"`
	// EnvAllow are globs of environment variables the commands agents run
	// see although gate.Secret calls them secrets ("MY_*"; case-sensitive).
	EnvAllow []string `mapstructure:"env_allow"`
}

// Run holds per-run defaults.
type Run struct {
	// MaxAttempts bounds a one-feature run (horizon start --single); a
	// planned run's features go on until accepted or blocked, within the
	// budget.
	MaxAttempts int  `mapstructure:"max_attempts"`
	AllowDirty  bool `mapstructure:"allow_dirty"`
	// Planned makes horizon start plan the goal into milestones of
	// features (false: the goal is one feature, like --single).
	Planned bool `mapstructure:"planned"`
	// Autonomy is where a planned run waits for `horizon approve`: full
	// never, semi at a HIGH-ambiguity plan and each milestone after the
	// first, supervised also before each feature's first attempt.
	Autonomy horizon.Autonomy `mapstructure:"autonomy"`
	// BudgetTime and BudgetSpend (USD) are a planned run's one hard stop,
	// counted from its start; 0 means no limit.
	BudgetTime  time.Duration `mapstructure:"budget_time"`
	BudgetSpend float64       `mapstructure:"budget_spend"`
	// RecoveryEscalationInterval is how many attempts a feature makes with
	// one recovery strategy before the next is tried.
	RecoveryEscalationInterval int `mapstructure:"recovery_escalation_interval"`
	// FeaturesPerHistory, when positive, starts a fresh workflow history
	// (continue-as-new) after that many features; 0 leaves it to Temporal.
	FeaturesPerHistory int `mapstructure:"features_per_history"`
	// LineCeiling is the most changed lines (added + deleted) one attempt
	// may produce before the over_line_ceiling escalation trigger fires;
	// 0 means no ceiling.
	LineCeiling int `mapstructure:"line_ceiling"`
	// KeepFailedLanes is how long the lanes (worktrees and lane branches)
	// of a run that did not complete are kept for a look; 0 removes them
	// when the run ends, as a completed run's always are. `horizon gc`
	// removes them once kept this long.
	KeepFailedLanes time.Duration `mapstructure:"keep_failed_lanes"`
	// StallBackoff is how a stalled feature (judged as the daily pass
	// judges, supervisor.stall_attempts) waits between attempts: Base,
	// doubling, capped at Max; any new evidence starts it over. A
	// supervisor's failing decompositions back off the same way.
	StallBackoff StallBackoff `mapstructure:"stall_backoff"`
	// StallBlockAfter is how many attempts a stalled feature makes
	// without progress before it stops as a `stalled` blocker for a
	// person (`horizon unblock` puts it back in line).
	StallBlockAfter int `mapstructure:"stall_block_after"`
	// AutoApproveMilestones lets a semi-autonomous run pass a milestone's
	// checkpoint by rule: the plan's ambiguity is LOW, the previous
	// milestone landed without a rejection, and its confidence (accepted
	// attempts over attempts) is at least DecisionConfidenceThreshold.
	// Each such approval is recorded as a decision.
	AutoApproveMilestones       bool    `mapstructure:"auto_approve_milestones"`
	DecisionConfidenceThreshold float64 `mapstructure:"decision_confidence_threshold"`
}

// StallBackoff is run.stall_backoff.
type StallBackoff struct {
	Base time.Duration `mapstructure:"base"`
	Max  time.Duration `mapstructure:"max"`
}

// Gate configures the deterministic gate.
type Gate struct {
	Timeout time.Duration `mapstructure:"timeout"`
	// EnvAllow are globs of environment variables the gate sees although
	// gate.Secret calls them secrets ("MY_*"; case-sensitive).
	EnvAllow []string `mapstructure:"env_allow"`
	// AllowEnv is env_allow's former name, still read: finish adds it to
	// EnvAllow.
	AllowEnv []string `mapstructure:"allow_env"`
	// Protected are globs of paths a worker may not change (allow-list
	// syntax: "dir/" covers everything below it, "*" and "**" match).
	// Its changes there are reverted before every gate run and recorded on
	// the attempt as out-of-scope evidence. The gate script paths are
	// always protected. Default: the gate directories.
	Protected []string `mapstructure:"protected"`
	// TestCommand and LintCommand are shell command lines (run with
	// `sh -c` in the lane) that are parts of the gate of their own, after
	// the gate script, under the same timeout, output cap, process-group
	// kill and scrubbed environment. Without a gate script a test command
	// is the gate's test part alone. Default: none.
	TestCommand string `mapstructure:"test_command"`
	LintCommand string `mapstructure:"lint_command"`
}

// Commands are gate.test_command and gate.lint_command, as a run takes
// them.
func (g Gate) Commands() horizon.GateCommands {
	return horizon.GateCommands{Test: g.TestCommand, Lint: g.LintCommand}
}

// Log configures logging.
type Log struct {
	Level string `mapstructure:"level"`
}

// Embedded reports whether horizon runs its own engine.
func (c *Config) Embedded() bool { return c.Temporal.Address == "" }

// FrontendAddress is the gRPC address clients dial.
func (c *Config) FrontendAddress() string {
	if c.Temporal.Address != "" {
		return c.Temporal.Address
	}
	return loopback(c.Temporal.Port)
}

// UIURL is the embedded Web UI's base URL, or "" when it is off or remote.
func (c *Config) UIURL() string {
	if !c.Embedded() || !c.UI.Enabled {
		return ""
	}
	return "http://" + loopback(c.UI.Port)
}
