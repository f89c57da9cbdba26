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
this machine, in lanes under $HORIZON_HOME.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return workerRun(cmd.Context(), o)
		},
	}
	cmd.Annotations = map[string]string{"filelog": "true"}
	return cmd
}

func workerRun(ctx context.Context, o *workerOptions) error { return o.app.serve(ctx, false) }
