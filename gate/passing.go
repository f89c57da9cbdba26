package gate

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// ParsePassing reads a gate's output and returns the names of the tests
// it reports as passed, in ParseFailures' naming, sorted and without
// duplicates. known is false when the output names no passing test: the
// runner may not print them (plain `go test` prints only "ok  pkg", jest
// and vitest's trees are not read for passes), so the set is unknown, not
// empty. Read are go test -v (--- PASS), go test -json (pass events),
// pytest -v (PASSED), cargo test (test x ... ok) and TAP (ok points).
func ParsePassing(output string) (passing []string, known bool) {
	lines := splitLines(output)
	set := map[string]struct{}{}
	for _, parse := range []func([]string) []string{passGoTest, passGoTestJSON, passPytest, passCargo, passTAP} {
		for _, n := range parse(lines) {
			if n = strings.TrimSpace(n); n != "" {
				set[n] = struct{}{}
			}
		}
	}
	passing = make([]string, 0, len(set))
	for n := range set {
		passing = append(passing, n)
	}
	slices.Sort(passing)
	return passing, len(passing) > 0
}

var goPassRE = regexp.MustCompile(`^\s*--- PASS: (\S+)`)

// passGoTest: a package's --- PASS lines come before its ok/FAIL line.
func passGoTest(lines []string) []string {
	var out, pending []string
	for _, l := range lines {
		if m := goPassRE.FindStringSubmatch(l); m != nil {
			pending = append(pending, m[1])
			continue
		}
		if m := goPkgRE.FindStringSubmatch(l); m != nil {
			for _, t := range pending {
				out = append(out, m[2]+"."+t)
			}
			pending = pending[:0]
		}
	}
	return append(out, pending...)
}

func passGoTestJSON(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"pass"`) {
			continue
		}
		var e goEvent
		if json.Unmarshal([]byte(l), &e) == nil && e.Action == "pass" && e.Test != "" && e.Package != "" {
			out = append(out, e.Package+"."+e.Test)
		}
	}
	return out
}

var pyPassRE = regexp.MustCompile(`^(\S+?\.py(?:::\S+?)+(?:\[.*?\])?) (?:PASSED|XFAIL|XPASS)(?:\s+\[\s*\d+%\])?\s*$`)

func passPytest(lines []string) []string {
	var out []string
	for _, l := range lines {
		if m := pyPassRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var cargoPassRE = regexp.MustCompile(`^test (.+?)(?: - should panic)? \.\.\. ok\s*$`)

func passCargo(lines []string) []string {
	var out []string
	for _, l := range lines {
		if m := cargoPassRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// passTAP reads top-level "ok" points (subtests are named with their
// parent only when they fail, see parseTAP).
func passTAP(lines []string) []string {
	tap := false
	for _, l := range lines {
		if tapMarkRE.MatchString(l) {
			tap = true
			break
		}
	}
	if !tap {
		return nil
	}
	var out []string
	for _, l := range lines {
		m := tapPointRE.FindStringSubmatch(l)
		if m == nil || m[1] != "" || m[2] != "ok" || tapTodoRE.MatchString(m[3]) {
			continue
		}
		out = append(out, strings.TrimSpace(m[3]))
	}
	return out
}

// Vanished returns the tests of want (say, the baseline's failing set)
// that a run whose failing and passing sets are given does not show at
// all. A name that is not one test but a group (a Go package that failed
// to build, "pkg [build failed]") counts as shown when a test under it
// ran. Entries that name no test (a crate that did not compile, a TAP
// bail-out) are not asked for.
func Vanished(want, failing, passing []string) []string {
	ran := map[string]bool{}
	for _, n := range append(slices.Clone(failing), passing...) {
		ran[n] = true
	}
	var out []string
	for _, w := range want {
		if !IsTestName(w) || ran[w] {
			continue
		}
		group := groupOf(w)
		if slices.ContainsFunc(append(slices.Clone(failing), passing...), func(n string) bool {
			return strings.HasPrefix(n, group+".") || strings.HasPrefix(n, group+"/") || strings.HasPrefix(n, group+"::") || strings.HasPrefix(n, group+" > ")
		}) {
			continue
		}
		out = append(out, w)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// IsTestName reports whether a failing-set entry can name a test or a
// group of tests (not a crate's compile error or a bail-out).
func IsTestName(n string) bool {
	return n != "" && !strings.HasPrefix(n, "could not compile `") && !strings.HasPrefix(n, "Bail out!")
}

// groupOf drops a " [build failed]"-style label.
func groupOf(n string) string {
	if i := strings.Index(n, " ["); i > 0 && strings.HasSuffix(n, "]") {
		return n[:i]
	}
	return n
}

// TestLeaf is the name a test's source spells: the Go test function of
// "pkg.TestX/sub" (TestX), pytest's function of "tests/a.py::C::test_b[x]"
// (test_b), cargo's last path element, the last part of "file > suite >
// test"; "" for a name that is a group (a Go package) or no test.
func TestLeaf(n string) string {
	if !IsTestName(n) || groupOf(n) != n {
		return ""
	}
	if i := strings.LastIndex(n, " > "); i >= 0 {
		return strings.TrimSpace(n[i+3:])
	}
	if strings.Contains(n, "::") {
		leaf := n[strings.LastIndex(n, "::")+2:]
		if i := strings.IndexByte(leaf, '['); i > 0 {
			leaf = leaf[:i]
		}
		return leaf
	}
	// Go: importpath.TestX/sub; the import path may hold dots.
	for _, p := range []string{".Test", ".Example", ".Fuzz", ".Benchmark"} {
		if i := strings.LastIndex(n, p); i >= 0 {
			leaf := n[i+1:]
			if j := strings.IndexByte(leaf, '/'); j > 0 {
				leaf = leaf[:j]
			}
			return leaf
		}
	}
	return ""
}
