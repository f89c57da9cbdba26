package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/internal/tools"
)

// newSpecialistCmd is `horizon specialist`: Zero-style specialist manifests.
func newSpecialistCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "specialist list|show|path|create|edit|delete",
		Short: "Manage specialists: named sub-agents the worker can delegate to",
		Long: `A specialist is a Markdown manifest: YAML frontmatter (name, description,
extends, model, reasoningEffort, tools, role) and a prompt body. Three scopes,
each overriding the one before: built-in (worker, explorer, code-review),
user (~/.config/horizon/specialists/*.md) and project
(<repo>/.horizon/specialists/*.md).

A specialist with a role runs on that role's best-ranked connected model
(see ` + "`horizon models`" + `) unless its manifest sets model. Read-only specialists
(tools read-only and plan only) are the ones a worker may delegate to.`,
		Args: subcommandArgs("list, show, path, create, edit or delete"),
	}
	cmd.AddCommand(newSpecialistListCmd(a, nil), newSpecialistShowCmd(a, nil), newSpecialistPathCmd(a, nil),
		newSpecialistCreateCmd(a, nil), newSpecialistEditCmd(a, nil), newSpecialistDeleteCmd(a, nil))
	return cmd
}

// scopeFlags are --project and --user.
type scopeFlags struct{ project, user bool }

func (s *scopeFlags) bind(cmd *cobra.Command, what string) {
	cmd.Flags().BoolVar(&s.project, "project", false, what+" the project scope (<repo>/.horizon/specialists)")
	cmd.Flags().BoolVar(&s.user, "user", false, what+" the user scope (~/.config/horizon/specialists)")
	cmd.MarkFlagsMutuallyExclusive("project", "user")
}

// scope is the scope asked for; def when neither flag is given.
func (s scopeFlags) scope(def specialist.Scope) specialist.Scope {
	switch {
	case s.project:
		return specialist.ScopeProject
	case s.user:
		return specialist.ScopeUser
	}
	return def
}

// specialistDirs are the user and project scope directories for the
// command's repository.
func (a *app) specialistDirs() specialist.Dirs {
	var d specialist.Dirs
	if p := config.UserFilePath(); p != "" {
		d.User = filepath.Join(filepath.Dir(p), "specialists")
	}
	dir := a.repoDir
	if top, err := gitTop(dir); err == nil {
		dir = top
	}
	if abs, err := filepath.Abs(dir); err == nil {
		d.Project = filepath.Join(abs, ".horizon", "specialists")
	}
	return d
}

func (a *app) loadSpecialists() (*specialist.Set, error) {
	set, err := specialist.Load(a.specialistDirs())
	if err != nil {
		return nil, usageError{fmt.Errorf("load specialists:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))}
	}
	return set, nil
}

// specialistJSON is one specialist in --json output.
type specialistJSON struct {
	*specialist.Specialist
	ReadOnly bool                `json:"read_only"`
	Binding  *specialist.Binding `json:"binding,omitempty"`
}

// bindModels resolves every specialist's model. Without OpenCode (or when
// it cannot list its models) the bindings are left out with a warning: the
// manifests are still worth listing.
func (a *app) bindModels(ctx context.Context, sps []*specialist.Specialist) map[string]specialist.Binding {
	lb, err := activities.LoadLeaderboard(a.cfg.Models.File)
	if err != nil {
		a.warn("models not resolved: %v", err)
		return nil
	}
	var connected []string
	if a.cfg.Models.Default == "" {
		bin, err := tools.Find(tools.OpenCode, a.cfg.Agent.OpenCodeBin, "agent.opencode_bin (HORIZON_AGENT_OPENCODE_BIN)")
		if err != nil {
			a.warn("models not resolved: %v", err)
			return nil
		}
		if connected, err = connectedModels(ctx, bin, a.repoDir, a.cfg.Agent.OpenCodeConfig); err != nil {
			a.warn("models not resolved: %v", err)
			return nil
		}
	}
	out := map[string]specialist.Binding{}
	for _, sp := range sps {
		out[sp.Name] = specialist.Bind(sp, lb, connected, a.cfg.Models.Default)
	}
	return out
}

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
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array of {name, description, role, model, tools, scope, path, overrides, read_only, binding: {model, source, rank, unavailable}}")
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
			out = append(out, toJSON(sp, binds))
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
	for _, sp := range all {
		if b, ok := binds[sp.Name]; ok && !b.Available() {
			fmt.Fprintf(a.out, "%s is unavailable: %s\n", sp.Name, b.Unavailable)
		}
	}
	return nil
}

func toJSON(sp *specialist.Specialist, binds map[string]specialist.Binding) specialistJSON {
	j := specialistJSON{Specialist: sp, ReadOnly: sp.ReadOnly()}
	if b, ok := binds[sp.Name]; ok {
		j.Binding = &b
	}
	return j
}

func modelCell(sp *specialist.Specialist, binds map[string]specialist.Binding) string {
	b, ok := binds[sp.Name]
	switch {
	case !ok && sp.Model != "":
		return sp.Model
	case !ok:
		return "?"
	case !b.Available():
		return "unavailable"
	case b.Model == "":
		return "(parent's)"
	}
	return b.Model
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

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
		return json.NewEncoder(a.out).Encode(toJSON(sp, binds))
	}
	w := a.out
	fmt.Fprintf(w, "%s  (%s, %s)\n", sp.Name, sp.Scope, sp.Path)
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

// manifestIn finds name's manifest: in the scope asked, else in the
// highest scope that has one.
func (a *app) manifestIn(name string, s scopeFlags) (string, specialist.Scope, error) {
	d := a.specialistDirs()
	scopes := []specialist.Scope{specialist.ScopeProject, specialist.ScopeUser}
	if s.project || s.user {
		scopes = []specialist.Scope{s.scope("")}
	}
	for _, sc := range scopes {
		dir, err := d.Dir(sc)
		if err != nil {
			continue
		}
		p := specialist.ManifestPath(dir, name)
		if _, err := os.Lstat(p); err == nil {
			return p, sc, nil
		}
	}
	for _, b := range specialist.BuiltinNames() {
		if b == name && !s.project && !s.user {
			return "", specialist.ScopeBuiltin, usageError{fmt.Errorf("%w %s: create a project or user specialist named %s to override it", specialist.ErrBuiltin, name, name)}
		}
	}
	return "", "", usageError{fmt.Errorf("%w %q in the %s scope", specialist.ErrNotFound, name, scopesWord(scopes))}
}

func scopesWord(s []specialist.Scope) string {
	w := make([]string, len(s))
	for i, sc := range s {
		w[i] = string(sc)
	}
	return strings.Join(w, " or ")
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
