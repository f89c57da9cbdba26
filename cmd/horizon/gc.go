package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/core"
	"github.com/horizon/horizon/workflows"
)

type gcOptions struct {
	app    *app
	dryRun bool
	json   bool
	// now is the clock (tests set it).
	now func() time.Time
}

func newGCCmd(a *app, runF func(context.Context, *gcOptions) error) *cobra.Command {
	o := &gcOptions{app: a, now: time.Now}
	cmd := &cobra.Command{
		Use:   "gc [--dry-run] [--json]",
		Short: "Remove the lanes and lane branches of ended runs",
		Long: `Remove what ended runs leave behind: their lanes (git worktrees under
$HORIZON_HOME/lanes/<run>) and lane branches (horizon-lanes/<run>/* in the
repository). A run's integration branch horizon/<run> is its result and is
never removed.

A run removes its own lanes when it completes, and when it fails if
run.keep_failed_lanes is 0. gc removes the rest: the lanes of runs that
ended more than run.keep_failed_lanes ago (default 72h; completed runs at
once), and lanes of runs the engine no longer knows. A run that is still
open (running, waiting, blocked) is never touched. Needs the engine
(` + "`horizon resume`" + ` starts it).

--json prints an array of {run_id, action (removed, would_remove, kept,
skipped), why, dir, repo, branches, error}.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return gcRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "only say what would be removed")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (an array of {run_id, action, why, dir, repo, branches, error})")
	return cmd
}

// gcEntry is what gc did about one run.
type gcEntry struct {
	RunID    string   `json:"run_id"`
	Action   string   `json:"action"`
	Why      string   `json:"why"`
	Dir      string   `json:"dir,omitempty"`
	Repo     string   `json:"repo,omitempty"`
	Branches []string `json:"branches,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// runEnd is what the engine says about a run, for gc.
type runEnd struct {
	known     bool
	open      bool
	completed bool
	closedAt  time.Time
	repo      string
}

// gcDecide says whether a run's lanes go: never while it is open; at once
// when it completed or the engine does not know it; else once it ended
// keep ago.
func gcDecide(e runEnd, keep time.Duration, now time.Time) (remove bool, why string) {
	switch {
	case !e.known:
		return true, "the engine does not know the run"
	case e.open:
		return false, "the run is open"
	case e.completed:
		return true, "completed"
	}
	ago := now.Sub(e.closedAt).Truncate(time.Minute)
	if ago >= keep {
		return true, fmt.Sprintf("ended %s ago, not completed (run.keep_failed_lanes %s)", shortDuration(ago), shortDuration(keep))
	}
	return false, fmt.Sprintf("ended %s ago, not completed: kept until %s (run.keep_failed_lanes %s)", shortDuration(ago), e.closedAt.Add(keep).Local().Format(time.DateTime), shortDuration(keep))
}

func gcRun(ctx context.Context, o *gcOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(c client.Client) error {
		ends, err := runEnds(ctx, core.Reader{Client: c, Namespace: a.cfg.Temporal.Namespace})
		if err != nil {
			return err
		}
		entries, err := a.collect(ctx, o, c, ends)
		if err != nil {
			return err
		}
		return a.printGC(o, entries)
	})
}

// runEnds lists the engine's runs (and planning workflows, which have
// lanes too) by ID.
func runEnds(ctx context.Context, r core.Reader) (map[string]runEnd, error) {
	out := map[string]runEnd{}
	for _, typ := range []string{workflows.RunWorkflowName, workflows.PlanWorkflowName} {
		exs, err := r.List(ctx, typ, "", 0)
		if err != nil {
			return nil, err
		}
		for _, ex := range exs {
			e := runEnd{known: true, closedAt: ex.ClosedAt}
			switch ex.Status {
			case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
				e.open = true
			case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
				e.completed = true
			}
			e.repo = core.StateFromMemo(ex.ID, ex.Memo).Repo
			out[ex.ID] = e
		}
	}
	return out, nil
}

// collect decides, and unless dry removes, run by run: every run with a
// lane directory, and every ended run the engine lists (its lane
// branches may outlive the directory).
func (a *app) collect(ctx context.Context, o *gcOptions, c client.Client, ends map[string]runEnd) ([]gcEntry, error) {
	ids := map[string]bool{}
	for id, e := range ends {
		if !e.open {
			ids[id] = true
		}
	}
	lanes := filepath.Join(a.cfg.Home, "lanes")
	dirs, err := os.ReadDir(lanes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gc: %w", err)
	}
	for _, d := range dirs {
		// _supervisor and the like are not runs' lanes.
		if d.IsDir() && !strings.HasPrefix(d.Name(), "_") && !strings.HasPrefix(d.Name(), ".") {
			ids[d.Name()] = true
		}
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)

	reader := core.Reader{Client: c, Namespace: a.cfg.Temporal.Namespace}
	keep, now := a.cfg.Run.KeepFailedLanes, o.now()
	var out []gcEntry
	for _, id := range sorted {
		e, ok := ends[id]
		if !ok {
			// Not listed: make sure (visibility may lag a run just
			// started) before taking it for one the engine forgot.
			e = confirmUnknown(ctx, reader, id)
		}
		remove, why := gcDecide(e, keep, now)
		entry := gcEntry{RunID: id, Why: why}
		in := activities.RemoveLanesInput{RunID: id, Repo: e.repo, DryRun: o.dryRun || !remove}
		res, err := activities.RemoveRunLanes(ctx, a.cfg.Home, in)
		entry.Dir, entry.Repo, entry.Branches = res.Dir, res.Repo, res.Branches
		switch {
		case err != nil:
			entry.Action, entry.Error = "failed", err.Error()
		case res.Empty():
			continue // nothing left of this run
		case !remove && e.open:
			entry.Action = "skipped"
		case !remove:
			entry.Action = "kept"
		case o.dryRun:
			entry.Action = "would_remove"
		default:
			entry.Action = "removed"
		}
		out = append(out, entry)
	}
	return out, nil
}

// confirmUnknown asks the engine about a run its lists did not show.
func confirmUnknown(ctx context.Context, r core.Reader, id string) runEnd {
	st, _, err := r.Run(ctx, id)
	var nf *core.NotFoundError
	switch {
	case errors.As(err, &nf):
		return runEnd{}
	case err != nil || !st.Status.Terminal():
		// Unsure: treat it as open, never remove.
		return runEnd{known: true, open: true}
	}
	return runEnd{known: true, completed: st.Status == horizon.StatusCompleted, closedAt: st.UpdatedAt, repo: st.Repo}
}

func (a *app) printGC(o *gcOptions, entries []gcEntry) error {
	failed := 0
	for _, e := range entries {
		if e.Error != "" {
			failed++
		}
	}
	if o.json {
		if entries == nil {
			entries = []gcEntry{}
		}
		if err := json.NewEncoder(a.out).Encode(entries); err != nil {
			return err
		}
	} else {
		if len(entries) == 0 {
			fmt.Fprintln(a.out, "nothing to remove: no lanes or lane branches of ended runs")
		}
		for _, e := range entries {
			what := []string{}
			if e.Dir != "" {
				what = append(what, "lanes "+e.Dir)
			}
			if len(e.Branches) > 0 {
				what = append(what, "branches "+strings.Join(e.Branches, " "))
			}
			verb := strings.ReplaceAll(e.Action, "_", " ")
			fmt.Fprintf(a.out, "%-12s %s: %s (%s)\n", verb, e.RunID, strings.Join(what, ", "), e.Why)
			if e.Error != "" {
				fmt.Fprintf(a.out, "%-12s %s\n", "", e.Error)
			}
		}
	}
	if failed > 0 {
		return exitErr{code: ExitRunEnded, msg: fmt.Sprintf("gc: %d of %d runs' lanes could not be removed", failed, len(entries))}
	}
	return nil
}
