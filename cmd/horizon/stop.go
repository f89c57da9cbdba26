package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/daemon"
)

type stopOptions struct {
	app     *app
	timeout time.Duration
}

func newStopCmd(a *app, runF func(context.Context, *stopOptions) error) *cobra.Command {
	o := &stopOptions{app: a}
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon cleanly and wait until it has stopped",
		Long: `Ask the daemon of $HORIZON_HOME to stop (SIGTERM) and wait. Runs are not
cancelled: they continue at the next ` + "`horizon resume`" + ` or ` + "`horizon start`" + `.

stop works when the configuration does not load: it warns, and looks in
the home it can still read (HORIZON_HOME, a home: key, else the default).`,
		Args:        noArgs(),
		Annotations: map[string]string{annotationConfig: configOptional},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return stopRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 60*time.Second, "how long to wait")
	return cmd
}

func stopRun(_ context.Context, o *stopOptions) error {
	a := o.app
	pid, err := daemon.Stop(a.paths(), o.timeout)
	if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(a.out, "no horizon server is running")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "horizon server (pid %d) stopped\n", pid)
	return nil
}
