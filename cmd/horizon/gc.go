package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
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

func gcRun(ctx context.Context, o *gcOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(h *core.App) error {
		entries, err := h.GC(ctx, core.GCRequest{DryRun: o.dryRun, Now: o.now()})
		if err != nil {
			return err
		}
		return a.printGC(o, entries)
	})
}

func (a *app) printGC(o *gcOptions, entries []core.GCEntry) error {
	failed := 0
	for _, e := range entries {
		if e.Error != "" {
			failed++
		}
	}
	if o.json {
		if entries == nil {
			entries = []core.GCEntry{}
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
