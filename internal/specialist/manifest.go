package specialist

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/horizon/horizon/ladder"
)

// Scope says where a manifest comes from. Project overrides user overrides
// built-in.
type Scope string

const (
	ScopeBuiltin Scope = "builtin"
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
)

// Manifest is one parsed manifest file, before extends is resolved.
type Manifest struct {
	Name            string   `json:"name"`
	Description     string   `json:"description,omitempty"`
	Extends         string   `json:"extends,omitempty"`
	Model           string   `json:"model,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
	Tools           []string `json:"tools,omitempty"`
	Role            string   `json:"role,omitempty"`
	Prompt          string   `json:"prompt"`

	Scope Scope  `json:"scope"`
	Path  string `json:"path"`
	// Warnings are problems that do not stop the manifest from loading
	// (an empty body whose description becomes the prompt).
	Warnings []string `json:"warnings,omitempty"`

	// lines of the keys, for errors found after parsing (extends cycles).
	lines map[string]int
}

// KeyLine is the file line of a frontmatter key (0 when absent).
func (m *Manifest) KeyLine(key string) int { return m.lines[key] }

var yamlErrRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// MaxNameLen bounds a specialist's name: it becomes a file name
// (<name>.md, and OpenCode's agent file), which file systems cap at 255
// bytes, and a label on every line that shows it.
const MaxNameLen = 64

// ValidName reports whether name can name a specialist: lowercase letters,
// digits and single dashes between them, at most MaxNameLen.
func ValidName(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("specialist name %q... is %d characters; a name may be %d at most", name[:24], len(name), MaxNameLen)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("bad specialist name %q: use lowercase letters, digits and dashes (like api-review)", name)
	}
	return nil
}

// efforts are the reasoningEffort values OpenCode's providers take.
var efforts = []string{"minimal", "low", "medium", "high"}

// Parse reads one manifest. path names it in errors; wantName, when set,
// is the name its file name implies, and the name key must match it.
func Parse(path string, data []byte, scope Scope, wantName string) (*Manifest, error) {
	bad := func(line int, format string, args ...any) error {
		return &ManifestError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, bad(1, "a manifest starts with a YAML frontmatter between two --- lines (name, description, tools, ...)")
	}
	rest := text[len("---\n"):]
	var front, body string
	switch {
	case strings.HasPrefix(rest, "---\n") || rest == "---":
		front, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	default:
		end := strings.Index(rest, "\n---\n")
		if end < 0 {
			if strings.HasSuffix(rest, "\n---") {
				end = len(rest) - len("\n---")
			} else {
				return nil, bad(1, "the frontmatter is not closed: add a line --- after it")
			}
		}
		front = rest[:end+1]
		body = strings.TrimPrefix(rest[end+1:], "---")
		body = strings.TrimPrefix(body, "\n")
	}
	m := &Manifest{Scope: scope, Path: path, lines: map[string]int{}}
	const offset = 1 // the frontmatter's first line is the file's second
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader([]byte(front))).Decode(&doc); err != nil && strings.TrimSpace(front) != "" {
		line, msg := 0, err.Error()
		if mm := yamlErrRE.FindStringSubmatch(msg); mm != nil {
			line, _ = strconv.Atoi(mm[1])
			line += offset
			msg = mm[2]
		}
		return nil, bad(line, "frontmatter is not valid YAML: %s", msg)
	}
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, bad(root.Line+offset, "the frontmatter must be a mapping of keys (name: ..., description: ...)")
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			line := k.Line + offset
			if _, dup := m.lines[k.Value]; dup {
				return nil, bad(line, "key %q appears twice", k.Value)
			}
			m.lines[k.Value] = line
			str := func(dst *string) error {
				if v.Kind != yaml.ScalarNode || v.Tag == "!!null" && v.Value != "" {
					return bad(line, "%s must be a string", k.Value)
				}
				if v.Tag == "!!null" {
					*dst = ""
					return nil
				}
				*dst = strings.TrimSpace(v.Value)
				return nil
			}
			var err error
			switch k.Value {
			case "name":
				err = str(&m.Name)
			case "description":
				err = str(&m.Description)
			case "extends":
				err = str(&m.Extends)
			case "model":
				err = str(&m.Model)
			case "reasoningEffort":
				err = str(&m.ReasoningEffort)
			case "role":
				err = str(&m.Role)
			case "tools":
				m.Tools, err = toolList(v, func(format string, args ...any) error { return bad(line, format, args...) })
			default:
				err = bad(line, "unknown key %q (known: name, description, extends, model, reasoningEffort, tools, role)", k.Value)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	m.Prompt = strings.TrimSpace(body)
	if err := m.check(wantName, bad); err != nil {
		return nil, err
	}
	if m.Prompt == "" && m.Description != "" && m.Extends == "" {
		m.Prompt = m.Description
		m.Warnings = append(m.Warnings, "the prompt body is empty: the description is used as the prompt")
	}
	if m.Prompt == "" && m.Extends == "" {
		return nil, bad(0, "no prompt: write the specialist's instructions after the frontmatter (or set a description, or extends)")
	}
	return m, nil
}

// check validates the fields one by one, each error at its key's line.
func (m *Manifest) check(wantName string, bad func(int, string, ...any) error) error {
	if m.Name == "" {
		return bad(1, "missing name: add name: %s to the frontmatter", orDefault(wantName, "my-specialist"))
	}
	if err := ValidName(m.Name); err != nil {
		return bad(m.lines["name"], "%v", err)
	}
	if wantName != "" && m.Name != wantName {
		return bad(m.lines["name"], "name %q does not match the file name %s.md: rename one of them", m.Name, wantName)
	}
	if m.Extends != "" {
		if err := ValidName(m.Extends); err != nil {
			return bad(m.lines["extends"], "extends: %v", err)
		}
		if m.Extends == m.Name {
			return bad(m.lines["extends"], "extends cycle: %s extends itself", m.Name)
		}
	}
	if m.Model != "" {
		if i := strings.Index(m.Model, "/"); i <= 0 || i == len(m.Model)-1 || strings.ContainsAny(m.Model, " \t") {
			return bad(m.lines["model"], "model %q is not a provider/model ID (like anthropic/claude-sonnet-4-5)", m.Model)
		}
	}
	if m.ReasoningEffort != "" && !slices.Contains(efforts, m.ReasoningEffort) {
		return bad(m.lines["reasoningEffort"], "reasoningEffort %q is not one of %s", m.ReasoningEffort, strings.Join(efforts, ", "))
	}
	if m.Role != "" && !slices.Contains(ladder.Roles(), m.Role) {
		return bad(m.lines["role"], "role %q is not a zilX role (%s)", m.Role, strings.Join(ladder.Roles(), ", "))
	}
	for _, t := range m.Tools {
		if err := checkTool(t); err != nil {
			return bad(m.lines["tools"], "%v", err)
		}
		if m.Scope == ScopeProject {
			if err := checkProjectTool(t); err != nil {
				return bad(m.lines["tools"], "%v", err)
			}
		}
	}
	return nil
}

func toolList(v *yaml.Node, bad func(string, ...any) error) ([]string, error) {
	var raw []string
	switch v.Kind {
	case yaml.ScalarNode:
		for _, t := range strings.Split(v.Value, ",") {
			raw = append(raw, t)
		}
	case yaml.SequenceNode:
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode {
				return nil, bad("tools must be a list of tool categories or tool ids")
			}
			raw = append(raw, e.Value)
		}
	default:
		return nil, bad("tools must be a list of tool categories or tool ids")
	}
	var out []string
	for _, t := range raw {
		t = strings.TrimSpace(t)
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Render writes m back as a manifest file.
func (m *Manifest) Render() []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, yamlScalar(v))
		}
	}
	field("name", m.Name)
	field("description", m.Description)
	field("extends", m.Extends)
	field("role", m.Role)
	field("model", m.Model)
	field("reasoningEffort", m.ReasoningEffort)
	if len(m.Tools) > 0 {
		b.WriteString("tools:\n")
		for _, t := range m.Tools {
			fmt.Fprintf(&b, "  - %s\n", yamlScalar(t))
		}
	}
	b.WriteString("---\n")
	if m.Prompt != "" {
		b.WriteString("\n" + strings.TrimSpace(m.Prompt) + "\n")
	}
	return b.Bytes()
}

// yamlScalar quotes s unless it is plain and safe as a YAML scalar.
func yamlScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(out), "\n")
}
