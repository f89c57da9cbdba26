package codemod

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RuleError says a rule cannot be used: ast-grep rejects it, one of its
// patterns does not parse for its language, or ast-grep failed while
// running it.
type RuleError struct {
	ID     string
	Source string // the rule's file, or "built-in"
	Msg    string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("codemod %q (%s): %s", e.ID, e.Source, e.Msg)
}

func ruleError(r Rule, format string, args ...any) *RuleError {
	return &RuleError{ID: r.ID, Source: r.Source(), Msg: fmt.Sprintf(format, args...)}
}

// Validate asks the ast-grep at bin whether it accepts r, by scanning an
// empty directory with it:
//
//	ast-grep scan -c <empty sgconfig.yml> --color never --inline-rules <r.YAML> --json=stream .
//
// and then checks that every pattern in the rule parses for its language:
//
//	ast-grep run -c <empty sgconfig.yml> --color never --lang L --pattern P [--selector S] [--strictness X] --debug-query=pattern .
//
// A pattern whose parse contains a tree-sitter ERROR node is refused:
// ast-grep would accept it and silently match nothing. So is a Go pattern
// that parses as a conversion to a package-qualified type (errors.New($X)
// on its own does), which never matches the call it was meant to.
//
// The error is a *RuleError naming the rule's file (or "built-in") and
// quoting ast-grep's own message.
func Validate(ctx context.Context, bin string, r Rule) error {
	if bin == "" {
		return errors.New("codemod: no ast-grep binary given")
	}
	if len(r.YAML) == 0 {
		return ruleError(r, "the rule has no YAML")
	}
	sb, err := newSandbox("")
	if err != nil {
		return err
	}
	defer sb.close()

	res := astGrep(ctx, bin, sb.empty, "codemod validate "+r.ID, validateTimeout, 0,
		"scan", "-c", sb.config, "--color", "never", "--inline-rules", string(r.YAML), "--json=stream", ".")
	if f := runFailure(res); f != "" {
		return ruleError(r, "could not run ast-grep to check it: %s", f)
	}
	var rejected *RuleError
	if res.ExitCode != 0 {
		rejected = ruleError(r, "ast-grep rejects the rule:\n%s", cleanMessage(res.Output, r.Source()))
	}
	// A pattern that does not parse is the clearer message even when
	// ast-grep refuses the whole rule because of it ("Rule must specify a
	// set of AST kinds" for a pattern that is all ERROR).
	if pats, err := patternsOf(r.YAML); err == nil && r.Language != "" {
		for _, p := range pats {
			if perr := checkPattern(ctx, bin, sb, r, p); perr != nil {
				if rejected != nil {
					perr.Msg += "\n" + rejected.Msg
				}
				return perr
			}
		}
	}
	if rejected != nil {
		return rejected
	}
	return nil
}

// pattern is one pattern of a rule: a string, or a pattern object's
// context, selector and strictness.
type pattern struct {
	Text       string
	Selector   string
	Strictness string
}

func (p pattern) String() string {
	if p.Selector == "" {
		return fmt.Sprintf("%q", p.Text)
	}
	return fmt.Sprintf("%q (selector %s)", p.Text, p.Selector)
}

// patternsOf collects the distinct patterns anywhere in a rule document:
// under rule, constraints, utils and rewriters, at any depth of
// all/any/not/inside/has/precedes/follows. Keys that hold no rule (fix,
// transform, message, note, metadata, labels) are not searched.
func patternsOf(doc []byte) ([]pattern, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	var out []pattern
	seen := map[pattern]bool{}
	add := func(p pattern) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	var walk func(n *yaml.Node, top bool)
	walk = func(n *yaml.Node, top bool) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, top && n.Kind == yaml.DocumentNode)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				if top {
					switch k {
					case "fix", "transform", "message", "note", "metadata", "labels", "url", "id", "language", "severity", "files", "ignores":
						continue
					}
				}
				if k == "pattern" {
					switch v.Kind {
					case yaml.ScalarNode:
						add(pattern{Text: v.Value})
						continue
					case yaml.MappingNode:
						var p pattern
						for j := 0; j+1 < len(v.Content); j += 2 {
							switch v.Content[j].Value {
							case "context":
								p.Text = v.Content[j+1].Value
							case "selector":
								p.Selector = v.Content[j+1].Value
							case "strictness":
								p.Strictness = v.Content[j+1].Value
							}
						}
						add(p)
						continue
					}
				}
				if k == "fix" || k == "transform" {
					continue // a rewriter's fix and transform hold no patterns
				}
				walk(v, false)
			}
		}
	}
	walk(&root, true)
	return out, nil
}

// checkPattern asks ast-grep how it parses p for r's language.
func checkPattern(ctx context.Context, bin string, sb *sandbox, r Rule, p pattern) *RuleError {
	args := []string{"run", "-c", sb.config, "--color", "never", "--lang", r.Language, "--pattern", p.Text}
	if p.Selector != "" {
		args = append(args, "--selector", p.Selector)
	}
	if p.Strictness != "" {
		args = append(args, "--strictness", p.Strictness)
	}
	args = append(args, "--debug-query=pattern", ".")
	res := astGrep(ctx, bin, sb.empty, "codemod validate "+r.ID, validateTimeout, 0, args...)
	if f := runFailure(res); f != "" {
		return ruleError(r, "could not run ast-grep to check pattern %s: %s", p, f)
	}
	// run exits 1 when nothing matched, which in an empty directory is
	// always; anything else is ast-grep refusing the pattern.
	if res.ExitCode != 0 && res.ExitCode != 1 {
		return ruleError(r, "ast-grep rejects pattern %s for %s:\n%s", p, r.Language, cleanMessage(res.Output, r.Source()))
	}
	tree := debugPattern(res.Output)
	if tree == "" {
		return nil // nothing to inspect; ast-grep accepted it
	}
	for _, line := range strings.Split(tree, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "ERROR" {
			return ruleError(r, "pattern %s does not parse as %s: tree-sitter finds a syntax error in it (an ERROR node), so it would match nothing. ast-grep parses it as:\n%s\nWrite the pattern as a complete %s expression or statement, or give it a context and a selector", p, r.Language, tree, r.Language)
		}
	}
	if r.Language == "go" && p.Selector == "" {
		lines := strings.Split(tree, "\n")
		if len(lines) > 1 && strings.TrimSpace(lines[0]) == "type_conversion_expression" && strings.TrimSpace(lines[1]) == "qualified_type" {
			return ruleError(r, "Go pattern %s parses as a type conversion (tree-sitter-go reads pkg.Name(x) on its own that way), which never matches the call it looks like. ast-grep parses it as:\n%s\nGive it a context and a selector instead, e.g.\n  pattern:\n    context: 'func _() { %s }'\n    selector: call_expression", p, tree, p.Text)
		}
	}
	return nil
}

// debugPattern extracts the tree printed after "Debug Pattern:".
func debugPattern(out string) string {
	_, after, ok := strings.Cut(out, "Debug Pattern:\n")
	if !ok {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		if strings.TrimSpace(l) == "" {
			break
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
