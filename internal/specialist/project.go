package specialist

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/horizon/horizon/ladder"
)

// Project specialists come from the repository (<repo>/.horizon/
// specialists), and so from whoever wrote to it. They run only when the
// person trusts the repository (specialists.trust_project), and even then
// with the tools of the project scope's categories only.
//
// OpenCode's config directory is shared by every repository the daemon
// serves, so a project specialist's agent is named for its repository
// (ProjectAgentName): one repository's specialists are never another's.
// Nothing but a session horizon starts for that repository is allowed to
// reach them: the worker's task permission denies every agent it does not
// list, and the session's own rules (ProjectSet.Rules) add this
// repository's delegates.

// ProjectPrefix namespaces project specialists among OpenCode's agents.
const ProjectPrefix = "horizon-pj-"

// ProjectTools are the tools a project specialist may name (and so a
// generated one): the categories and the OpenCode tool ids they grant,
// sorted.
func ProjectTools() []string {
	var out []string
	for c, ids := range categories {
		out = append(out, c)
		for _, id := range ids {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkProjectTool refuses a tool a project specialist may not have.
func checkProjectTool(t string) error {
	if slices.Contains(ProjectTools(), t) {
		return nil
	}
	return fmt.Errorf("tool %q is not available to a project specialist: its tools stay within the project scope's categories and the tools they grant (%s); move it to the user scope (~/.config/horizon/specialists) to give it %s",
		t, strings.Join(ProjectTools(), ", "), t)
}

// CheckProjectScope refuses a project specialist whose tools, once its
// extends chain is resolved (a base of another scope may bring more),
// leave the project scope's categories.
func CheckProjectScope(sp *Specialist) error {
	if sp.Scope != ScopeProject {
		return nil
	}
	for _, t := range sp.Tools {
		if err := checkProjectTool(t); err != nil {
			return &ManifestError{Path: sp.Path, Line: sp.KeyLine("tools"), Msg: err.Error() + " (through extends: " + strings.Join(sp.Chain, " → ") + ")"}
		}
	}
	return nil
}

// RepoKey names a repository in agent names: the first 8 bytes of the
// SHA-256 of its absolute, cleaned path, in hex.
func RepoKey(repo string) string {
	if abs, err := filepath.Abs(repo); err == nil {
		repo = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(repo)))
	return hex.EncodeToString(sum[:8])
}

// ProjectAgentName is the OpenCode agent a project specialist of repo is
// materialised as.
func ProjectAgentName(repo, name string) string {
	return ProjectPrefix + RepoKey(repo) + "-" + name
}

// PermissionRule is one rule of an OpenCode session's own permissions,
// which OpenCode weighs after the agent's (the last match wins).
type PermissionRule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// ProjectSet is a trusted repository's specialists made ready for
// OpenCode.
type ProjectSet struct {
	// Files maps each project specialist's agent name to its agent file.
	Files map[string][]byte
	// Delegates are the read-only ones the worker may delegate to.
	Delegates []Delegate
	// Shadowed are the agents of built-in and user specialists a project
	// specialist of the same name overrides in this repository.
	Shadowed []string
	// Unavailable maps a project specialist to why it cannot run.
	Unavailable map[string]string
}

// MaterialiseProject binds and renders the project specialists of set
// (loaded with repo's project directory) for repo. A project specialist
// whose tools leave the project scope's categories is an error, never
// dropped in silence.
func MaterialiseProject(set *Set, repo string, lb *ladder.Leaderboard, connected []string, forced string) (ProjectSet, error) {
	out := ProjectSet{Files: map[string][]byte{}, Unavailable: map[string]string{}}
	for _, sp := range set.All() {
		if sp.Scope != ScopeProject {
			continue
		}
		if err := CheckProjectScope(sp); err != nil {
			return ProjectSet{}, err
		}
		if len(sp.Overrides) > 0 {
			out.Shadowed = append(out.Shadowed, AgentName(sp.Name))
		}
		b := Bind(sp, lb, connected, forced)
		if !b.Available() {
			out.Unavailable[sp.Name] = b.Unavailable
			continue
		}
		agent := ProjectAgentName(repo, sp.Name)
		out.Files[agent] = AgentFile(sp, b)
		if sp.ReadOnly() {
			out.Delegates = append(out.Delegates, Delegate{Agent: agent, Name: sp.Name, Description: sp.Description, Model: b.Model})
		}
	}
	return out, nil
}

// Rules are the worker session's own permissions in this repository:
// the built-in and user delegates a project specialist overrides are
// denied, this repository's read-only project specialists allowed.
func (p ProjectSet) Rules() []PermissionRule {
	var rs []PermissionRule
	for _, a := range p.Shadowed {
		rs = append(rs, PermissionRule{Permission: "task", Pattern: a, Action: "deny"})
	}
	for _, d := range p.Delegates {
		rs = append(rs, PermissionRule{Permission: "task", Pattern: d.Agent, Action: "allow"})
	}
	return rs
}

// Brief is the part of the worker's prompt that names this repository's
// delegates (and the ones they replace).
func (p ProjectSet) Brief() string {
	if len(p.Delegates) == 0 && len(p.Shadowed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n## This repository's specialists\n\n")
	if len(p.Delegates) > 0 {
		b.WriteString("The repository has its own read-only specialists; you may hand work to them\n")
		b.WriteString("with the task tool like the others (subagent_type: what it does):\n")
		for _, d := range p.Delegates {
			fmt.Fprintf(&b, "- %s: %s\n", d.Agent, orDefault(d.Description, d.Name))
		}
	}
	if len(p.Shadowed) > 0 {
		fmt.Fprintf(&b, "In this repository these are replaced by the repository's own and not available: %s.\n", strings.Join(p.Shadowed, ", "))
	}
	return b.String()
}
