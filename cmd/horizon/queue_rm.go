package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

func newQueueRmCmd(a *app, runF func(context.Context, *queueEntryOptions) error) *cobra.Command {
	o := &queueEntryOptions{app: a}
	return &cobra.Command{
		Use:   "rm ID [--repo DIR]",
		Short: "Drop a queue entry (a roadmap item's plan removed is not decomposed again)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("queue entry", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueChange(cmd.Context(), o, core.Supervisors.QueueRemove)
		},
	}
}
