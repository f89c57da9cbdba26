package codemod

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Dir is where a repository keeps its codemods, relative to its root.
const Dir = ".horizon/codemods"

// maxRuleFile bounds the size of one rule file Load reads.
const maxRuleFile = 1 << 20

// Rule is one ast-grep rewrite rule.
type Rule struct {
	ID       string // the rule's id
	Language string // canonical ast-grep language name ("go", "python", "typescript", ...)
	// Path is the file the rule came from, relative to the repository root
	// and slash-separated (".horizon/codemods/x.yml"); "" for a built-in.
	Path    string
	Builtin bool
	Message string // the rule's message, if any
	// YAML is the rule document as ast-grep reads it: the file's bytes for a
	// one-document file, the re-encoded document for a multi-document one.
	YAML []byte
}

// Source names where the rule came from, for messages: its file, or
// "built-in".
func (r Rule) Source() string {
	if r.Path == "" {
		return "built-in"
	}
	return r.Path
}

func (r Rule) String() string { return fmt.Sprintf("%s (%s)", r.ID, r.Source()) }

// LoadError is a problem Load found in a rule file; the rule (or the whole
// file, when it does not parse) is skipped.
type LoadError struct {
	Path   string // repo-relative, slash-separated
	Line   int    // 1-based; 0 when unknown
	ID     string // the rule's id, when it has one
	Reason string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.ID != "" {
		fmt.Fprintf(&b, "codemod %q: ", e.ID)
	}
	b.WriteString(e.Reason)
	b.WriteString(" (skipped)")
	return b.String()
}

// Load returns the codemods of the repository at repoDir: every rule in
// .horizon/codemods/*.yml and *.yaml (files in name order, documents in file
// order), then the built-ins that no project rule replaces (same id). A
// missing .horizon/codemods directory is not a problem. A file that cannot
// be read or parsed, or a rule that lacks id, language, rule or fix, names a
// language ast-grep does not know, or repeats an earlier project rule's id,
// is reported in problems (each a *LoadError naming the file and the reason)
// and skipped; the rest still load.
//
// Load does not run ast-grep; Validate does.
func Load(repoDir string) (rules []Rule, problems []error) {
	dir := filepath.Join(repoDir, filepath.FromSlash(Dir))
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, &LoadError{Path: Dir, Reason: "cannot read the codemods directory: " + err.Error()})
	}
	seen := map[string]string{} // id → file that defined it
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")) {
			continue
		}
		rel := path.Join(Dir, name)
		data, err := readRuleFile(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, &LoadError{Path: rel, Reason: err.Error()})
			continue
		}
		rs, ps := parseRules(rel, data)
		problems = append(problems, ps...)
		for _, r := range rs {
			if prev, dup := seen[r.ID]; dup {
				problems = append(problems, &LoadError{Path: rel, ID: r.ID,
					Reason: "duplicate id: already defined in " + prev})
				continue
			}
			seen[r.ID] = rel
			rules = append(rules, r)
		}
	}
	for _, b := range Builtins() {
		if _, replaced := seen[b.ID]; !replaced {
			rules = append(rules, b)
		}
	}
	return rules, problems
}

func readRuleFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRuleFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if len(data) > maxRuleFile {
		return nil, fmt.Errorf("larger than %d bytes", maxRuleFile)
	}
	return data, nil
}

