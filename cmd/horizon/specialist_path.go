package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/specialist"
)

type specialistPathOptions struct {
	app   *app
	scope scopeFlags
	json  bool
}

func newSpecialistPathCmd(a *app, runF func(context.Context, *specialistPathOptions) error) *cobra.Command {
	o := &specialistPathOptions{app: a}
	cmd := &cobra.Command{
		Use:   "path [--project|--user] [--json]",
		Short: "Print the directories specialists are read from",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistPath(o)
		},
	}
	o.scope.bind(cmd, "print only")
	cmd.Flags().BoolVar(&o.json, "json", false, `print {"user": DIR, "project": DIR} (one key with --user or --project)`)
	return cmd
}

func specialistPath(o *specialistPathOptions) error {
	a := o.app
	d := a.specialistDirs()
	out := map[string]string{}
	if !o.scope.project {
		out["user"] = d.User
	}
	if !o.scope.user {
		out["project"] = d.Project
	}
	if o.json {
		return json.NewEncoder(a.out).Encode(out)
	}
	for _, k := range []string{"project", "user"} {
		if v, ok := out[k]; ok {
			if len(out) == 1 {
				fmt.Fprintln(a.out, v)
			} else {
				fmt.Fprintf(a.out, "%-8s %s\n", k, v)
			}
		}
	}
	if len(out) == 2 {
		fmt.Fprintf(a.out, "%-8s %s\n", "builtin", strings.Join(specialist.BuiltinNames(), ", ")+" (compiled in)")
	}
	return nil
}
