package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/specialist"
)

type specialistDeleteOptions struct {
	app   *app
	name  string
	scope scopeFlags
	json  bool
}

func newSpecialistDeleteCmd(a *app, runF func(context.Context, *specialistDeleteOptions) error) *cobra.Command {
	o := &specialistDeleteOptions{app: a}
	cmd := &cobra.Command{
		Use:   "delete NAME [--project|--user] [--json]",
		Short: "Delete a specialist manifest (the scope that defines it unless --project or --user)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if err := specialist.ValidName(o.name); err != nil {
				return usageError{err}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistDelete(o)
		},
	}
	o.scope.bind(cmd, "delete from")
	cmd.Flags().BoolVar(&o.json, "json", false, `print {"name", "scope", "path", "deleted"}`)
	return cmd
}

func specialistDelete(o *specialistDeleteOptions) error {
	a := o.app
	path, scope, err := a.manifestIn(o.name, o.scope)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("specialist delete: %w", err)
	}
	if o.json {
		return json.NewEncoder(a.out).Encode(map[string]any{"name": o.name, "scope": scope, "path": path, "deleted": true})
	}
	fmt.Fprintf(a.out, "deleted %s specialist %s (%s)\n", scope, o.name, path)
	return nil
}
