package specialist

// Drafts: a manifest the lead wrote for `horizon specialist generate`. A
// draft is model output, so it is checked more strictly than a manifest a
// person wrote: it goes to the project scope only, its tools stay within
// the categories a project specialist is given (no web or LSP tools, never
// a forbidden one), it stands alone (no extends, whose inherited tools
// nobody would have seen), and it carries no control characters (it is
// shown in a terminal and committed for others to read). Nothing here
// writes: CheckDraft says what would be written, Create writes it.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// DraftProblem names why a draft was refused.
type DraftProblem string

// Why a draft is refused.
const (
	DraftUnsafe        DraftProblem = "unsafe-text"       // control characters or escape sequences
	DraftInvalid       DraftProblem = "invalid-manifest"  // not a manifest horizon would load
	DraftForbiddenTool DraftProblem = "forbidden-tool"    // a tool no specialist may have
	DraftOutOfScope    DraftProblem = "out-of-scope-tool" // a tool a project specialist is not given
	DraftExtends       DraftProblem = "extends"           // inherits from another specialist
)

// DraftError is a draft that will not be written: the problem, the file
// it would have been written to, and what is wrong.
type DraftError struct {
	Problem DraftProblem
	Path    string
	Msg     string
	Err     error // the manifest error behind DraftInvalid
}

func (e *DraftError) Error() string { return e.Msg }
func (e *DraftError) Unwrap() error { return e.Err }

// CheckDraft validates the manifest text a lead drafted, to be written to
// dir (the project scope's directory). name, when set, is the name the
// person chose (--name): it replaces the draft's own. The manifest is
// returned as it would be written (Render).
func CheckDraft(dir, text, name string) (*Manifest, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	path := ManifestPath(dir, draftName(text, name))
	if horizon.Safe(text) != text {
		return nil, &DraftError{Problem: DraftUnsafe, Path: path,
			Msg: "the draft holds control characters or escape sequences; a manifest is plain text: nothing written, generate it again"}
	}
	if name != "" {
		text = withName(text, name)
	}
	// Tools first: a forbidden tool is refused as such, whatever else the
	// draft gets wrong.
	if err := checkDraftTools(path, text); err != nil {
		return nil, err
	}
	m, err := Parse(path, []byte(text), ScopeProject, name)
	if err != nil {
		return nil, &DraftError{Problem: DraftInvalid, Path: path, Err: err,
			Msg: fmt.Sprintf("the draft is not a valid manifest: %v; nothing written: generate it again, or write it yourself with `horizon specialist create`", err)}
	}
	m.Path = ManifestPath(dir, m.Name)
	// YAML escapes ("\e" in a quoted string) decode to the characters the
	// text itself did not show.
	for _, f := range append([]string{m.Description, m.Role, m.Model, m.ReasoningEffort, m.Prompt}, m.Tools...) {
		if horizon.Safe(f) != f {
			return nil, &DraftError{Problem: DraftUnsafe, Path: m.Path,
				Msg: "the draft's frontmatter decodes to control characters or escape sequences; a manifest is plain text: nothing written, generate it again"}
		}
	}
	if m.Extends != "" {
		return nil, &DraftError{Problem: DraftExtends, Path: m.Path,
			Msg: fmt.Sprintf("the draft extends %s: a generated specialist stands alone, so that every tool it has is in its own manifest; nothing written: generate it again, or write it yourself with `horizon specialist create --extends`", m.Extends)}
	}
	return m, nil
}

// checkDraftTools refuses a draft that names a forbidden tool, or one a
// project specialist is not given. A frontmatter that does not parse is
// left to Parse, which says where.
func checkDraftTools(path, text string) error {
	front, line, ok := frontmatter(text)
	if !ok {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "tools" {
			continue
		}
		at := root.Content[i].Line + line
		tools, err := toolList(root.Content[i+1], func(string, ...any) error { return fmt.Errorf("not a list") })
		if err != nil {
			return nil
		}
		allowed := ProjectTools()
		for _, t := range tools {
			if slices.Contains(forbidden, strings.ToLower(t)) {
				return &DraftError{Problem: DraftForbiddenTool, Path: path,
					Msg: fmt.Sprintf("%s:%d: the draft gives the specialist the tool %q, which no specialist may have (it would let it delegate to other agents or author specialists); nothing written: generate it again, and say it must not delegate", path, at, t)}
			}
			if !slices.Contains(allowed, t) {
				return &DraftError{Problem: DraftOutOfScope, Path: path,
					Msg: fmt.Sprintf("%s:%d: the draft gives the specialist the tool %q, which a generated project specialist is not given (only %s); nothing written: generate it again, or add the tool yourself with `horizon specialist edit`", path, at, t, strings.Join(categoryNames, ", ")+" and their tools")}
			}
		}
	}
	return nil
}

