package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/daemon"
	"github.com/horizon/horizon/internal/engine"
	"github.com/horizon/horizon/internal/logging"
)

// flagKeys binds command flags to config keys; a command that lacks a flag
// simply does not bind it.
var flagKeys = map[string]string{
	"model":        "models.default",
	"max-attempts": "run.max_attempts",
	"allow-dirty":  "run.allow_dirty",
	"log-level":    "log.level",
	"autonomy":     "run.autonomy",
	"budget-time":  "run.budget_time",
	"budget-spend": "run.budget_spend",
}

// app is what every command shares: resolved config, logger, output.
type app struct {
	repoDir  string
	kind     string // start --kind
	cfg      *config.Config
	log      zerolog.Logger
	logClose io.Closer
	out      io.Writer
	errOut   io.Writer
}

// Main runs the CLI and returns the process exit code.
func Main(args []string) int {
	a := &app{out: os.Stdout, errOut: os.Stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if a.logClose != nil {
		_ = a.logClose.Close()
	}
	if err != nil {
		printErr(err)
	}
	return exitCode(err)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "horizon",
		Short: "Unattended, crash-proof supervisor for AI coding agents",
		Long: `horizon turns a goal into a durable run: a read-only lead plans it into
milestones of atomic features; for each feature a worker agent changes a lane
(a git worktree), the repository's gate script judges the change, an
independent read-only auditor reviews it, and only then is it committed onto
the run's branch horizon/<run>. Your own branch and work tree are never
touched.

Every step is a Temporal workflow or activity on an engine embedded in the
horizon daemon, so a run survives crashes, sleep and reboots: after one,
` + "`horizon resume`" + ` brings the daemon back and the run continues where it was.

Start here:
  horizon demo                         see the whole loop on a sample repo, no API key
  horizon doctor                       check git, opencode, the gate, the engine, models
  horizon start --model P/M "<goal>"   run a goal in the current repository
  horizon status                       what the latest run is doing (--json for scripts)
  horizon approve RUN                  let a run waiting at a checkpoint go on (--autonomy semi|supervised)

Settings come from ~/.config/horizon/config.yaml, <repo>/.horizon/config.yaml,
HORIZON_* variables (temporal.port is HORIZON_TEMPORAL_PORT) and flags, in
that order of precedence. Files live in $HORIZON_HOME (~/.local/share/horizon).

Exit codes: 0 accepted/ok, 1 run ended otherwise, 2 bad usage or input,
3 environment (missing tool, engine unreachable, daemon already running),
130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
	}
	root.PersistentFlags().StringVar(&a.repoDir, "repo", ".", "repository to work on (its .horizon/config.yaml applies)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		a.startCmd(), a.statusCmd(), a.listCmd(), a.cancelCmd(), a.resumeCmd(), a.uiCmd(),
		a.doctorCmd(), a.versionCmd(), a.serverCmd(), a.workerCmd(), a.stopCmd(), a.demoCmd(), a.gateCmd(), a.modelsCmd(), a.setCeilingCmd(), a.pauseCmd(), a.planCmd(), a.unblockCmd(), a.approveCmd(), a.fakeModelCmd(), a.historyCmd(),
		a.serviceCmd(),
		a.notifyCmd(),
	)
	return root
}

// setup resolves config once per process, then the logger.
func (a *app) setup(cmd *cobra.Command) error {
	repoDir := a.repoDir
	if top, err := gitTop(repoDir); err == nil {
		repoDir = top
	}
	cfg, err := config.Load(config.Options{Repo: repoDir, Flags: cmd.Flags(), FlagKeys: flagKeys})
	if err != nil {
		return err
	}
	a.cfg = cfg
	opts := logging.Options{Level: cfg.Log.Level, Console: a.errOut, ConsoleLevel: "warn"}
	if cmd.Annotations["filelog"] == "true" {
		opts.File = daemon.Paths{Home: cfg.Home}.LogFile()
		opts.ConsoleLevel = ""
	}
	l, closer, err := logging.New(opts)
	if err != nil {
		return err
	}
	a.log, a.logClose = l, closer
	return nil
}

func gitTop(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no git repository")
		}
	}
}

func (a *app) paths() daemon.Paths { return daemon.Paths{Home: a.cfg.Home} }

// dial connects to the engine. With autostart and the embedded engine, it
// first starts the daemon when none is running, and waits until it answers.
func (a *app) dial(ctx context.Context, autostart bool) (client.Client, error) {
	if a.cfg.Embedded() {
		if _, running := daemon.Running(a.paths()); !running {
			if !autostart {
				return nil, exitErr{code: ExitEnvironment, msg: "no horizon server is running for " + a.cfg.Home + "; `horizon resume` starts it (or run `horizon server` in a terminal)"}
			}
			if err := a.spawnDaemon(ctx); err != nil {
				return nil, err
			}
		}
		return engine.DialWait(ctx, a.cfg, a.log, 90*time.Second)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return engine.Dial(dctx, a.cfg, a.log)
}

func (a *app) spawnDaemon(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the horizon executable: %w", err)
	}
	// The daemon resolves its own config without a repository: hand it the
	// values this command resolved, so both agree on home and ports.
	env := append(os.Environ(),
		"HORIZON_HOME="+a.cfg.Home,
		"HORIZON_TEMPORAL_PORT="+strconv.Itoa(a.cfg.Temporal.Port),
		"HORIZON_UI_PORT="+strconv.Itoa(a.cfg.UI.Port),
		"HORIZON_UI_ENABLED="+strconv.FormatBool(a.cfg.UI.Enabled),
		"HORIZON_TEMPORAL_NAMESPACE="+a.cfg.Temporal.Namespace,
		"HORIZON_TEMPORAL_TASK_QUEUE="+a.cfg.Temporal.TaskQueue,
	)
	fmt.Fprintf(a.errOut, "starting the horizon server (engine on %s, logs in %s)…\n", a.cfg.FrontendAddress(), a.paths().Logs())
	pid, err := daemon.Spawn(a.paths(), exe, env)
	if err != nil {
		return err
	}
	if err := daemon.WaitRunning(ctx, a.paths(), pid, 60*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	// Ready means the worker polls (server.json is written then), not just
	// that the engine answers.
	if err := daemon.WaitReady(ctx, a.paths(), pid, 90*time.Second); err != nil {
		return exitErr{code: ExitEnvironment, msg: err.Error() + tailOf(a.paths().Stdout(), 1500)}
	}
	return nil
}

func tailOf(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return "\n--- " + path + " (tail) ---\n" + string(buf)
}
