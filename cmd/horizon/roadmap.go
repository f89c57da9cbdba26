package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
)

type roadmapOptions struct {
	app  *app
	json bool
}

func newRoadmapCmd(a *app, runF func(context.Context, *roadmapOptions) error) *cobra.Command {
	o := &roadmapOptions{app: a}
	cmd := &cobra.Command{
		Use:   "roadmap [--repo DIR] [--json]",
		Short: "The roadmap's items and their state: unplanned, decomposing, planned, queued, running, done, blocked, stalled",
		Long: `The roadmap is .horizon/roadmap.md (supervisor.roadmap) on the repository's
base branch, as committed: horizon never writes it. An item is a top-level
task line; indented lines under it are details for the lead; "- [x]" items
are done by you and skipped; "{#id}" at the end of a line pins an item's ID
(else it is a hash of its title, so editing details keeps it).

    # Roadmap
    - [ ] Parse ISO dates in the report command
      Accept 2026-12-01 and 2026-12-01T09:00Z; reject the rest with a message.
    - [ ] Add CSV export {#csv}
    - [x] Already done by hand

The supervisor decomposes each open item once and runs its plan once; the
runs' commits land on the branch horizon/roadmap. To take them:

    git merge horizon/roadmap          # or: git rebase, or a pull request`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return roadmapShow(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the items as JSON")
	return cmd
}

func roadmapShow(ctx context.Context, o *roadmapOptions) error {
	a := o.app
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return err
	}
	path := a.cfg.Supervisor.Roadmap
	base := strings.TrimPrefix(info.Ref, "refs/heads/")
	var sup *horizon.SupervisorState
	// A running supervisor knows its base and its records; without one,
	// every open item is unplanned.
	_ = a.withEngine(ctx, false, func(h *core.App) error {
		s, err := a.querySupervisor(ctx, h, horizon.SupervisorID(info.Root))
		if err == nil {
			sup = s
		}
		return nil
	})
	v, err := core.RoadmapOf(ctx, info.Root, base, path, sup)
	if err != nil {
		return usageError{err}
	}
	ref, base := v.RoadmapRef, v.Base
	// A roadmap with errors is bad input: the listing is printed, and the
	// exit code says it too, for scripts.
	var bad error
	if ref.Error != "" {
		bad = exitErr{code: ExitUsage}
	}
	if o.json {
		enc := json.NewEncoder(a.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ref); err != nil {
			return err
		}
		return bad
	}
	switch {
	case !v.Found:
		fmt.Fprintf(a.out, "no roadmap: %s is not on %s (`horizon roadmap --help` shows the format)\n", path, base)
		return nil
	case ref.Error != "":
		fmt.Fprintf(a.out, "the roadmap has errors; the supervisor decomposes nothing until they are fixed:\n%s\n", ref.Error)
	}
	for _, it := range ref.Items {
		run := it.RunID
		if run == "" {
			run = it.Entry
		}
		fmt.Fprintf(a.out, "%-10s %-9s %-28s %s\n", it.Item, it.State, orDash(run), oneLine(it.Title, 60))
	}
	if sup != nil && sup.Tip != "" {
		fmt.Fprintf(a.out, "\nlanded work is on horizon/roadmap (%s); take it with `git merge horizon/roadmap`\n", short(sup.Tip))
	}
	return bad
}
