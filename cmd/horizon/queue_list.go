package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

type queueListOptions struct {
	app  *app
	json bool
}

func newQueueListCmd(a *app, runF func(context.Context, *queueListOptions) error) *cobra.Command {
	o := &queueListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--repo DIR] [--json]",
		Short: "The queue, next first",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return queueList(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the queue as JSON")
	return cmd
}

func queueList(ctx context.Context, o *queueListOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		s, err := a.querySupervisor(ctx, h, id)
		if err != nil {
			return err
		}
		views := core.QueueOf(s)
		if o.json {
			enc := json.NewEncoder(a.out)
			enc.SetIndent("", "  ")
			return enc.Encode(views)
		}
		if len(views) == 0 {
			fmt.Fprintln(a.out, "the queue is empty; the supervisor takes the next roadmap item (`horizon roadmap` lists them)")
			return nil
		}
		for _, v := range views {
			note := ""
			if v.WaitsForApproval {
				note = "  waits for approval: horizon approve " + v.ID
			}
			if v.Item != "" {
				note = " (roadmap " + v.Item + ")" + note
			}
			fmt.Fprintf(a.out, "%-5s %-5s %s%s\n", v.ID, v.Kind, oneLine(v.Goal, 70), note)
		}
		return nil
	})
}