// frontmatter is the YAML between a manifest's two --- lines, and the
// file line before its first line.
func frontmatter(text string) (string, int, bool) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", 0, false
	}
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return "", 0, false
	}
	return rest[:end+1], 1, true
}

var nameLineRE = regexp.MustCompile(`(?m)^name[ \t]*:(.*)$`)

// draftName is the name a draft's errors are filed under: the chosen
// one, else the draft's own when it is a name, else "draft".
func draftName(text, name string) string {
	if name != "" {
		return name
	}
	if front, _, ok := frontmatter(text); ok {
		if m := nameLineRE.FindStringSubmatch(front); m != nil {
			if n := strings.Trim(strings.TrimSpace(m[1]), `"'`); ValidName(n) == nil {
				return n
			}
		}
	}
	return "draft"
}

// withName gives the draft the name the person chose: its name line is
// replaced, or one is added at the top of the frontmatter.
func withName(text, name string) string {
	front, _, ok := frontmatter(text)
	if !ok {
		return text
	}
	line := "name: " + name
	if loc := nameLineRE.FindStringIndex(front); loc != nil {
		start, end := len("---\n")+loc[0], len("---\n")+loc[1]
		return text[:start] + line + text[end:]
	}
	return "---\n" + line + "\n" + text[len("---\n"):]
}

// DraftBrief is the lead's prompt for `horizon specialist generate`: what
// the specialist is for, the name it must have (name) or the names taken,
// the manifest's rules, and the block to answer in.
func DraftBrief(purpose, name string, taken []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Specialist\n\nDraft a specialist for the repository in the current working directory: a named sub-agent horizon runs on focused work. What it is for:\n\n%s\n\n", strings.TrimSpace(purpose))
	b.WriteString("Read the repository as needed (its layout, languages, tests, conventions) so the specialist's instructions fit this code base. You cannot edit or run anything. This is not a plan: write no horizon-plan block.\n\n")
	b.WriteString("A specialist is a Markdown manifest: a YAML frontmatter between two --- lines, then its prompt: the instructions it is given, addressed to it, concrete about this repository.\n\nFrontmatter keys:\n\n")
	if name != "" {
		fmt.Fprintf(&b, "- name: %s\n", name)
	} else {
		b.WriteString("- name: short, lowercase letters, digits and dashes (like api-review)")
		if len(taken) > 0 {
			fmt.Fprintf(&b, "; these are taken: %s", strings.Join(taken, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("- description: one line, shown in listings\n")
	fmt.Fprintf(&b, "- role: the role whose model it runs on, one of %s\n", strings.Join(ladder.Roles(), ", "))
	b.WriteString("- tools: the fewest it needs, only from these categories: read-only (read, grep, glob, list), edit (read-only plus edit, write, patch), execute (read-only plus bash), plan (todowrite, todoread). A reviewer or an explainer needs read-only alone. Never task, skill or any tool that delegates to other agents or authors specialists, and no web or LSP tools: horizon refuses such a draft.\n")
	b.WriteString("- Leave out extends and model.\n\n")
	b.WriteString("End your final message with exactly one fenced block whose info string is horizon-specialist, holding the whole manifest, and put nothing after it. If the prompt holds ``` fences itself, fence the block with four backticks instead:\n\n")
	b.WriteString("````horizon-specialist\n---\nname: api-review\ndescription: Reviews API changes for compatibility and missing tests.\nrole: analyze\ntools:\n  - read-only\n---\n\nReview the API changes you are given for ...\n````\n")
	return b.String()
}
