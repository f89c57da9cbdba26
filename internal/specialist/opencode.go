package specialist

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/horizon/horizon/ladder"
)

// AgentPrefix namespaces specialists among OpenCode's agents, so none can
// shadow horizon's own (horizon-worker, ...) or OpenCode's built-ins.
const AgentPrefix = "horizon-sp-"

// AgentName is the OpenCode agent a specialist is materialised as: the
// subagent_type the worker's task tool names.
func AgentName(name string) string { return AgentPrefix + name }

// denied are permissions a specialist never gets, whatever its tools:
// delegating (task), waiting on a human (question, doom_loop's ask),
// leaving the lane, and loading skills that could author specialists.
var denied = []string{"task", "question", "external_directory", "doom_loop", "skill"}

// AgentFile renders sp as an OpenCode subagent file bound to model b.
// Permissions come from its tools only, after "*": deny, so a read-only
// specialist cannot write or run a shell: OpenCode does not offer those
// tools to it at all.
func AgentFile(sp *Specialist, b Binding) []byte {
	var w bytes.Buffer
	w.WriteString("---\n")
	fmt.Fprintf(&w, "description: %q\n", orDefault(sp.Description, "horizon specialist "+sp.Name))
	w.WriteString("mode: subagent\n")
	if b.Model != "" {
		fmt.Fprintf(&w, "model: %q\n", b.Model)
	}
	if sp.ReasoningEffort != "" {
		fmt.Fprintf(&w, "reasoningEffort: %s\n", sp.ReasoningEffort)
	}
	w.WriteString("permission:\n")
	w.WriteString("  \"*\": deny\n")
	allowed := Permissions(sp.Tools)
	for _, k := range allowed {
		if k == "read" {
			// Reading the lane is fine, its secrets are not (OpenCode's
			// default would ask, and asking hangs an unattended run).
			w.WriteString("  read:\n    \"*\": allow\n    \"*.env\": deny\n    \"*.env.*\": deny\n    \"*.env.example\": allow\n")
			continue
		}
		fmt.Fprintf(&w, "  %s: allow\n", k)
	}
	for _, k := range []string{"edit", "bash", "webfetch", "websearch", "todowrite"} {
		if !slices.Contains(allowed, k) {
			fmt.Fprintf(&w, "  %s: deny\n", k)
		}
	}
	for _, k := range denied {
		fmt.Fprintf(&w, "  %s: deny\n", k)
	}
	w.WriteString("---\n")
	w.WriteString(sp.Prompt)
	w.WriteString("\n")
	return w.Bytes()
}

// Materialised is a set of specialists ready for OpenCode.
type Materialised struct {
	// Files maps an OpenCode agent name to its agent file, for every
	// specialist that has a model (or inherits its parent's).
	Files map[string][]byte
	// Delegates are the read-only specialists the worker may delegate to,
	// sorted: its task allowlist.
	Delegates []Delegate
	// Unavailable maps a specialist to why it cannot run (its role has no
	// connected model; there is no cross-role fallback).
	Unavailable map[string]string
}

// Delegate is one specialist the worker may hand work to.
type Delegate struct {
	Agent       string // OpenCode agent name (subagent_type)
	Name        string
	Description string
	Model       string
}

// Materialise binds every specialist's model and renders its agent file.
// A specialist whose role resolves to no connected model is left out and
// reported in Unavailable.
func Materialise(set *Set, lb *ladder.Leaderboard, connected []string, forced string) Materialised {
	out := Materialised{Files: map[string][]byte{}, Unavailable: map[string]string{}}
	for _, sp := range set.All() {
		b := Bind(sp, lb, connected, forced)
		if !b.Available() {
			out.Unavailable[sp.Name] = b.Unavailable
			continue
		}
		out.Files[AgentName(sp.Name)] = AgentFile(sp, b)
		if sp.ReadOnly() {
			out.Delegates = append(out.Delegates, Delegate{Agent: AgentName(sp.Name), Name: sp.Name, Description: sp.Description, Model: b.Model})
		}
	}
	return out
}

// DelegationBrief is the section of the worker's prompt that names the
// specialists it may delegate to (only the available read-only ones).
func DelegationBrief(ds []Delegate) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nYou may hand read-only support work (finding code, reviewing a change) to a\n")
	b.WriteString("specialist with the task tool; each runs in its own session and returns its\n")
	b.WriteString("answer to you. Only these specialists are available (subagent_type: what it does):\n")
	for _, d := range ds {
		fmt.Fprintf(&b, "- %s: %s\n", d.Agent, orDefault(d.Description, d.Name))
	}
	return b.String()
}
