package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/ladder"
)

type modelsReport struct {
	Leaderboard string                   `json:"leaderboard"`
	Forced      string                   `json:"forced,omitempty"`
	Connected   []string                 `json:"connected"`
	Roles       map[string]ladder.Choice `json:"roles"`
	Unavailable map[string]string        `json:"unavailable,omitempty"`
	// Appliers say whether Claude Code and Codex CLI are there and
	// connected: their routes are connected only then.
	Appliers []core.ApplierStatus `json:"appliers"`
}

type modelsOptions struct {
	app  *app
	json bool
}

func newModelsCmd(a *app, runF func(context.Context, *modelsOptions) error) *cobra.Command {
	o := &modelsOptions{app: a}
	cmd := &cobra.Command{
		Use:   "models [--repo DIR] [--json]",
		Short: "Show which model each role gets, and why",
		Long: `Show, for each role (lead, quick, build, explore, analyze, research; a run's
worker uses build, its auditor analyze), the model horizon would choose: the
lowest-ranked entry of the leaderboard with a route your OpenCode
configuration can reach from the repository. There is no cross-role
fallback: a role without a reachable model is listed as unavailable.

The leaderboard is bundled (zilX models.json format); models.file replaces
it. models.default (HORIZON_MODELS_DEFAULT) overrides every role, as
` + "`horizon start --model`" + ` does for one run; the report shows it as forced.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return modelsRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print {leaderboard, forced, connected, roles: {role: {model, route, rank, cost_class, why}}, unavailable}")
	return cmd
}

func modelsRun(ctx context.Context, o *modelsOptions) error {
	a := o.app
	lb, err := core.LoadLeaderboard(a.cfg)
	if err != nil {
		return err
	}
	connected, err := core.ConnectedModels(ctx, a.cfg, a.repoDir)
	if err != nil {
		return err
	}
	rep := modelsReport{Leaderboard: "bundled", Forced: a.cfg.Models.Default, Connected: connected, Unavailable: map[string]string{},
		Appliers: core.Appliers(ctx, a.cfg)}
	if a.cfg.Models.File != "" {
		rep.Leaderboard = a.cfg.Models.File
	}
	rep.Roles, err = lb.ResolveAll(connected)
	for _, e := range core.Unwrap(err) {
		var nm *ladder.NoModelError
		if errors.As(e, &nm) {
			rep.Unavailable[nm.Role] = e.Error()
		}
	}
	if o.json {
		return json.NewEncoder(a.out).Encode(rep)
	}
	fmt.Fprintf(a.out, "leaderboard %s · %s reachable\n", rep.Leaderboard, plural(len(connected), "model"))
	version := map[string]string{"opencode": "OpenCode"}
	for _, st := range rep.Appliers {
		state := "connected: " + st.Why
		if !st.Connected {
			state = st.Why
		} else {
			version[string(st.Kind)] = string(st.Kind) + " " + st.Version
		}
		fmt.Fprintf(a.out, "%-11s %s\n", st.Kind, state)
	}
	if len(connected) > 0 {
		// The names a --model may take, not only their count.
		shown := connected[:min(len(connected), 20)]
		more := ""
		if len(connected) > len(shown) {
			more = fmt.Sprintf(" and %d more (--json lists all)", len(connected)-len(shown))
		}
		fmt.Fprintf(a.out, "reachable   %s%s\n", strings.Join(shown, ", "), more)
	}
	if rep.Forced != "" {
		fmt.Fprintf(a.out, "models.default %s overrides every role\n", rep.Forced)
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tMODEL\tAPPLIER\tRANK\tCOST\tWHY")
	for _, role := range ladder.Roles() {
		if c, ok := rep.Roles[role]; ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", role, c.Route, version[core.ApplierOf(c.Route)], c.Rank, c.CostClass, c.Why)
		} else {
			fmt.Fprintf(tw, "%s\t–\t\t\t\t%s\n", role, rep.Unavailable[role])
		}
	}
	return tw.Flush()
}
