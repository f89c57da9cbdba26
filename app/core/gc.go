package core

// Collecting what ended runs leave behind: their lanes and lane branches.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// GCRequest asks to remove (or with DryRun, to list) the lanes of ended
// runs as of Now.
type GCRequest struct {
	DryRun bool
	Now    time.Time
}

// GC decides, and unless dry removes, run by run: every run with a lane
// directory, and every ended run the engine lists (its lane branches may
// outlive the directory).
func (a *App) GC(ctx context.Context, req GCRequest) ([]GCEntry, error) {
	ends, err := runEnds(ctx, a.reader())
	if err != nil {
		return nil, err
	}
	return a.collect(ctx, req, ends)
}

// GCEntry is what gc did about one run.
type GCEntry struct {
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
		return true, fmt.Sprintf("ended %s ago, not completed (run.keep_failed_lanes %s)", ShortDuration(ago), ShortDuration(keep))
	}
	return false, fmt.Sprintf("ended %s ago, not completed: kept until %s (run.keep_failed_lanes %s)", ShortDuration(ago), e.closedAt.Add(keep).Local().Format(time.DateTime), ShortDuration(keep))
}

// runEnds lists the engine's runs (and planning workflows, which have
// lanes too) by ID.
func runEnds(ctx context.Context, r Reader) (map[string]runEnd, error) {
	out := map[string]runEnd{}
	for _, types := range [][]string{workflows.RunWorkflowTypes, {workflows.PlanWorkflowName}} {
		exs, err := r.ListTypes(ctx, types, "", 0)
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
			e.repo = StateFromMemo(ex.ID, ex.Memo).Repo
			out[ex.ID] = e
		}
	}
	return out, nil
}

// collect decides, and unless dry removes, run by run: every run with a
// lane directory, and every ended run the engine lists (its lane
// branches may outlive the directory).
func (a *App) collect(ctx context.Context, req GCRequest, ends map[string]runEnd) ([]GCEntry, error) {
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

	reader := a.reader()
	keep, now := a.cfg.Run.KeepFailedLanes, req.Now
	var out []GCEntry
	for _, id := range sorted {
		e, ok := ends[id]
		if !ok {
			// Not listed: make sure (visibility may lag a run just
			// started) before taking it for one the engine forgot.
			e = confirmUnknown(ctx, reader, id)
		}
		remove, why := gcDecide(e, keep, now)
		entry := GCEntry{RunID: id, Why: why}
		in := activities.RemoveLanesInput{RunID: id, Repo: e.repo, DryRun: req.DryRun || !remove}
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
		case req.DryRun:
			entry.Action = "would_remove"
		default:
			entry.Action = "removed"
		}
		out = append(out, entry)
	}
	return out, nil
}

// confirmUnknown asks the engine about a run its lists did not show.
func confirmUnknown(ctx context.Context, r Reader, id string) runEnd {
	st, _, err := r.Run(ctx, id)
	var nf *NotFoundError
	switch {
	case errors.As(err, &nf):
		return runEnd{}
	case err != nil || !st.Status.Terminal():
		// Unsure: treat it as open, never remove.
		return runEnd{known: true, open: true}
	}
	return runEnd{known: true, completed: st.Status == horizon.StatusCompleted, closedAt: st.UpdatedAt, repo: st.Repo}
}

// ShortDuration drops a duration's zero tails: 72h, 1h30m, 45m.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