// parseRules splits a rule file into its documents and checks each one.
func parseRules(rel string, data []byte) (rules []Rule, problems []error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, []error{&LoadError{Path: rel, Reason: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
		}
		if len(doc.Content) == 0 || isNull(doc.Content[0]) {
			continue // an empty document, e.g. after a trailing ---
		}
		docs = append(docs, &doc)
	}
	if len(docs) == 0 {
		return nil, []error{&LoadError{Path: rel, Reason: "no rule in the file"}}
	}
	for _, doc := range docs {
		r, err := checkRule(rel, doc.Content[0])
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if len(docs) == 1 {
			r.YAML = bytes.Clone(data)
		} else {
			out, err := yaml.Marshal(doc)
			if err != nil {
				problems = append(problems, &LoadError{Path: rel, Line: doc.Line, ID: r.ID, Reason: "cannot re-encode the rule: " + err.Error()})
				continue
			}
			r.YAML = out
		}
		rules = append(rules, r)
	}
	return rules, problems
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// checkRule checks the keys T0 depends on; ast-grep checks the rest
// (Validate).
func checkRule(rel string, m *yaml.Node) (Rule, *LoadError) {
	fail := func(line int, id, format string, args ...any) (Rule, *LoadError) {
		return Rule{}, &LoadError{Path: rel, Line: line, ID: id, Reason: fmt.Sprintf(format, args...)}
	}
	if m.Kind != yaml.MappingNode {
		return fail(m.Line, "", "a rule must be a YAML mapping (id, language, rule, fix), not a %s", kindName(m))
	}
	if k := duplicateKey(m); k != nil {
		return fail(k.Line, "", "duplicate key %q", k.Value)
	}
	get := func(key string) (*yaml.Node, *yaml.Node) { return getKey(m, key) }
	r := Rule{Path: rel}
	_, id := get("id")
	switch {
	case id == nil || isNull(id):
		return fail(m.Line, "", "missing \"id\"")
	case id.Kind != yaml.ScalarNode || strings.TrimSpace(id.Value) == "":
		return fail(id.Line, "", "\"id\" must be a non-empty string")
	}
	r.ID = id.Value
	_, lang := get("language")
	switch {
	case lang == nil || isNull(lang):
		return fail(m.Line, r.ID, "missing \"language\"")
	case lang.Kind != yaml.ScalarNode:
		return fail(lang.Line, r.ID, "\"language\" must be a string")
	}
	canon, ok := CanonicalLanguage(lang.Value)
	if !ok {
		return fail(lang.Line, r.ID, "unknown language %q: ast-grep %s supports %s", lang.Value, astGrepVersion, strings.Join(Languages(), ", "))
	}
	r.Language = canon
	switch _, rule := get("rule"); {
	case rule == nil || isNull(rule):
		return fail(m.Line, r.ID, "missing \"rule\" (what to match)")
	case rule.Kind != yaml.MappingNode || len(rule.Content) == 0:
		return fail(rule.Line, r.ID, "\"rule\" must be a non-empty mapping (pattern, kind, any, ...)")
	}
	fixKey, fix := get("fix")
	switch {
	case fix == nil:
		return fail(m.Line, r.ID, "missing \"fix\": a T0 codemod must rewrite code (a rule without fix only reports)")
	case isNull(fix):
		return fail(fixKey.Line, r.ID, "\"fix\" is empty (write fix: '' to delete the match)")
	case fix.Kind == yaml.MappingNode:
		if k, _ := getKey(fix, "template"); k == nil {
			return fail(fix.Line, r.ID, "\"fix\" as a mapping needs a \"template\"")
		}
	case fix.Kind != yaml.ScalarNode:
		return fail(fix.Line, r.ID, "\"fix\" must be a string or a mapping with a template")
	}
	if _, msg := get("message"); msg != nil && msg.Kind == yaml.ScalarNode {
		r.Message = msg.Value
	}
	return r, nil
}

func getKey(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// duplicateKey returns the first repeated key of any mapping under n;
// ast-grep rejects them.
func duplicateKey(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if seen[k.Value] {
				return k
			}
			seen[k.Value] = true
		}
	}
	for _, c := range n.Content {
		if d := duplicateKey(c); d != nil {
			return d
		}
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

// astGrepVersion is the ast-grep release the language table was taken from.
const astGrepVersion = "0.51.1"

// languages maps every language name ast-grep 0.51.1 accepts in a rule's
// language field (case-insensitively) to its canonical name.
var languages = map[string]string{
	"bash": "bash",
	"c":    "c",
	"cc":   "cpp", "c++": "cpp", "cpp": "cpp", "cxx": "cpp",
	"cs": "csharp", "csharp": "csharp",
	"css":    "css",
	"dart":   "dart",
	"elixir": "elixir", "ex": "elixir",
	"go": "go", "golang": "go",
	"haskell": "haskell", "hs": "haskell",
	"hcl":        "hcl",
	"html":       "html",
	"java":       "java",
	"javascript": "javascript", "js": "javascript", "jsx": "javascript",
	"json":   "json",
	"kotlin": "kotlin", "kt": "kotlin",
	"lua":      "lua",
	"markdown": "markdown", "md": "markdown",
	"nix":    "nix",
	"php":    "php",
	"python": "python", "py": "python",
	"ruby": "ruby", "rb": "ruby",
	"rust": "rust", "rs": "rust",
	"scala":    "scala",
	"solidity": "solidity", "sol": "solidity",
	"swift":      "swift",
	"typescript": "typescript", "ts": "typescript",
	"tsx":  "tsx",
	"yaml": "yaml", "yml": "yaml",
	"zig": "zig",
}

// CanonicalLanguage maps a language name as a rule may spell it ("Go",
// "golang", "py", "ts") to its canonical ast-grep name, and reports whether
// ast-grep knows it.
func CanonicalLanguage(name string) (string, bool) {
	c, ok := languages[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// Languages lists the canonical language names, sorted.
func Languages() []string {
	var out []string
	for _, c := range languages {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}
