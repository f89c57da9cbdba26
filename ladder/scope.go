package ladder

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// MatchPath reports whether the allow-list pattern covers file, a
// slash-separated path relative to the repository root.
//
// Patterns are anchored at the root and matched segment by segment with
// path.Match syntax (*, ?, [...]); a "**" segment matches any number of
// segments, none included. A pattern that matches a directory covers
// everything below it, so "ladder", "ladder/" and "ladder/**" all cover
// "ladder/testdata/x.txt", while "ladder/*.go" covers "ladder/route.go"
// but not "ladder/testdata/x.go".
//
// A file path that is absolute or climbs out of the repository ("..") is
// never covered; neither is anything by a malformed pattern.
func MatchPath(pattern, file string) bool {
	pat, ok := cleanPattern(pattern)
	if !ok {
		return false
	}
	f, ok := cleanFile(file)
	if !ok {
		return false
	}
	segs := strings.Split(f, "/")
	for k := 1; k <= len(segs); k++ {
		if matchSegs(pat, segs[:k]) {
			return true
		}
	}
	return false
}

// OutsideAllowList returns the files no pattern covers, sorted and without
// duplicates. An empty allow-list allows everything.
func OutsideAllowList(allow, files []string) []string {
	if len(allow) == 0 {
		return nil
	}
	var out []string
	for _, f := range files {
		if !slices.ContainsFunc(allow, func(p string) bool { return MatchPath(p, f) }) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ValidatePattern reports whether pattern is a usable allow-list pattern.
func ValidatePattern(pattern string) error {
	if _, ok := cleanPattern(pattern); !ok {
		return fmt.Errorf("allow-list pattern %q: not a relative slash-separated path pattern", pattern)
	}
	return nil
}

// cleanPattern splits a pattern into segments, or reports it unusable.
func cleanPattern(p string) ([]string, bool) {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimRight(p, "/")
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return nil, false
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		// "**/**" is "**"; collapsing keeps matchSegs linear in practice.
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue
		}
		segs = append(segs, s)
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return nil, false
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, false
		}
	}
	return segs, true
}

// cleanFile normalises a changed-file path, or reports it out of any scope.
func cleanFile(f string) (string, bool) {
	f = strings.TrimSpace(f)
	if f == "" || strings.HasPrefix(f, "/") {
		return "", false
	}
	f = path.Clean(f)
	if f == "." || f == ".." || strings.HasPrefix(f, "../") {
		return "", false
	}
	return f, true
}

// matchSegs matches path segments against pattern segments, "**" matching
// zero or more segments.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
