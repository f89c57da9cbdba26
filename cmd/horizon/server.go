package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/daemon"
)

type serverOptions struct {
	app        *app
	engineOnly bool
}

func newServerCmd(a *app, runF func(context.Context, *serverOptions) error) *cobra.Command {
	o := &serverOptions{app: a}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the daemon in the foreground: embedded engine, Web UI and worker",
		Long: `Run the horizon daemon in the foreground: the embedded Temporal engine (a
SQLite file in $HORIZON_HOME), the Web UI, and the worker that runs
horizon's workflows and agent sessions. One daemon runs per $HORIZON_HOME.

` + "`horizon start`" + ` and ` + "`horizon resume`" + ` start it in the background when needed;
run it yourself to watch its log. SIGINT or SIGTERM (` + "`horizon stop`" + `) stops it
cleanly; a run in flight continues at the next start.

With --engine-only it runs just the engine and the Web UI, for ` + "`horizon worker`" + `
processes elsewhere to join (README: Running on a cluster). The engine
listens on 127.0.0.1 unless temporal.listen (--listen) names another
address; then it serves TLS under its own certificate
($HORIZON_HOME/engine-cert.pem) and admits only the engine token
($HORIZON_HOME/engine.token) as API key. engine.database: postgres keeps its
state in PostgreSQL (engine.postgres.dsn) instead of a SQLite file.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return serverRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.engineOnly, "engine-only", false, "run the engine and Web UI only, no worker")
	cmd.Flags().String("listen", "", "IP the engine listens on (temporal.listen; default 127.0.0.1)")
	cmd.Annotations = map[string]string{"filelog": "true"}
	return cmd
}

func serverRun(ctx context.Context, o *serverOptions) error {
	return o.app.serveWith(ctx, true, o.engineOnly)
}

// serve runs the daemon until SIGINT or SIGTERM: with the embedded engine
// (`horizon server`) or against a remote one (`horizon worker`).
func (a *app) serve(ctx context.Context, withEngine bool) error {
	return a.serveWith(ctx, withEngine, false)
}

func (a *app) serveWith(ctx context.Context, withEngine, engineOnly bool) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return daemon.Serve(ctx, daemon.Options{
		Config:     a.cfg,
		Logger:     a.log,
		Engine:     withEngine,
		EngineOnly: engineOnly,
		Ready: func(i daemon.Info) {
			what := "horizon server"
			if engineOnly {
				what = "horizon engine (no worker)"
			}
			fmt.Fprintf(a.errOut, "%s ready (pid %d): engine %s", what, i.PID, i.Frontend)
			if i.UI != "" {
				fmt.Fprintf(a.errOut, ", Web UI %s", i.UI)
			}
			fmt.Fprintf(a.errOut, ", logs %s\n", a.paths().Logs())
		},
	})
}
