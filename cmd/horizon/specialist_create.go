package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/specialist"
)

type specialistCreateOptions struct {
	app         *app
	name        string
	scope       scopeFlags
	description string
	tools       []string
	prompt      string
	role        string
	model       string
	extends     string
	force       bool
	json        bool
}

func newSpecialistCreateCmd(a *app, runF func(context.Context, *specialistCreateOptions) error) *cobra.Command {
	o := &specialistCreateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "create NAME [--project|--user] --description TEXT [--tools LIST] [--prompt TEXT] [--role ROLE] [--force] [--json]",
		Short: "Write a new specialist manifest (project scope unless --user)",
		Example: `  horizon specialist create api-review --project \
    --description "Reviews API changes" --tools read-only,plan --role analyze \
    --prompt "Review API changes for compatibility and missing tests."`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if err := specialist.ValidName(o.name); err != nil {
				return usageError{err}
			}
			if strings.TrimSpace(o.description) == "" && strings.TrimSpace(o.prompt) == "" && o.extends == "" {
				return usagef("specialist create: give --description, --prompt or --extends (the prompt is what the specialist is told)")
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistCreate(o)
		},
	}
	o.scope.bind(cmd, "write to")
	cmd.Flags().StringVar(&o.description, "description", "", "short summary shown in listings (the prompt too when --prompt is empty)")
	cmd.Flags().StringSliceVar(&o.tools, "tools", nil, "tool categories (read-only, edit, execute, plan) or OpenCode tool ids, comma-separated")
	cmd.Flags().StringVar(&o.prompt, "prompt", "", "the specialist's instructions (the manifest body)")
	cmd.Flags().StringVar(&o.role, "role", "", "zilX role whose best-ranked model it runs on (lead, quick, build, explore, analyze, research)")
	cmd.Flags().StringVar(&o.model, "model", "", "provider/model to run on instead of its role's")
	cmd.Flags().StringVar(&o.extends, "extends", "", "specialist to inherit prompt, model, role and tools from")
	cmd.Flags().BoolVar(&o.force, "force", false, "replace an existing manifest (never a symlink)")
	cmd.Flags().BoolVar(&o.json, "json", false, `print {"name", "scope", "path"}`)
	return cmd
}

func specialistCreate(o *specialistCreateOptions) error {
	a := o.app
	scope := o.scope.scope(specialist.ScopeProject)
	dir, err := a.specialistDirs().Dir(scope)
	if err != nil {
		return usageError{err}
	}
	m := &specialist.Manifest{Name: o.name, Description: strings.TrimSpace(o.description), Tools: o.tools,
		Prompt: o.prompt, Role: o.role, Model: o.model, Extends: o.extends, Scope: scope}
	prev, hadPrev := os.ReadFile(specialist.ManifestPath(dir, o.name))
	path, err := specialist.Create(dir, m, o.force)
	if err != nil {
		return usageError{err}
	}
	// The new manifest must also fit with the others (its extends resolves,
	// no cycle): otherwise put back what was there.
	if _, err := specialist.Load(a.specialistDirs()); err != nil {
		if hadPrev == nil {
			_ = specialist.WriteFile(path, prev)
		} else {
			_ = os.Remove(path)
		}
		return usageError{fmt.Errorf("specialist create %s: not written, the specialists would not load:\n  %w", o.name, err)}
	}
	if o.json {
		return json.NewEncoder(a.out).Encode(map[string]string{"name": o.name, "scope": string(scope), "path": path})
	}
	fmt.Fprintf(a.out, "created %s specialist %s: %s\n", scope, o.name, path)
	return nil
}
