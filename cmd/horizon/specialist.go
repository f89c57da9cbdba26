package main

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/specialist"
)

// newSpecialistCmd is `horizon specialist`: Zero-style specialist manifests.
func newSpecialistCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "specialist list|show|path|create|generate|edit|delete",
		Short: "Manage specialists: named sub-agents the worker can delegate to",
		Long: `A specialist is a Markdown manifest: YAML frontmatter (name, description,
extends, model, reasoningEffort, tools, role) and a prompt body. Three scopes,
each overriding the one before: built-in (worker, explorer, code-review),
user (~/.config/horizon/specialists/*.md) and project
(<repo>/.horizon/specialists/*.md).

A specialist with a role runs on that role's best-ranked connected model
(see ` + "`horizon models`" + `) unless its manifest sets model. Read-only specialists
(tools read-only and plan only) are the ones a worker may delegate to.

` + "`horizon specialist generate \"<what it is for>\"`" + ` has the lead draft a project
specialist; it is shown, checked and written only once you say yes.`,
		Args: subcommandArgs("list, show, path, create, generate, edit or delete"),
	}
	cmd.AddCommand(newSpecialistListCmd(a, nil), newSpecialistShowCmd(a, nil), newSpecialistPathCmd(a, nil),
		newSpecialistCreateCmd(a, nil), newSpecialistGenerateCmd(a, nil), newSpecialistEditCmd(a, nil), newSpecialistDeleteCmd(a, nil))
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
	// Untrusted: a project specialist of a repository the person has not
	// said they trust (specialists.trust_project); it does not run.
	Untrusted bool `json:"untrusted,omitempty"`
}

// untrusted reports whether sp is a project specialist that does not run
// here: the repository is not trusted.
func (a *app) untrusted(sp *specialist.Specialist) bool {
	return sp.Scope == specialist.ScopeProject && !a.cfg.Specialists.TrustProject
}

// bindModels resolves every specialist's model. Without OpenCode (or when
// it cannot list its models) the bindings are left out with a warning: the
// manifests are still worth listing.
func (a *app) bindModels(ctx context.Context, sps []*specialist.Specialist) map[string]specialist.Binding {
	lb, err := core.LoadLeaderboard(a.cfg)
	if err != nil {
		a.warn("models not resolved: %v", err)
		return nil
	}
	var connected []string
	if a.cfg.Models.Default == "" {
		var err error
		if connected, err = core.ConnectedModels(ctx, a.cfg, a.repoDir); err != nil {
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
