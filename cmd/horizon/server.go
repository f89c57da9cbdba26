package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/daemon"
)

func (a *app) serverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the daemon in the foreground: embedded engine, Web UI and worker",
		Long: `Run the horizon daemon in the foreground: the embedded Temporal engine (a
SQLite file in $HORIZON_HOME), the Web UI, and the worker that runs
horizon's workflows and agent sessions. One daemon runs per $HORIZON_HOME.

` + "`horizon start`" + ` and ` + "`horizon resume`" + ` start it in the background when needed;
run it yourself to watch its log. SIGINT or SIGTERM (` + "`horizon stop`" + `) stops it
cleanly; a run in flight continues at the next start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd, true) },
	}
	cmd.Annotations = map[string]string{"filelog": "true"}
	return cmd
}

func (a *app) workerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run only a worker against a remote engine (temporal.address)",
		Long: `Run a worker for a remote Temporal cluster: set temporal.address (and
temporal.namespace, temporal.tls.* or temporal.api_key) in config or as
HORIZON_TEMPORAL_* variables. The worker runs agent sessions and gates on
this machine, in lanes under $HORIZON_HOME.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd, false) },
	}
	cmd.Annotations = map[string]string{"filelog": "true"}
	return cmd
}

func (a *app) serve(cmd *cobra.Command, withEngine bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return daemon.Serve(ctx, daemon.Options{
		Config: a.cfg,
		Logger: a.log,
		Engine: withEngine,
		Ready: func(i daemon.Info) {
			fmt.Fprintf(a.errOut, "horizon server ready (pid %d): engine %s", i.PID, i.Frontend)
			if i.UI != "" {
				fmt.Fprintf(a.errOut, ", Web UI %s", i.UI)
			}
			fmt.Fprintf(a.errOut, ", logs %s\n", a.paths().Logs())
		},
	})
}

func (a *app) stopCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon cleanly and wait until it has stopped",
		Long: `Ask the daemon of $HORIZON_HOME to stop (SIGTERM) and wait. Runs are not
cancelled: they continue at the next ` + "`horizon resume`" + ` or ` + "`horizon start`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pid, err := daemon.Stop(a.paths(), timeout)
			if errors.Is(err, daemon.ErrNotRunning) {
				fmt.Fprintln(a.out, "no horizon server is running")
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "horizon server (pid %d) stopped\n", pid)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long to wait")
	return cmd
}
