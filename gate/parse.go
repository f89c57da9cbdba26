package gate

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// ParseFailures reads a gate's output and returns its failing-assertion set:
// the names of the tests that failed, sorted and without duplicates. The
// format is detected from the output itself; a gate script that runs several
// tools gets the union of what each recognised format reports. Known formats:
//
//   - go test, plain (--- FAIL: TestX, subtests TestX/sub) and -json;
//     names are "importpath.TestX/sub" when the package line is present,
//     and only the deepest failing subtests are kept (a parent fails because
//     its subtest did). A package that failed without a failing test (build
//     error, panic in TestMain, timeout) is named "importpath" or
//     "importpath [build failed]".
//   - pytest node ids ("tests/test_a.py::TestC::test_b[param]"), from the
//     short summary (FAILED/ERROR lines) and from -v lines.
//   - jest and vitest: "file > suite > test", as vitest prints it (jest's
//     "›" becomes ">"); a test file that failed to load is named by its path.
//   - cargo test: "module::test" as printed ("test x ... FAILED", the
//     failures list, terse "x --- FAILED"), and "could not compile `crate`
//     (target)" for a build error.
//   - TAP (node --test --test-reporter=tap, Perl's Test::More, ...): the
//     descriptions of "not ok" points, nested subtests joined with " > ";
//     TODO points do not count.
//
// known is false when no format was recognised: then the set is unknown, not
// empty. known with an empty set means the tools ran and reported no failing
// test, although the gate may still have failed for another reason (a lint
// step, a crash).
func ParseFailures(output string) (failing []string, known bool) {
	lines := splitLines(output)
	set := map[string]struct{}{}
	for _, parse := range parsers {
		names, ok := parse(lines)
		if !ok {
			continue
		}
		known = true
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" {
				set[n] = struct{}{}
			}
		}
	}
	failing = make([]string, 0, len(set))
	for n := range set {
		failing = append(failing, n)
	}
	slices.Sort(failing)
	return failing, known
}

var parsers = []func(lines []string) ([]string, bool){
	parseGoTest, parseGoTestJSON, parsePytest, parseCargo, parseJS, parseTAP,
}

// ansiRE matches terminal escape sequences (colours, cursor movement, OSC
// hyperlinks), which test runners emit when they think they talk to a
// terminal or when CI/FORCE_COLOR is set.
var ansiRE = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

// splitLines strips escape sequences and carriage returns: of a line redrawn
// with '\r' only the last drawing is kept.
func splitLines(s string) []string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRE.ReplaceAllString(s, "")
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return lines
}

// leaves drops every name that is a prefix path of another (TestX when
// TestX/sub failed): the parent failed only because its child did.
func leaves(names []string, sep string) []string {
	parents := map[string]bool{}
	for _, n := range names {
		for i := strings.Index(n, sep); i > 0; {
			parents[n[:i]] = true
			j := strings.Index(n[i+len(sep):], sep)
			if j < 0 {
				break
			}
			i += len(sep) + j
		}
	}
	out := names[:0:0]
	for _, n := range names {
		if !parents[n] {
			out = append(out, n)
		}
	}
	return out
}

// --- go test ---------------------------------------------------------------

var (
	goFailRE = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	goMarkRE = regexp.MustCompile(`^(?:\s*--- (?:PASS|SKIP): \S|=== (?:RUN|PAUSE|CONT|NAME) |ok  \t\S|\?   \t\S)`)
	goPkgRE  = regexp.MustCompile(`^(ok|FAIL)\s*\t(\S+)(?:\s+\[(build failed|setup failed)\]|\t.*)?\s*$`)
)

