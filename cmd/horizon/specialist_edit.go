package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/specialist"
)

type specialistEditOptions struct {
	app   *app
	name  string
	scope scopeFlags
}

func newSpecialistEditCmd(a *app, runF func(context.Context, *specialistEditOptions) error) *cobra.Command {
	o := &specialistEditOptions{app: a}
	cmd := &cobra.Command{
		Use:   "edit NAME [--project|--user]",
		Short: "Open a specialist manifest in $VISUAL or $EDITOR; it is saved only if it is valid",
		Long: `Open a copy of the manifest in $VISUAL (else $EDITOR). When the editor exits,
the copy is validated: a valid one replaces the manifest, an invalid one is
kept next to it and the errors are printed. Without --project or --user, the
scope that defines the specialist is edited; built-ins cannot be edited
(create a specialist of the same name to override one). Symlinked manifests
are refused.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if err := specialist.ValidName(o.name); err != nil {
				return usageError{err}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return specialistEdit(cmd.Context(), o)
		},
	}
	o.scope.bind(cmd, "edit in")
	return cmd
}

func specialistEdit(ctx context.Context, o *specialistEditOptions) error {
	a := o.app
	path, scope, err := a.manifestIn(o.name, o.scope)
	if err != nil {
		return err
	}
	if err := specialist.CheckNotSymlink(path); err != nil {
		return usageError{err}
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		return usagef("specialist edit: set $VISUAL or $EDITOR to the editor to use")
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("specialist edit: %w", err)
	}
	draft := filepath.Join(filepath.Dir(path), "."+o.name+".edit.md")
	if err := os.WriteFile(draft, orig, 0o644); err != nil {
		return fmt.Errorf("specialist edit: %w", err)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", draft)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, a.out, a.errOut
	if err := cmd.Run(); err != nil {
		return exitErr{code: ExitRunEnded, msg: fmt.Sprintf("specialist edit: %s failed: %v; your draft is %s", editor, err, draft)}
	}
	edited, err := os.ReadFile(draft)
	if err != nil {
		return fmt.Errorf("specialist edit: %w", err)
	}
	if _, err := specialist.Parse(path, edited, scope, o.name); err != nil {
		return usageError{fmt.Errorf("%w\n  the manifest is unchanged; your draft is %s", err, draft)}
	}
	if err := specialist.WriteFile(path, edited); err != nil {
		return fmt.Errorf("specialist edit: %w", err)
	}
	_ = os.Remove(draft)
	if _, err := specialist.Load(a.specialistDirs()); err != nil {
		a.warn("%s was saved, but the specialists do not load:\n  %v", path, err)
	}
	fmt.Fprintf(a.out, "saved %s\n", path)
	return nil
}
