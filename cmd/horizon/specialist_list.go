package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/config"
)

type specialistListOptions struct {
	app  *app
	json bool
}

func newSpecialistListCmd(a *app, runF func(context.Context, *specialistListOptions) error) *cobra.Command {
	o := &specialistListOptions{app: a}
	cmd := &cobra.Command{
		Use:   "list [--repo DIR] [--json]",
		Short: "List the specialists visible from the repository, with the model each resolves to",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistList(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of {name, description, role, model, tools, scope, path, overrides, read_only, untrusted, binding: {model, source, rank, unavailable}}")
	return cmd
}

func specialistList(ctx context.Context, o *specialistListOptions) error {
	a := o.app
	set, err := a.loadSpecialists()
	if err != nil {
		return err
	}
	all := set.All()
	binds := a.bindModels(ctx, all)
	if o.json {
		out := make([]specialistJSON, 0, len(all))
		for _, sp := range all {
			j := toJSON(sp, binds)
			j.Untrusted = a.untrusted(sp)
			out = append(out, j)
		}
		return json.NewEncoder(a.out).Encode(out)
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tROLE\tMODEL\tTOOLS\tDESCRIPTION")
	for _, sp := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sp.Name, sp.Scope, dash(sp.Role), modelCell(sp, binds),
			dash(strings.Join(sp.Tools, ",")), sp.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var untrusted []string
	for _, sp := range all {
		if b, ok := binds[sp.Name]; ok && !b.Available() {
			fmt.Fprintf(a.out, "%s is unavailable: %s\n", sp.Name, b.Unavailable)
		}
		if a.untrusted(sp) {
			untrusted = append(untrusted, sp.Name)
		}
	}
	if len(untrusted) > 0 {
		fmt.Fprintf(a.out, "%s: project specialists, which run only in a repository you trust: set specialists.trust_project: true in %s (or HORIZON_SPECIALISTS_TRUST_PROJECT=true) if you trust this one\n",
			strings.Join(untrusted, ", "), config.UserFilePath())
	}
	return nil
}
