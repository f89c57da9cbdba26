package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/specialist"
)

type specialistShowOptions struct {
	app  *app
	name string
	json bool
}

func newSpecialistShowCmd(a *app, runF func(context.Context, *specialistShowOptions) error) *cobra.Command {
	o := &specialistShowOptions{app: a}
	cmd := &cobra.Command{
		Use:   "show NAME [--json]",
		Short: "Show one specialist: where it comes from, what it may do, its prompt",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistShow(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the specialist as JSON (the list fields plus prompt, warnings, extends_chain)")
	return cmd
}

func specialistShow(ctx context.Context, o *specialistShowOptions) error {
	a := o.app
	set, err := a.loadSpecialists()
	if err != nil {
		return err
	}
	sp, err := set.Get(o.name)
	if err != nil {
		return usageError{err}
	}
	for _, w := range sp.Warnings {
		a.warn("%s: %s", sp.Path, w)
	}
	binds := a.bindModels(ctx, []*specialist.Specialist{sp})
	if o.json {
		j := toJSON(sp, binds)
		j.Untrusted = a.untrusted(sp)
		return json.NewEncoder(a.out).Encode(j)
	}
	w := a.out
	fmt.Fprintf(w, "%s  (%s, %s)\n", sp.Name, sp.Scope, sp.Path)
	if a.untrusted(sp) {
		fmt.Fprintf(w, "not run    a project specialist runs only in a repository you trust (specialists.trust_project)\n")
	}
	if sp.Description != "" {
		fmt.Fprintf(w, "  %s\n", sp.Description)
	}
	for _, p := range sp.Overrides {
		fmt.Fprintf(w, "overrides  %s\n", p)
	}
	if len(sp.Chain) > 1 {
		fmt.Fprintf(w, "extends    %s\n", strings.Join(sp.Chain[1:], " → "))
	}
	fmt.Fprintf(w, "role       %s\n", dash(sp.Role))
	fmt.Fprintf(w, "model      %s", modelCell(sp, binds))
	if b, ok := binds[sp.Name]; ok {
		if b.Available() {
			fmt.Fprintf(w, " (%s)", b.Source)
		} else {
			fmt.Fprintf(w, ": %s", b.Unavailable)
		}
	}
	fmt.Fprintln(w)
	if sp.ReasoningEffort != "" {
		fmt.Fprintf(w, "reasoning  %s\n", sp.ReasoningEffort)
	}
	access := "may write files or run a shell"
	if sp.ReadOnly() {
		access = "read-only"
	}
	fmt.Fprintf(w, "tools      %s (%s; permissions %s)\n", dash(strings.Join(sp.Tools, ", ")), access,
		dash(strings.Join(specialist.Permissions(sp.Tools), ", ")))
	fmt.Fprintf(w, "\n%s\n", sp.Prompt)
	return nil
}
