package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// newQueueCmd is `horizon queue`: the supervisor's goal queue.
func newQueueCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue add|list|rm|move",
		Short: "The repository's goal queue: what its supervisor runs next",
		Long: `The supervisor of a repository runs its queue from the top, one planned run
at a time: goals you add, and plans the lead made of roadmap items. The
queue lives in the supervisor (durable in the engine); ` + "`horizon supervisor start`" + `
first.`,
		Args: subcommandArgs("add, list, rm or move"),
	}
	cmd.AddCommand(newQueueAddCmd(a, nil), newQueueListCmd(a, nil), newQueueRmCmd(a, nil), newQueueMoveCmd(a, nil))
	return cmd
}

// QueueView is one entry of `queue list --json`.
type QueueView = core.QueueView

type queueEntryOptions struct {
	app *app
	id  string
	top bool
}

// queueChange applies one of the core's queue verbs to entry o.id.
func queueChange(ctx context.Context, o *queueEntryOptions, verb func(core.Supervisors, context.Context, string, string) (*horizon.SupervisorState, error)) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		s, err := verb(h.Supervisors(), ctx, id, o.id)
		if err != nil {
			return supervisorError(err)
		}
		var ids []string
		for _, e := range s.Queue.Entries {
			ids = append(ids, e.ID)
		}
		fmt.Fprintf(a.out, "queue: %s\n", orDash(strings.Join(ids, " ")))
		return nil
	})
}
