package specialist

import (
	"fmt"
	"slices"
	"strings"
)

// Tool categories a manifest may name (Zero's), and the OpenCode tool ids
// each one grants.
var categories = map[string][]string{
	"read-only": {"read", "grep", "glob", "list"},
	"edit":      {"read", "grep", "glob", "list", "edit", "write", "patch"},
	"execute":   {"read", "grep", "glob", "list", "bash"},
	"plan":      {"todowrite", "todoread"},
}

// categoryNames in display order.
var categoryNames = []string{"read-only", "edit", "execute", "plan"}

// toolPermission maps each OpenCode tool id a manifest may name to the
// permission key that governs it in an agent file (edit covers write and
// patch in OpenCode).
var toolPermission = map[string]string{
	"read": "read", "grep": "grep", "glob": "glob", "list": "list",
	"edit": "edit", "write": "edit", "patch": "edit", "multiedit": "edit",
	"bash":      "bash",
	"todowrite": "todowrite", "todoread": "todoread",
	"webfetch": "webfetch", "websearch": "websearch", "codesearch": "codesearch",
	"lsp": "lsp",
}

// forbidden are tools a specialist may never have: with them it could
// spawn further specialists or author new ones. The names cover OpenCode's
// and Zero's spellings.
var forbidden = []string{"task", "taskoutput", "taskstop", "task_output", "task_stop", "generatespecialist", "generate_specialist", "skill"}

func checkTool(t string) error {
	lt := strings.ToLower(t)
	if slices.Contains(forbidden, lt) {
		return fmt.Errorf("tool %q is not allowed: a specialist cannot delegate to other agents or author specialists", t)
	}
	if _, ok := categories[t]; ok {
		return nil
	}
	if _, ok := toolPermission[t]; ok {
		return nil
	}
	return fmt.Errorf("unknown tool %q: use a category (%s) or an OpenCode tool id (%s)",
		t, strings.Join(categoryNames, ", "), strings.Join(sortedKeys(toolPermission), ", "))
}

// Permissions returns the permission keys the tools grant, sorted.
func Permissions(tools []string) []string {
	var keys []string
	add := func(id string) {
		if k := toolPermission[id]; k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, t := range tools {
		if ids, ok := categories[t]; ok {
			for _, id := range ids {
				add(id)
			}
			continue
		}
		add(t)
	}
	slices.Sort(keys)
	return keys
}

// ReadOnly reports whether tools grant neither writing files nor running a
// shell: only such a specialist may be delegated to by the worker.
func ReadOnly(tools []string) bool {
	p := Permissions(tools)
	return !slices.Contains(p, "edit") && !slices.Contains(p, "bash")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
