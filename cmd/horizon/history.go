package main

import (
	"fmt"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// historyCmd exports a run's event history as JSON: for bug reports, and
// for the workflows' replay tests (testdata/*.json), which fail the build
// when a code change would break determinism for runs in flight.
func (a *app) historyCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "history RUN",
		Short:  "Print a run's Temporal event history as JSON",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.dial(ctx, false)
			if err != nil {
				return err
			}
			defer c.Close()
			it := c.GetWorkflowHistory(ctx, args[0], "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			h := &historypb.History{}
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return fmt.Errorf("history of %s: %w", args[0], err)
				}
				h.Events = append(h.Events, ev)
			}
			b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.out, string(b))
			return err
		},
	}
}
