package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

type cancelOptions struct {
	app   *app
	runID string
	wait  time.Duration
}

func newCancelCmd(a *app, runF func(context.Context, *cancelOptions) error) *cobra.Command {
	o := &cancelOptions{app: a}
	cmd := &cobra.Command{
		Use:   "cancel RUN|LOOP",
		Short: "Cancel a run or a loop: its agent session is aborted and nothing more is committed",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			o.runID = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return cancelRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for the run to stop")
	return cmd
}

func cancelRun(ctx context.Context, o *cancelOptions) error {
	a := o.app
	return a.withRun(ctx, "cancel", o.runID, false, func(h *core.App, id string) error {
		// A closed run is refused like pause refuses it (runError).
		if err := h.Cancel(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "cancel requested for %s\n", id)
		wctx, cancel := context.WithTimeout(ctx, o.wait)
		defer cancel()
		if core.IsLoopID(id) {
			return waitLoopCancelled(wctx, a, h, id)
		}
		for {
			// A blocked one-feature run is "blocked" while it waits: the
			// run has stopped once no worker answers for it any more.
			s, live, err := fetchState(wctx, h, id)
			if err == nil && !live && s.Status.Terminal() {
				fmt.Fprintf(a.out, "run %s %s\n", id, s.Status)
				return nil
			}
			select {
			case <-wctx.Done():
				fmt.Fprintf(a.out, "still stopping (the current step is being aborted); `horizon status %s` shows when it ends\n", id)
				return nil
			case <-time.After(300 * time.Millisecond):
			}
		}
	})
}

// waitLoopCancelled waits for a cancelled loop to end: its session aborted,
// its lane committed on its branch.
func waitLoopCancelled(ctx context.Context, a *app, h *core.App, id string) error {
	l := h.Loops()
	for {
		res, ended, err := l.State(ctx, id)
		if err == nil && ended {
			fmt.Fprintf(a.out, "loop %s %s\n", id, res.Status)
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(a.out, "still stopping (the session is being aborted); the loop ends once it is\n")
			return nil
		case <-time.After(300 * time.Millisecond):
		}
	}
}
