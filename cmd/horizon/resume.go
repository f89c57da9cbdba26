package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

type resumeOptions struct {
	app    *app
	runID  string // "": every run in progress
	follow bool
	json   bool
}

func newResumeCmd(a *app, runF func(context.Context, *resumeOptions) error) *cobra.Command {
	o := &resumeOptions{app: a}
	cmd := &cobra.Command{
		Use:   "resume [RUN]",
		Short: "After a crash or reboot: bring the daemon back and show what continues",
		Long: `Start the horizon daemon if it is not running (embedded engine), and list the
runs that continue. Runs keep their place: an agent session that was in flight
is continued (the same OpenCode session, not a new paid one), a finished step
is not repeated. With RUN, a run held by ` + "`horizon pause`" + ` goes on too.

With RUN, show that run; with --follow, follow it to its end like ` + "`horizon start`" + `
(same exit codes).`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				id, err := idArg("run", args[0])
				if err != nil {
					return err
				}
				o.runID = id
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return resumeRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the run until it ends")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the continuing runs' states as JSON")
	return cmd
}

func resumeRun(ctx context.Context, o *resumeOptions) error {
	a := o.app
	if o.runID != "" {
		return a.withRun(ctx, "resume", o.runID, true, func(h *core.App, id string) error {
			return o.resume(ctx, h, []string{id})
		})
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		runs, err := listRuns(ctx, h, core.ListRequest{Open: true})
		if err != nil {
			return err
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.RunID)
		}
		return o.resume(ctx, h, ids)
	})
}

// resume shows the runs that continue; a named run held by `horizon pause`
// goes on.
func (o *resumeOptions) resume(ctx context.Context, h *core.App, ids []string) error {
	a := o.app
	var states []*horizon.RunState
	for _, id := range ids {
		s, err := waitLive(ctx, h, id)
		if err != nil {
			return err
		}
		if s.Paused && o.runID != "" {
			if s, err = h.Resume(ctx, id); err != nil {
				return verbError(err)
			}
		}
		states = append(states, s)
	}
	if o.json && !o.follow {
		if states == nil {
			states = []*horizon.RunState{}
		}
		return json.NewEncoder(a.out).Encode(states)
	}
	if len(states) == 0 {
		fmt.Fprintln(a.out, "the horizon server is running; no run was in progress"+otherWork(h.Going(ctx)))
		return nil
	}
	for _, s := range states {
		line := fmt.Sprintf("%s  %s", s.RunID, s.Status)
		if s.Status == horizon.StatusRunning {
			line = fmt.Sprintf("%s  continuing · %s", s.RunID, s.Phase)
			if rf := runningFeature(s); rf != nil {
				line += fmt.Sprintf(" · feature %s (%s so far)", rf.ID, plural(rf.AttemptCount(), "attempt"))
			}
			if s.Waiting != nil {
				line += " · approve: " + s.ApproveCommand()
			}
			if cur := s.Current(); cur != nil {
				line += fmt.Sprintf(" · attempt %d/%d", cur.N, s.MaxAttempts)
				if cur.WorkerSession != "" && s.Phase == horizon.PhaseWorking {
					line += " · session " + cur.WorkerSession
				}
			}
		}
		fmt.Fprintf(a.out, "%s · %s\n", line, oneLine(s.Goal, 60))
	}
	if o.follow {
		if len(states) != 1 {
			return usagef("--follow needs exactly one run: horizon resume RUN --follow")
		}
		return a.followToEnd(ctx, h, states[0].RunID, o.json)
	}
	return nil
}

// waitLive gives a freshly started worker a moment to answer queries.
func waitLive(ctx context.Context, h *core.App, id string) (*horizon.RunState, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, live, err := fetchState(ctx, h, id)
		if err != nil || live || s.Status.Terminal() || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// otherWork names what goes on besides runs (supervisors, plans being
// made), for a resume that found no run: "; going on: 1 supervisor, 1
// plan being made". "" when nothing does or the engine cannot say.
func otherWork(g core.Going) string {
	var parts []string
	for _, w := range []struct {
		n         int
		one, many string
	}{
		{g.Supervisors, "supervisor", "supervisors"},
		{g.Plans, "plan being made", "plans being made"},
	} {
		switch {
		case w.n == 1:
			parts = append(parts, "1 "+w.one)
		case w.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", w.n, w.many))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; going on: " + strings.Join(parts, ", ")
}
