package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Subagents are extra OpenCode agents (horizon's specialists) written next
// to horizon's own, and the worker's right to delegate to some of them.
//
// Delegation is OpenCode's native task tool under a last-match allowlist:
// the worker's task permission becomes "*": deny followed by one allow per
// delegate, so a task call naming anything else (a specialist that can
// write, OpenCode's general agent) is refused by OpenCode itself.
type Subagents struct {
	// Files maps an agent name to its agent file content.
	Files map[string][]byte
	// Prefix names the files this set owns: a <prefix>*.md agent file not
	// in Files is stale and removed. Required when Files is used.
	Prefix string
	// Delegates are the agents the worker may call through task.
	Delegates []string
	// WorkerBrief is appended to the worker's prompt (the delegates and
	// what each does).
	WorkerBrief string
	// Advisor shapes the advisor's agent file (advisor.tools,
	// advisor.max_tool_steps, advisor.system_prompt); zero: the default.
	Advisor AdvisorAgent
}

// AdvisorAgent is what the advisor.* settings change in the advisor's
// agent file.
type AdvisorAgent struct {
	// Tools are the read-only tools the reviewer may use (some of read,
	// grep, glob, list); nil: read, grep and glob.
	Tools []string
	// ToolSteps is advisor.max_tool_steps: the tool rounds one review may
	// take. OpenCode counts them: the agent's steps are ToolSteps + 1,
	// the last one the answer. 0 (with Set false): AdvisorSteps.
	ToolSteps int
	Set       bool
	// Extra is advisor.system_prompt's text, added to the prompt under
	// its own heading; the horizon-advice protocol stays.
	Extra string
}

// apply changes the advisor's spec as a says.
func (a AdvisorAgent) apply(spec agentSpec) agentSpec {
	if a.Tools != nil {
		ps := slices.Clone(readOnly)
		for i := range ps {
			switch ps[i].key {
			case "read", "grep", "glob", "list":
				ps[i] = permission{key: ps[i].key, action: "deny"}
				if slices.Contains(a.Tools, ps[i].key) {
					ps[i] = permission{key: ps[i].key, action: "allow"}
					if ps[i].key == "read" {
						ps[i] = readSafe
					}
				}
			}
		}
		spec.permissions = ps
	}
	if a.Set {
		spec.steps = a.ToolSteps + 1
	}
	if e := strings.TrimSpace(a.Extra); e != "" {
		spec.prompt += "\n## Your reviewer's instructions\n\nThe person who runs horizon adds these; the protocol above still holds.\n\n" + e + "\n"
	}
	return spec
}

// WriteAgentFilesWith is WriteAgentFiles plus subagents: the extra agent
// files, and a worker allowed to delegate to s.Delegates. With a zero
// Subagents it writes exactly what WriteAgentFiles writes.
func WriteAgentFilesWith(dir string, s Subagents) error {
	if len(s.Files) > 0 && s.Prefix == "" {
		return fmt.Errorf("write agent files: subagent files need a prefix")
	}
	for name := range s.Files {
		if !strings.HasPrefix(name, s.Prefix) || slices.Contains(AgentNames(), name) {
			return fmt.Errorf("write agent files: subagent %q must start with %q and not be one of horizon's agents", name, s.Prefix)
		}
	}
	for _, d := range s.Delegates {
		if _, ok := s.Files[d]; !ok {
			return fmt.Errorf("write agent files: delegate %q has no agent file", d)
		}
	}
	agentDir := filepath.Join(dir, "agent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return fmt.Errorf("write agent files: %w", err)
	}
	for _, spec := range agentSpecs {
		if spec.name == AgentWorker {
			spec = spec.withDelegates(s.Delegates, s.WorkerBrief)
		}
		if spec.name == AgentAdvisor {
			spec = s.Advisor.apply(spec)
		}
		if err := writeIfChanged(filepath.Join(agentDir, spec.name+".md"), spec.render()); err != nil {
			return fmt.Errorf("write agent files: %w", err)
		}
	}
	for name, content := range s.Files {
		if err := writeIfChanged(filepath.Join(agentDir, name+".md"), content); err != nil {
			return fmt.Errorf("write agent files: %w", err)
		}
	}
	if s.Prefix == "" {
		return nil
	}
	ents, err := os.ReadDir(agentDir)
	if err != nil {
		return fmt.Errorf("write agent files: %w", err)
	}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".md")
		if strings.HasPrefix(e.Name(), s.Prefix) && strings.HasSuffix(e.Name(), ".md") {
			if _, ok := s.Files[name]; !ok {
				if err := os.Remove(filepath.Join(agentDir, e.Name())); err != nil {
					return fmt.Errorf("write agent files: remove stale %s: %w", e.Name(), err)
				}
			}
		}
	}
	return nil
}

// withDelegates returns the spec with its task permission turned into the
// allowlist of delegates, and brief appended to its prompt.
func (s agentSpec) withDelegates(delegates []string, brief string) agentSpec {
	if len(delegates) == 0 {
		return s
	}
	perms := slices.Clone(s.permissions)
	task := permission{key: "task", patterns: [][2]string{{"*", "deny"}}}
	for _, d := range slices.Sorted(slices.Values(delegates)) {
		task.patterns = append(task.patterns, [2]string{d, "allow"})
	}
	for i, p := range perms {
		if p.key == "task" {
			perms[i] = task
		}
	}
	s.permissions = perms
	if brief != "" {
		s.prompt = s.prompt + brief
	}
	return s
}

// WriteNamedAgents adds agent files (name → content) to the config dir
// without touching any other: a trusted repository's own specialists,
// written when a session of that repository needs them. Every name must
// start with prefix, which no agent of horizon's own does. OpenCode reads
// a directory's agents when it first serves that directory, so they apply
// to sessions in directories it has not served yet.
func WriteNamedAgents(dir, prefix string, files map[string][]byte) error {
	if prefix == "" {
		return fmt.Errorf("write named agents: no prefix")
	}
	agentDir := filepath.Join(dir, "agent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		return fmt.Errorf("write named agents: %w", err)
	}
	for name, content := range files {
		if !strings.HasPrefix(name, prefix) || slices.Contains(AgentNames(), name) || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("write named agents: %q must start with %q and not be one of horizon's agents", name, prefix)
		}
		if err := writeIfChanged(filepath.Join(agentDir, name+".md"), content); err != nil {
			return fmt.Errorf("write named agents: %w", err)
		}
	}
	return nil
}
