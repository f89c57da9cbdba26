package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

type taskListOptions struct {
	app  *app
	json bool
}

func newTaskListCmd(a *app, runF func(context.Context, *taskListOptions) error) *cobra.Command {
	o := &taskListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List background tasks, newest first",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return taskList(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of {id, status, specialist, agent, model, session, repo, dir, branch, commit, prompt, turns, follow_ups, cost, error, created_at, started_at, updated_at, ended_at}")
	return cmd
}

func taskList(o *taskListOptions) error {
	a := o.app
	ts, err := core.TaskRecords(a.cfg).List()
	if err != nil {
		return err
	}
	if o.json {
		if ts == nil {
			ts = []core.TaskMeta{}
		}
		return json.NewEncoder(a.out).Encode(ts)
	}
	if len(ts) == 0 {
		fmt.Fprintln(a.out, "no tasks; `horizon task run SPECIALIST \"<prompt>\"` starts one")
		return nil
	}
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tSPECIALIST\tMODEL\tTURNS\tSTARTED\tPROMPT")
	for _, m := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.ID, m.Status, m.Specialist, orDash(m.Model), max(m.Turns, 1), m.CreatedAt.Local().Format(time.DateTime), oneLine(m.Prompt, 50))
	}
	return tw.Flush()
}
