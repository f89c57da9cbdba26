package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

func newQueueMoveCmd(a *app, runF func(context.Context, *queueEntryOptions) error) *cobra.Command {
	o := &queueEntryOptions{app: a}
	cmd := &cobra.Command{
		Use:   "move ID --top [--repo DIR]",
		Short: "Move a queue entry to the top",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("queue entry", args[0])
			if err != nil {
				return err
			}
			o.id = id
			if !o.top {
				return usagef("queue move: say where: --top")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueChange(cmd.Context(), o, core.Supervisors.QueueMove)
		},
	}
	cmd.Flags().BoolVar(&o.top, "top", false, "to the top of the queue")
	return cmd
}
