package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
)

type supervisorStatusOptions struct {
	app  *app
	json bool
}

func newSupervisorStatusCmd(a *app, runF func(context.Context, *supervisorStatusOptions) error) *cobra.Command {
	o := &supervisorStatusOptions{app: a}
	cmd := &cobra.Command{
		Use:   "status [--repo DIR] [--json]",
		Short: "The supervisor's state: what it waits on, its queue, its runs and its two schedules",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			a := o.app
			id, err := a.supervisorID()
			if err != nil {
				return err
			}
			return a.withEngine(cmd.Context(), false, func(h *core.App) error {
				return a.printSupervisor(cmd.Context(), h, id, o.json)
			})
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the status as JSON")
	return cmd
}

// supervisorID is the supervisor of the --repo repository.
func (a *app) supervisorID() (string, error) {
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return "", err
	}
	return horizon.SupervisorID(info.Root), nil
}

// querySupervisor reads a supervisor's state; one that does not run is
// bad input that says how to start it.
func (a *app) querySupervisor(ctx context.Context, h *core.App, id string) (*horizon.SupervisorState, error) {
	s, err := h.Supervisors().Supervisor(ctx, id)
	return s, a.supervisorNotFound(err)
}

// supervisorNotFound says a supervisor that does not run as bad input
// that says how to start it; other errors go on as they are.
func (a *app) supervisorNotFound(err error) error {
	var nf *core.SupervisorNotFoundError
	if errors.As(err, &nf) {
		dir := a.repoDir
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			dir = abs // "." names nothing to a reader
		}
		return usagef("no supervisor runs for %s; `horizon supervisor start --repo %s` starts one", dir, dir)
	}
	return err
}

func (a *app) printSupervisor(ctx context.Context, h *core.App, id string, asJSON bool) error {
	view, err := h.SupervisorView(ctx, id)
	if err != nil {
		return a.supervisorNotFound(err)
	}
	if asJSON {
		enc := json.NewEncoder(a.out)
		enc.SetIndent("", "  ")
		return enc.Encode(view)
	}
	writeSupervisor(a.out, view)
	return nil
}

// writeSupervisor prints a supervisor's status as text.
func writeSupervisor(w io.Writer, view *core.SupervisorView) {
	s := view.Supervisor
	fmt.Fprintf(w, "supervisor %s\nrepo       %s (base %s, work lands on horizon/roadmap)\nstatus     %s · autonomy %s\n", s.ID, s.Repo, s.Base, s.Status, s.Autonomy)
	if s.Ended != "" {
		fmt.Fprintf(w, "ended      %s in the engine; `horizon supervisor start --repo %s` starts it again\n", s.Ended, s.Repo)
	}
	if s.Retrying != "" {
		fmt.Fprintf(w, "retrying   %s\n", s.Retrying)
	}
	if s.Waiting != "" {
		fmt.Fprintf(w, "waiting    since %s: %s\n", s.WaitingSince.Local().Format("2006-01-02 15:04"), s.Waiting)
	}
	if s.Outage != nil {
		// What the decomposition in flight waits out, as `horizon status`
		// shows a run's: the workflow cannot see its child's retries.
		fmt.Fprintf(w, "outage     %s\n", s.Outage.Line())
	}
	if s.RoadmapError != "" {
		// Nothing more is decomposed until the base branch has a
		// roadmap that reads: say so where a person looks first.
		fmt.Fprintf(w, "roadmap    waits for a fix on %s: %s\n", s.Base, oneLine(s.RoadmapError, 200))
	}
	fmt.Fprintf(w, "queue      %s\n", plural(s.Queue.Len(), "entry"))
	for _, e := range s.Queue.Entries {
		mark := ""
		if s.NeedsApproval(e) {
			_, command := horizon.PlanApproval(s.Repo, e)
			mark = "  (waits for approval: " + command + ")"
		}
		fmt.Fprintf(w, "  %-5s %-5s %s%s\n", e.ID, e.Kind, oneLine(e.Goal, 70), mark)
	}
	runs := s.Runs[max(0, len(s.Runs)-10):]
	fmt.Fprintf(w, "runs       %d started, %d decompositions\n", len(s.Runs), s.Decompositions)
	for _, r := range runs {
		fmt.Fprintf(w, "  %s  %-9s %s\n", r.RunID, r.Status, oneLine(r.Goal, 60))
	}
	for _, sc := range view.Schedules {
		next := "-"
		if len(sc.Next) > 0 {
			next = sc.Next[0].Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "schedule   %s  %q %s, next %s, catch-up %s\n", sc.ID, sc.Cron, sc.TimeZone, next, sc.CatchupWindow)
	}
}

