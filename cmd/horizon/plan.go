package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
)

type planOptions struct {
	app   *app
	goal  string
	json  bool
	model string // bound to models.default; read through the config
}

func newPlanCmd(a *app, runF func(context.Context, *planOptions) error) *cobra.Command {
	o := &planOptions{app: a}
	cmd := &cobra.Command{
		Use:   `plan [--repo DIR] [--model P/M] [--json] "<goal>"`,
		Short: "Have the lead plan a goal into milestones and atomic features (nothing is changed)",
		Long: `Ask the lead (a read-only agent: it can read the repository, not edit it or
run anything) to plan the goal into milestones of atomic features, each with
acceptance criteria, the paths it may touch and its kind (mechanical,
bounded, open), plus the goal's ambiguity and the assumptions made. A plan
that does not validate goes back to the lead with every problem named, up
to three times. The plan is printed (--json: the whole plan) and nothing is
run: ` + "`horizon start`" + ` plans the same way and then runs the plan feature by
feature.`,
		Args: func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("plan needs a goal: horizon plan \"<what to achieve>\"")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkModelFlag(cmd); err != nil {
				return err
			}
			o.goal = strings.TrimSpace(strings.Join(args, " "))
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return planRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.model, "model", "m", "", "provider/model for the lead (default: models.default, else the leaderboard)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print {plan, tries, rejected, usage} as JSON")
	return cmd
}

func planRun(ctx context.Context, o *planOptions) error {
	a := o.app
	p, err := core.Prepare(ctx, a.cfg, core.StartRequest{Repo: a.repoDir, Goal: o.goal, Kind: defaultKind, BeforeModels: a.startEarly})
	if err != nil {
		a.abandonEarly(ctx)
		return err
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		fmt.Fprintf(a.errOut, "planning %s (the lead reads %s at %s)…\n", p.PlanID(), p.Repo, short(p.BaseCommit))
		res, err := h.Plan(ctx, p)
		var failed *core.PlanFailedError
		if errors.As(err, &failed) {
			for i, r := range failed.Rejected {
				fmt.Fprintf(a.errOut, "try %d rejected: %s\n", i+1, r)
			}
			return exitErr{code: ExitRunEnded, msg: failed.Reason}
		}
		if err != nil {
			return err
		}
		if o.json {
			return json.NewEncoder(a.out).Encode(res)
		}
		printPlan(a.out, res)
		return nil
	})
}

func printPlan(w io.Writer, res *core.PlanResult) {
	p := res.Plan
	fmt.Fprintf(w, "plan for: %s\nambiguity %s · %s · %d tokens · $%.4f\n", oneLine(p.Goal, 100), p.Ambiguity, plural(res.Tries, "try"), res.Usage.Tokens(), res.Usage.Cost)
	for _, m := range p.Milestones {
		fmt.Fprintf(w, "\n%s  %s\n", m.ID, m.Title)
		for _, f := range m.Features {
			fmt.Fprintf(w, "  %-6s %-10s %s\n", f.ID, f.Kind, f.Title)
			for _, c := range f.Acceptance {
				fmt.Fprintf(w, "         ✓ %s\n", c)
			}
			if len(f.Paths) > 0 {
				fmt.Fprintf(w, "         paths: %s\n", strings.Join(f.Paths, ", "))
			}
		}
	}
	if p.Ambiguity == horizon.AmbiguityHigh {
		fmt.Fprintln(w, "\nambiguity is HIGH: review the assumptions before running this plan")
	}
	if len(p.Assumptions) > 0 {
		fmt.Fprintln(w, "\nassumptions:")
		for _, s := range p.Assumptions {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}
