package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
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
	"listen":       "temporal.listen",
	"paid-poller":  "worker.paid_poller",
	"shared-dir":   "worker.shared_dir",
}

// A command annotated annotationConfig: configOptional works, with a
// warning, when the configuration does not load (stop, version).
const (
	annotationConfig = "config"
	configOptional   = "optional"
)

// app is what every command shares: resolved config, logger, output.
type app struct {
	repoDir  string
	cfg      *config.Config
	log      zerolog.Logger
	logClose io.Closer
	// out and errOut pass everything through horizon.Safe: goals, titles,
	// model output and IDs are untrusted, and no command means to send a
	// control sequence. rawOut is the terminal itself, for the console's
	// full-screen view, which draws its own (and sanitises its cells).
	out    io.Writer
	errOut io.Writer
	rawOut io.Writer
	// connect reaches the engine for withEngine and withRun; nil is dial.
	// Tests hand in a client of their own.
	connect connector
	// starting is the pid of the daemon this command started and has not
	// yet seen take work (startEarly, dial).
	starting int
}

// Main runs the CLI and returns the process exit code.
func Main(args []string) int { return run(args, os.Stdout, os.Stderr) }

// run runs one command line with its output going to out and errOut.
func run(args []string, out, errOut io.Writer) int {
	safeOut, safeErr := horizon.NewSafeWriter(out), horizon.NewSafeWriter(errOut)
	defer func() { _ = safeOut.Flush(); _ = safeErr.Flush() }()
	a := &app{out: safeOut, errOut: safeErr, rawOut: out}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.Execute()
	if a.logClose != nil {
		_ = a.logClose.Close()
	}
	if err != nil {
		printErr(safeErr, err)
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
3 environment (missing tool, engine unreachable, daemon already running,
unusable $HORIZON_HOME), 130 interrupted; the README lists them in full.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The root runs only to show its help or refuse a word that names
		// no command: cobra's own refusal would be a plain error (exit 1).
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.HasParent() {
				return nil // help, or an unknown command: no config needed
			}
			return a.setup(cmd)
		},
	}
	root.PersistentFlags().StringVar(&a.repoDir, "repo", ".", "repository to work on (its .horizon/config.yaml applies)")
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	// Each command is built with a nil run function: it runs for real.
	// Tests build them with their own to check what the flags bind.
	root.AddCommand(
		newStartCmd(a, nil), newStatusCmd(a, nil), newListCmd(a, nil), newCancelCmd(a, nil), newResumeCmd(a, nil), newUICmd(a, nil),
		newDoctorCmd(a, nil), newVersionCmd(a, nil), newServerCmd(a, nil), newWorkerCmd(a, nil), newStopCmd(a, nil), newDemoCmd(a, nil),
		newGateCmd(a, nil), newModelsCmd(a, nil), newSetCeilingCmd(a, nil), newPauseCmd(a, nil), newPlanCmd(a, nil), newUnblockCmd(a, nil), newSkipCmd(a, nil),
		newApproveCmd(a, nil), newFakeModelCmd(a, nil), newHistoryCmd(a, nil), newGCCmd(a, nil), newMCPCmd(a, nil),
		a.serviceCmd(), a.notifyCmd(),
		newSupervisorCmd(a), newQueueCmd(a), newRoadmapCmd(a, nil), newReportCmd(a, nil),
		newSpecialistCmd(a), newConsoleCmd(a, nil), newWebCmd(a, nil), newTaskCmd(a), newLoopCmd(a, nil),
	)
	return root
}

// setup resolves config once per process, then the logger.
func (a *app) setup(cmd *cobra.Command) error {
	repoDir := a.repoDir
	if top, err := gitTop(repoDir); err == nil {
		repoDir = top
	}
	for _, u := range config.UnknownEnv(os.Environ()) {
		a.warn("%s", u)
	}
	cfg, err := config.Load(config.Options{Repo: repoDir, Flags: cmd.Flags(), FlagKeys: flagKeys})
	if err != nil {
		if cmd.Annotations[annotationConfig] != configOptional {
			return err
		}
		// A bad config must not lock a person out of stopping the daemon.
		cfg = config.Fallback(config.Options{Repo: repoDir})
		a.warn("%v\n  (%s goes on with the default settings, home %s)", err, cmd.CommandPath(), cfg.Home)
	}
	a.cfg = cfg
	opts := logging.Options{Level: cfg.Log.Level, Console: a.errOut, ConsoleLevel: "warn"}
	if cmd.Annotations["filelog"] == "true" {
		if err := checkHome(cfg.Home); err != nil {
			return err
		}
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

// warn tells the person something is off that does not stop the command.
func (a *app) warn(format string, args ...any) {
	fmt.Fprintf(a.errOut, "horizon: warning: "+format+"\n", args...)
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