// parseGoTest reads plain `go test` output. go test prints a package's test
// lines before the package's ok/FAIL line, so failing tests are held until
// that line names their package.
func parseGoTest(lines []string) ([]string, bool) {
	var out, pending []string
	known := false
	flush := func(pkg string) {
		for _, t := range leaves(pending, "/") {
			if pkg != "" {
				t = pkg + "." + t
			}
			out = append(out, t)
		}
		pending = pending[:0]
	}
	for _, l := range lines {
		if m := goFailRE.FindStringSubmatch(l); m != nil {
			known = true
			pending = append(pending, m[1])
			continue
		}
		if m := goPkgRE.FindStringSubmatch(l); m != nil {
			known = true
			pkg := m[2]
			if m[1] == "FAIL" && len(pending) == 0 {
				if m[3] != "" {
					out = append(out, pkg+" ["+m[3]+"]")
				} else {
					out = append(out, pkg)
				}
			}
			flush(pkg)
			continue
		}
		if goMarkRE.MatchString(l) {
			known = true
		}
	}
	flush("")
	return out, known
}

// goEvent is one line of `go test -json` (test2json) output.
type goEvent struct {
	Action      string
	Package     string
	Test        string
	FailedBuild string
	ImportPath  string
}

func parseGoTestJSON(lines []string) ([]string, bool) {
	known := false
	tests := map[string][]string{} // package → failing tests
	var pkgFails []string          // packages failed as a whole, in order
	pkgLabel := map[string]string{}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"Action"`) {
			continue
		}
		var e goEvent
		if json.Unmarshal([]byte(l), &e) != nil || e.Action == "" || (e.Package == "" && e.ImportPath == "") {
			continue
		}
		known = true
		if e.Action != "fail" || e.Package == "" {
			continue
		}
		if e.Test != "" {
			tests[e.Package] = append(tests[e.Package], e.Test)
			continue
		}
		if _, seen := pkgLabel[e.Package]; !seen {
			pkgFails = append(pkgFails, e.Package)
		}
		label := e.Package
		if e.FailedBuild != "" {
			label += " [build failed]"
		}
		pkgLabel[e.Package] = label
	}
	var out []string
	for pkg, ts := range tests {
		for _, t := range leaves(ts, "/") {
			out = append(out, pkg+"."+t)
		}
	}
	for _, pkg := range pkgFails {
		if len(tests[pkg]) == 0 {
			out = append(out, pkgLabel[pkg])
		}
	}
	return out, known
}

// --- pytest ----------------------------------------------------------------

var (
	// "FAILED tests/test_a.py::test_b[x] - AssertionError: ..." (short
	// summary) and "ERROR tests/test_c.py" (collection error).
	pySummaryRE = regexp.MustCompile(`^(?:FAILED|ERROR) (\S+?\.py(?:::\S+?)*(?:\[.*?\])?)(?: - .*)?\s*$`)
	// "tests/test_a.py::test_b FAILED   [ 50%]" (-v).
	pyVerboseRE = regexp.MustCompile(`^(\S+?\.py(?:::\S+?)+(?:\[.*?\])?) (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?\s*$`)
	pyMarkRE    = regexp.MustCompile(`^(?:=+ (?:test session starts|short test summary info|FAILURES|ERRORS) =+$|=+ .*\b(?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|no tests ran)\b.* in [\d.]+s.*=+$|\d+ (?:passed|failed|errors?|skipped)\b.* in [\d.]+s)`)
)

func parsePytest(lines []string) ([]string, bool) {
	var out []string
	known := false
	for _, l := range lines {
		if m := pySummaryRE.FindStringSubmatch(l); m != nil {
			known = true
			out = append(out, m[1])
		} else if m := pyVerboseRE.FindStringSubmatch(l); m != nil {
			known = true
			out = append(out, m[1])
		} else if pyMarkRE.MatchString(l) {
			known = true
		}
	}
	return out, known
}

// --- cargo test --------------------------------------------------------------

var (
	cargoFailRE    = regexp.MustCompile(`^test (.+?)(?: - should panic)? \.\.\. FAILED\s*$`)
	cargoTerseRE   = regexp.MustCompile(`^(\S+) --- FAILED\s*$`)
	cargoMarkRE    = regexp.MustCompile(`^(?:running \d+ tests?$|test result: (?:ok|FAILED)\. \d+ passed|test .+ \.\.\. (?:ok|ignored|bench:))`)
	cargoCompileRE = regexp.MustCompile("^error: could not compile `([^`]+)`(?: \\(([^)]*)\\))?")
	cargoListRE    = regexp.MustCompile(`^    (\S+)$`)
)

func parseCargo(lines []string) ([]string, bool) {
	var out []string
	known := false
	inList := false
	for _, l := range lines {
		switch {
		case l == "failures:":
			inList = true
			continue
		case inList && cargoListRE.MatchString(l):
			out = append(out, strings.TrimSpace(l))
			continue
		}
		inList = false
		if m := cargoFailRE.FindStringSubmatch(l); m != nil {
			known = true
			out = append(out, m[1])
		} else if m := cargoCompileRE.FindStringSubmatch(l); m != nil {
			known = true
			name := "could not compile `" + m[1] + "`"
			if m[2] != "" {
				name += " (" + m[2] + ")"
			}
			out = append(out, name)
		} else if cargoMarkRE.MatchString(l) {
			known = true
		} else if m := cargoTerseRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	if !known {
		return nil, false
	}
	return out, true
}

// --- jest / vitest -----------------------------------------------------------

var (
	// vitest detail header: " FAIL  src/a.test.js > suite > test" or, for a
	// file that failed to load, " FAIL  src/a.test.js [ src/a.test.js ]".
	vitestFailRE = regexp.MustCompile(`^\s*FAIL\s+(\S+?)(?: > (.+?)| \[ .* \])?\s*$`)
	// vitest file line: " ❯ src/a.test.js (3 tests | 2 failed) 10ms".
	vitestFileRE = regexp.MustCompile(`^\s*[❯✓×✕↓]\s+(\S+)\s+\(\d+ tests?\b`)
	// jest file header: "FAIL src/a.test.js" or "PASS src/a.test.js (5.1 s)".
	jestFileRE = regexp.MustCompile(`^(?:FAIL|PASS) (\S+)(?: \([\d.]+ m?s\))?\s*$`)
	// jest failure detail: "  ● suite › test".
	jestBulletRE = regexp.MustCompile(`^\s*● (.+?)\s*$`)
	// a test line in a tree: "  ✕ name (5 ms)", "   × name 8ms", "  ✓ name".
	jsTestRE     = regexp.MustCompile(`^(\s*)([✕×✗✓✔√○↓✎])\s+(.+?)(?:\s+\(\d+(?:\.\d+)? m?s\)|\s+\d+(?:\.\d+)?m?s)?\s*$`)
	jsMarkRE     = regexp.MustCompile(`^(?:\s*RUN\s+v\d|\s*Test Files\s+\d|\s*Tests\s+\d+ (?:passed|failed)|Test Suites: |Tests:\s+\d)`)
	jsDurationRE = regexp.MustCompile(`\s+\d+(?:\.\d+)?m?s$`)
)

func parseJS(lines []string) ([]string, bool) {
	var out []string
	known := false
	file := ""      // current test file
	inTree := false // in the block of test lines under a file header
	type suite struct {
		indent int
		name   string
	}
	var stack []suite
	join := func(parts ...string) string {
		var nonEmpty []string
		for _, p := range parts {
			if p != "" {
				nonEmpty = append(nonEmpty, p)
			}
		}
		return strings.Join(nonEmpty, " > ")
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			inTree = false
			continue
		}
		if jsMarkRE.MatchString(l) {
			known = true
			inTree = false
			continue
		}
		if m := jestFileRE.FindStringSubmatch(l); m != nil && looksLikePath(m[1]) {
			known, file, inTree, stack = true, m[1], true, stack[:0]
			continue
		}
		if m := vitestFailRE.FindStringSubmatch(l); m != nil && looksLikePath(m[1]) {
			known, inTree = true, false
			out = append(out, join(m[1], m[2]))
			continue
		}
		if m := vitestFileRE.FindStringSubmatch(l); m != nil {
			known, file, inTree, stack = true, m[1], true, stack[:0]
			continue
		}
		if m := jestBulletRE.FindStringSubmatch(l); m != nil && file != "" {
			inTree = false
			switch name := m[1]; name {
			case "Console":
			case "Test suite failed to run":
				out = append(out, file)
			default:
				out = append(out, join(file, strings.ReplaceAll(name, " › ", " > ")))
			}
			continue
		}
		if !inTree {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if m := jsTestRE.FindStringSubmatch(l); m != nil {
			switch m[2] {
			case "✕", "×", "✗":
				parts := []string{file}
				for _, s := range stack {
					parts = append(parts, s.name)
				}
				out = append(out, join(append(parts, jsDurationRE.ReplaceAllString(m[3], ""))...))
			}
			continue
		}
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "→") && indent > 0 {
			stack = append(stack, suite{indent, t})
		} else {
			inTree = false
		}
	}
	return out, known
}

// looksLikePath accepts a test file path as jest and vitest print it.
func looksLikePath(s string) bool {
	return strings.ContainsAny(s, "./") && !strings.HasPrefix(s, "-")
}

// --- TAP ---------------------------------------------------------------------

var (
	tapPointRE = regexp.MustCompile(`^(\s*)(not ok|ok)\b(?:\s+\d+)?(?:\s*-)?\s*(.*?)\s*$`)
	tapMarkRE  = regexp.MustCompile(`^\s*(?:TAP version \d+|1\.\.\d+(?:\s*#.*)?)\s*$`)
	tapBailRE  = regexp.MustCompile(`^\s*Bail out!\s*(.*)$`)
	tapTodoRE  = regexp.MustCompile(`(?i)\s#\s*(?:TODO|SKIP)\b.*$`)
)

// parseTAP reads TAP 12/13/14 test points. Subtests are indented by four
// spaces and close with their parent's test point; a failing parent is
// replaced by its failing children ("parent > child").
func parseTAP(lines []string) ([]string, bool) {
	known := false
	failed := map[int][]string{} // depth → failing names seen since its parent's last point
	yaml := -1                   // indent of an open YAML block, or -1
	var bail []string
	for _, l := range lines {
		if yaml >= 0 {
			t := strings.TrimSpace(l)
			if t == "..." && indentOf(l) == yaml {
				yaml = -1
			}
			continue
		}
		if strings.TrimSpace(l) == "---" {
			yaml = indentOf(l)
			continue
		}
		if tapMarkRE.MatchString(l) {
			known = true
			continue
		}
		if m := tapBailRE.FindStringSubmatch(l); m != nil {
			bail = append(bail, strings.TrimSpace("Bail out! "+m[1]))
			continue
		}
		m := tapPointRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		depth := len(strings.ReplaceAll(m[1], "\t", "    ")) / 4
		desc := m[3]
		directive := tapTodoRE.MatchString(desc)
		desc = strings.TrimSpace(tapTodoRE.ReplaceAllString(desc, ""))
		children := failed[depth+1]
		for d := range failed {
			if d > depth {
				delete(failed, d)
			}
		}
		if m[2] == "ok" || directive {
			if len(children) > 0 && !directive { // an ok parent of failing children: keep them
				for _, c := range children {
					failed[depth] = append(failed[depth], desc+" > "+c)
				}
			}
			continue
		}
		if desc == "" {
			desc = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "not ok"))
		}
		if len(children) == 0 {
			failed[depth] = append(failed[depth], desc)
			continue
		}
		for _, c := range children {
			failed[depth] = append(failed[depth], desc+" > "+c)
		}
	}
	if !known {
		return nil, false
	}
	var out []string
	for _, names := range failed { // deeper levels left open by a truncated output count too
		out = append(out, names...)
	}
	return append(out, bail...), true
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }
