package main

import (
	"context"

	"github.com/spf13/cobra"
)

type workerOptions struct{ app *app }

func newWorkerCmd(a *app, runF func(context.Context, *workerOptions) error) *cobra.Command {
	o := &workerOptions{app: a}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run only a worker against a remote engine (temporal.address)",
		Long: `Run a worker for a remote Temporal cluster: set temporal.address (and
temporal.namespace, temporal.tls.* or temporal.api_key) in config or as
HORIZON_TEMPORAL_* variables. The worker runs agent sessions and gates on
this machine. Several workers may join one engine, each with its own
$HORIZON_HOME (its lock, logs and OpenCode's session store) and all with
the same worker.shared_dir (--shared-dir: lanes, runs, spend, reports) and
the repositories at the same paths; exactly one sets worker.paid_poller
(--paid-poller). README: Running on a cluster.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return workerRun(cmd.Context(), o)
		},
	}
	cmd.Flags().Bool("paid-poller", true, "poll the paid queue (worker.paid_poller): exactly one worker per engine")
	cmd.Flags().String("shared-dir", "", "directory every worker shares (worker.shared_dir)")
	cmd.Annotations = map[string]string{"filelog": "true"}
	return cmd
}

func workerRun(ctx context.Context, o *workerOptions) error { return o.app.serve(ctx, false) }
