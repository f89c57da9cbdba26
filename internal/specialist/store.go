package specialist

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed builtin/*.md
var builtinFS embed.FS

// BuiltinNames are the specialists compiled into horizon.
func BuiltinNames() []string { return []string{"worker", "explorer", "code-review"} }

// Dirs are the directories of the writable scopes. An empty directory
// leaves its scope out.
type Dirs struct {
	User    string // ~/.config/horizon/specialists
	Project string // <repo>/.horizon/specialists
}

// Dir returns the directory of a writable scope.
func (d Dirs) Dir(s Scope) (string, error) {
	switch s {
	case ScopeUser:
		if d.User == "" {
			return "", fmt.Errorf("no user specialist directory (set XDG_CONFIG_HOME or HOME)")
		}
		return d.User, nil
	case ScopeProject:
		if d.Project == "" {
			return "", fmt.Errorf("no project specialist directory: run inside a repository or pass --repo")
		}
		return d.Project, nil
	case ScopeBuiltin:
		return "", fmt.Errorf("%w: built-in specialists are compiled in", ErrBuiltin)
	}
	return "", fmt.Errorf("unknown scope %q", s)
}

// Specialist is a loaded, resolved specialist: its manifest with extends
// applied, and the manifests of lower scopes it overrides.
type Specialist struct {
	Manifest
	// Overrides are the paths of same-named manifests of lower scopes.
	Overrides []string `json:"overrides,omitempty"`
	// Chain is the extends chain, this specialist first.
	Chain []string `json:"extends_chain,omitempty"`
}

// ReadOnly reports whether the specialist can neither write nor run a shell.
func (s *Specialist) ReadOnly() bool { return ReadOnly(s.Tools) }

// Set is every specialist visible from one repository, by name.
type Set struct {
	byName map[string]*Specialist
	names  []string
}

// Names in sorted order.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Get returns one specialist.
func (s *Set) Get(name string) (*Specialist, error) {
	if sp, ok := s.byName[name]; ok {
		return sp, nil
	}
	return nil, fmt.Errorf("%w %q (have %s)", ErrNotFound, name, strings.Join(s.names, ", "))
}

// All returns the specialists in name order.
func (s *Set) All() []*Specialist {
	out := make([]*Specialist, len(s.names))
	for i, n := range s.names {
		out[i] = s.byName[n]
	}
	return out
}

// LoadBuiltins parses the compiled-in manifests.
func LoadBuiltins() ([]*Manifest, error) {
	var out []*Manifest
	for _, n := range BuiltinNames() {
		data, err := builtinFS.ReadFile("builtin/" + n + ".md")
		if err != nil {
			return nil, fmt.Errorf("load built-in specialist %s: %w", n, err)
		}
		m, err := Parse("builtin:"+n+".md", data, ScopeBuiltin, n)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// LoadDir parses every *.md manifest in dir (a missing dir is empty). All
// problems are returned together, each naming its file and line.
func LoadDir(dir string, scope Scope) ([]*Manifest, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s specialists: %w", scope, err)
	}
	var out []*Manifest
	var errs []error
	for _, e := range entries {
		// Dot files are drafts (edit keeps an invalid one aside) and
		// editor backups, not manifests.
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("read specialist %s: %w", path, err))
			continue
		}
		m, err := Parse(path, data, scope, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

// Load reads the built-in, user and project scopes, lets project override
// user override built-in, and resolves extends. Every problem is returned
// (joined), each naming a file and line.
func Load(d Dirs) (*Set, error) {
	builtins, err := LoadBuiltins()
	if err != nil {
		return nil, err
	}
	user, uerr := LoadDir(d.User, ScopeUser)
	project, perr := LoadDir(d.Project, ScopeProject)
	if err := errors.Join(uerr, perr); err != nil {
		return nil, err
	}
	top := map[string]*Manifest{}
	over := map[string][]string{}
	for _, scope := range [][]*Manifest{builtins, user, project} {
		for _, m := range scope {
			if prev, ok := top[m.Name]; ok {
				over[m.Name] = append(over[m.Name], prev.Path)
			}
			top[m.Name] = m
		}
	}
	set := &Set{byName: map[string]*Specialist{}}
	set.names = sortedKeys(top)
	var errs []error
	for _, n := range set.names {
		sp, err := resolve(top, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sp.Overrides = over[n]
		set.byName[n] = sp
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return set, nil
}

// resolve applies the extends chain of name: a field the manifest leaves
// empty comes from its base, recursively.
func resolve(top map[string]*Manifest, name string) (*Specialist, error) {
	m := top[name]
	sp := &Specialist{Manifest: *m, Chain: []string{name}}
	sp.Warnings = slices.Clone(m.Warnings)
	cur := m
	for cur.Extends != "" {
		base, ok := top[cur.Extends]
		if !ok {
			return nil, &ManifestError{Path: cur.Path, Line: cur.KeyLine("extends"),
				Msg: fmt.Sprintf("extends %q: no such specialist (have %s)", cur.Extends, strings.Join(sortedKeys(top), ", "))}
		}
		if slices.Contains(sp.Chain, base.Name) {
			return nil, &ManifestError{Path: cur.Path, Line: cur.KeyLine("extends"),
				Msg: fmt.Sprintf("extends cycle: %s → %s", strings.Join(sp.Chain, " → "), base.Name)}
		}
		sp.Chain = append(sp.Chain, base.Name)
		inherit(&sp.Description, base.Description)
		inherit(&sp.Model, base.Model)
		inherit(&sp.ReasoningEffort, base.ReasoningEffort)
		inherit(&sp.Role, base.Role)
		inherit(&sp.Prompt, base.Prompt)
		if len(sp.Tools) == 0 {
			sp.Tools = slices.Clone(base.Tools)
		}
		cur = base
	}
	sp.Extends = m.Extends
	if sp.Prompt == "" && sp.Description != "" {
		sp.Prompt = sp.Description
		sp.Warnings = append(sp.Warnings, "the prompt body is empty: the description is used as the prompt")
	}
	if sp.Prompt == "" {
		return nil, &ManifestError{Path: m.Path, Msg: "no prompt: neither this manifest nor the ones it extends has a body or a description"}
	}
	return sp, nil
}

func inherit(dst *string, base string) {
	if *dst == "" {
		*dst = base
	}
}
