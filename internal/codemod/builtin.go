package codemod

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sync"
)

// The built-in rules live as ordinary ast-grep rule files in builtin/, so
// they can be read, tried with `ast-grep scan --rule`, and copied into a
// repository's .horizon/codemods as a starting point.
//
//go:embed builtin/*.yml
var builtinFS embed.FS

var builtins = sync.OnceValue(func() []Rule {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic(fmt.Sprintf("codemod: embedded built-in rules: %v", err))
	}
	var out []Rule
	for _, e := range entries {
		name := path.Join("builtin", e.Name())
		data, err := builtinFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("codemod: embedded built-in rule %s: %v", name, err))
		}
		rs, problems := parseRules(name, data)
		if len(problems) > 0 || len(rs) != 1 {
			panic(fmt.Sprintf("codemod: embedded built-in rule %s: %v", name, problems))
		}
		r := rs[0]
		r.Path, r.Builtin = "", true
		out = append(out, r)
	}
	return out
})

// Builtins returns horizon's built-in codemods: small, mechanical rewrites
// that keep behaviour (each rule file in builtin/ says why):
//
//	go-errorf                errors.New(fmt.Sprintf(...))     → fmt.Errorf(...)  (no %w; errors stays imported)
//	go-strings-contains      strings.Index(s, t) != -1 / >= 0 / > -1 → strings.Contains(s, t)
//	go-strings-not-contains  strings.Index(s, t) == -1 / < 0  → !strings.Contains(s, t)
//	py-is-none               if x == None:                    → if x is None:
//	py-is-not-none           if x != None:                    → if x is not None:
//	js-var-to-let            var x = e; at function-body level → let x = e;  (JavaScript)
//	ts-var-to-let            the same for TypeScript
//	tsx-var-to-let           the same for TSX
//
// The slice and its YAML are fresh copies on every call.
func Builtins() []Rule {
	src := builtins()
	out := make([]Rule, len(src))
	for i, r := range src {
		r.YAML = bytes.Clone(r.YAML)
		out[i] = r
	}
	return out
}