type supervisorUpdateOptions struct {
	app  *app
	name string
}

// newSupervisorUpdateCmd is pause, resume and stop: one update each.
func newSupervisorUpdateCmd(a *app, use, update, short string, runF func(context.Context, *supervisorUpdateOptions) error) *cobra.Command {
	o := &supervisorUpdateOptions{app: a, name: update}
	return &cobra.Command{
		Use:   use + " [--repo DIR]",
		Short: short,
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return supervisorUpdate(cmd.Context(), o)
		},
	}
}

func supervisorUpdate(ctx context.Context, o *supervisorUpdateOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		sv := h.Supervisors()
		verb := map[string]func(context.Context, string) (*horizon.SupervisorState, error){
			"pause": sv.Pause, "resume": sv.Resume, "stop": sv.Stop,
		}[o.name]
		s, err := verb(ctx, id)
		if err != nil {
			return supervisorError(err)
		}
		if o.name == "stop" {
			fmt.Fprintln(a.out, stopMessage(s))
			return nil
		}
		fmt.Fprintf(a.out, "supervisor of %s: %s\n", s.Repo, s.Status)
		return nil
	})
}

// stopMessage is what `supervisor stop` says: stopped, or stopping and
// exactly what the supervisor still waits for before it ends.
func stopMessage(s *horizon.SupervisorState) string {
	if s.Status == horizon.SupervisorStopped {
		return fmt.Sprintf("supervisor of %s stopped; its runs go on; `horizon supervisor start` starts it again", s.Repo)
	}
	waits, ok := strings.CutPrefix(s.Waiting, "stopping: ")
	if !ok {
		waits = "it finishes its current step"
	}
	return fmt.Sprintf("supervisor of %s stopping: %s, then it ends, starting nothing new; its runs go on; `horizon supervisor status --repo %s` shows when it has stopped", s.Repo, waits, s.Repo)
}

type supervisorTriggerOptions struct {
	app  *app
	what string
}

func newSupervisorTriggerCmd(a *app, runF func(context.Context, *supervisorTriggerOptions) error) *cobra.Command {
	o := &supervisorTriggerOptions{app: a}
	return &cobra.Command{
		Use:   "trigger decompose|daily [--repo DIR]",
		Short: "Run a schedule's action now (Temporal's trigger): the nightly decomposition or the daily pass",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.what = args[0]
			if o.what != "decompose" && o.what != "daily" {
				return usagef("supervisor trigger: %q is neither decompose nor daily", o.what)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return supervisorTrigger(cmd.Context(), o)
		},
	}
}

func supervisorTrigger(ctx context.Context, o *supervisorTriggerOptions) error {
	a := o.app
	id, err := a.supervisorID()
	if err != nil {
		return err
	}
	sid := horizon.DailyScheduleID
	if o.what == "decompose" {
		sid = horizon.DecomposeScheduleID(id)
	}
	return a.withEngine(ctx, false, func(h *core.App) error {
		if err := h.Supervisors().Trigger(ctx, sid); err != nil {
			var nf *core.ScheduleNotFoundError
			if errors.As(err, &nf) {
				return usageError{err}
			}
			return err
		}
		fmt.Fprintf(a.out, "triggered %s (%s)\n", sid, strings.ReplaceAll(o.what, "daily", "the daily pass"))
		return nil
	})
}
