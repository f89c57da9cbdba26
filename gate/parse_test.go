package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestParseFailuresRealOutput runs the parsers on output captured from the
// real tools (see testdata/README.md for the tiny projects). Each row names
// the command that produced its file, run in that project's directory.
func TestParseFailuresRealOutput(t *testing.T) {
	tests := []struct {
		file string
		want []string // nil: known, nothing failing
	}{
		// go1 (go 1.26.8): `go test ./...`
		{file: "gotest/one_plain.txt", want: []string{"example.com/calc.TestAdd"}},
		// go1: `go test -json ./...`
		{file: "gotest/one_json.txt", want: []string{"example.com/calc.TestAdd"}},
		// go2: `go test ./...` (table subtests; parents TestTotal dropped for their leaves)
		{file: "gotest/two_plain.txt", want: []string{
			"example.com/shop/cart.TestTotal/empty_list", "example.com/shop/cart.TestTotal/single", "example.com/shop/cart.TestTotal/two_items",
			"example.com/shop/price.TestDiscount", "example.com/shop/price.TestDiscountZero",
		}},
		// go2: `go test -v ./...`
		{file: "gotest/two_verbose.txt", want: []string{
			"example.com/shop/cart.TestTotal/empty_list", "example.com/shop/cart.TestTotal/single", "example.com/shop/cart.TestTotal/two_items",
			"example.com/shop/price.TestDiscount", "example.com/shop/price.TestDiscountZero",
		}},
		// go2: `go test -json ./...`
		{file: "gotest/two_json.txt", want: []string{
			"example.com/shop/cart.TestTotal/empty_list", "example.com/shop/cart.TestTotal/single", "example.com/shop/cart.TestTotal/two_items",
			"example.com/shop/price.TestDiscount", "example.com/shop/price.TestDiscountZero",
		}},
		// go3: `go test ./...` (package bad does not compile)
		{file: "gotest/build_failed_plain.txt", want: []string{"example.com/broken/bad [build failed]"}},
		// go3: `go test -json ./...`
		{file: "gotest/build_failed_json.txt", want: []string{"example.com/broken/bad [build failed]"}},
		// go3: `go test ./ok/`
		{file: "gotest/pass_plain.txt"},
		// go3: `go test -json ./ok/`
		{file: "gotest/pass_json.txt"},

		// py1 (pytest 7.2.1, Debian python3-pytest): `python3 -m pytest`
		{file: "pytest/one.txt", want: []string{"tests/test_math.py::test_add"}},
		// py1: `python3 -m pytest tests/test_math.py::test_sub`
		{file: "pytest/pass.txt"},
		// py2: `python3 -m pytest` (class method, parametrized case, KeyError)
		{file: "pytest/two.txt", want: []string{"tests/test_shop.py::TestCart::test_total", "tests/test_shop.py::test_discount[200-10-180]", "tests/test_shop.py::test_lookup"}},
		// py2: `python3 -m pytest -q`
		{file: "pytest/two_q.txt", want: []string{"tests/test_shop.py::TestCart::test_total", "tests/test_shop.py::test_discount[200-10-180]", "tests/test_shop.py::test_lookup"}},
		// py2: `python3 -m pytest -v`
		{file: "pytest/two_v.txt", want: []string{"tests/test_shop.py::TestCart::test_total", "tests/test_shop.py::test_discount[200-10-180]", "tests/test_shop.py::test_lookup"}},
		// py2 plus tests/test_broken.py importing a missing module: `python3 -m pytest`
		{file: "pytest/collect_error.txt", want: []string{"tests/test_broken.py"}},

		// rs1 (cargo 1.95.0): `cargo test --offline`
		{file: "cargo/one.txt", want: []string{"tests::adds"}},
		// rs1: `cargo test --offline --no-fail-fast -- --format=terse`
		{file: "cargo/one_terse.txt", want: []string{"tests::adds"}},
		// rs2: `cargo test --offline` (the lib target fails first, integration tests do not run)
		{file: "cargo/two.txt", want: []string{"cart::tests::total_of_two", "tests::discount_panics", "tests::discount_ten_percent"}},
		// rs2: `cargo test --offline --no-fail-fast`
		{file: "cargo/two_no_fail_fast.txt", want: []string{"cart::tests::total_of_two", "integration_total", "tests::discount_panics", "tests::discount_ten_percent"}},
		// rs2: `cargo test --offline --lib total_of_none`
		{file: "cargo/pass.txt"},
		// rs3 (undefined value): `cargo test --offline`
		{file: "cargo/compile_error.txt", want: []string{"could not compile `rs3` (lib test)", "could not compile `rs3` (lib)"}},

		// js (vitest 3.2.7): `npx vitest run src/one.test.js`
		{file: "vitest/one.txt", want: []string{"src/one.test.js > one failing"}},
		// js: `npx vitest run` (src/cart.test.js, src/one.test.js, src/ok.test.js)
		{file: "vitest/two.txt", want: []string{"src/cart.test.js > cart > total > sums two items", "src/cart.test.js > discount takes ten percent off", "src/one.test.js > one failing"}},
		// js with broken/broken.test.js added: `CI=1 npx vitest run` (CI=1 turns colours on)
		{file: "vitest/two_color.txt", want: []string{"broken/broken.test.js", "src/cart.test.js > cart > total > sums two items", "src/cart.test.js > discount takes ten percent off", "src/one.test.js > one failing"}},
		// js: `npx vitest run src/broken.test.js src/one.test.js` (broken.test.js then lived in src/)
		{file: "vitest/file_error.txt", want: []string{"src/broken.test.js", "src/one.test.js > one failing"}},
		// js: `npx vitest run src/ok.test.js`
		{file: "vitest/pass.txt"},

		// jest (jest 29): `npx jest src/one.test.js` (one file: verbose tree)
		{file: "jest/one.txt", want: []string{"src/one.test.js > one failing"}},
		// jest: `npx jest` (several files: no tree, ● details and a ● Console block)
		{file: "jest/two.txt", want: []string{"src/cart.test.js > cart > total > sums two items", "src/cart.test.js > discount takes ten percent off", "src/one.test.js > one failing"}},
		// jest: `npm test -- --verbose` (scripts.test = "jest")
		{file: "jest/two_verbose_npm.txt", want: []string{"src/cart.test.js > cart > total > sums two items", "src/cart.test.js > discount takes ten percent off", "src/one.test.js > one failing"}},
		// jest: `npx jest broken src/one.test.js` (broken/broken.test.js requires a missing module)
		{file: "jest/suite_error.txt", want: []string{"broken/broken.test.js", "src/one.test.js > one failing"}},
		// jest: `npx jest src/ok.test.js`
		{file: "jest/pass.txt"},

		// tap (node v20.20.2): `node --test --test-reporter=tap one.test.mjs`
		{file: "tap/node_one.txt", want: []string{"one failing"}},
		// tap: `node --test --test-reporter=tap cart.test.mjs` (nested describe, a failing TODO)
		{file: "tap/node_two.txt", want: []string{"cart > total > sums two items", "discount takes ten percent off"}},
		// tap (perl 5.36 Test::More): `perl t/cart.t` (a failing TODO)
		{file: "tap/perl_two.txt", want: []string{"discount takes ten percent off", "total sums two items"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			got, known := ParseFailures(string(data))
			require.True(t, known)
			want := tt.want
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, got)

			// The same output with Windows line ends parses the same.
			got, known = ParseFailures(strings.ReplaceAll(string(data), "\n", "\r\n"))
			require.True(t, known)
			require.Equal(t, want, got)
		})
	}
}

func TestParseFailuresSynthetic(t *testing.T) {
	tests := []struct {
		name      string
		output    string
		want      []string
		wantKnown bool
	}{
		{name: "empty", output: "", want: []string{}},
		{name: "prose", output: "building...\nerror: lint failed in main.c\nexit 1\n", want: []string{}},
		{name: "shell script noise with ok words", output: "ok\nnot ok\nFAILED\n", want: []string{}},
		{
			name:      "go test without package line (truncated)",
			output:    "--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/x (0.00s)\n--- FAIL: TestB (0.01s)\n",
			want:      []string{"TestA/x", "TestB"},
			wantKnown: true,
		},
		{
			name:      "go package failing without failing tests (panic in TestMain)",
			output:    "panic: boom\n\ngoroutine 1 [running]:\nFAIL\texample.com/x\t0.004s\nok  \texample.com/y\t0.002s\nFAIL\n",
			want:      []string{"example.com/x"},
			wantKnown: true,
		},
		{
			name:      "go parent failing on its own and through a subtest",
			output:    "--- FAIL: TestP (0.00s)\n    --- FAIL: TestP/a (0.00s)\n--- FAIL: TestPx (0.00s)\nFAIL\tm\t0.1s\n",
			want:      []string{"m.TestP/a", "m.TestPx"},
			wantKnown: true,
		},
		{
			name: "a gate running go test then pytest",
			output: "--- FAIL: TestA (0.00s)\nFAIL\tm\t0.1s\n" +
				"============================= test session starts ==============================\n" +
				"FAILED tests/test_x.py::test_y - assert 1 == 2\n==== 1 failed in 0.01s ====\n",
			want:      []string{"m.TestA", "tests/test_x.py::test_y"},
			wantKnown: true,
		},
		{
			name:      "pytest parameter with spaces and dashes",
			output:    "FAILED tests/test_a.py::test_b[a - b] - AssertionError\n",
			want:      []string{"tests/test_a.py::test_b[a - b]"},
			wantKnown: true,
		},
		{
			name:      "cargo doc test",
			output:    "running 1 test\ntest src/lib.rs - add (line 3) ... FAILED\n",
			want:      []string{"src/lib.rs - add (line 3)"},
			wantKnown: true,
		},
		{
			name:      "TAP plan and bail out",
			output:    "TAP version 14\n1..3\nok 1 - a\nnot ok 2\nBail out! database down\n",
			want:      []string{"2", "Bail out! database down"},
			wantKnown: true,
		},
		{
			name:      "TAP YAML block hides lookalike lines",
			output:    "TAP version 13\nnot ok 1 - real\n  ---\n  message: |\n    not ok 9 - fake\n  ...\n1..1\n",
			want:      []string{"real"},
			wantKnown: true,
		},
		{
			name:      "TAP skipped point is not a failure",
			output:    "1..2\nnot ok 1 - flaky # SKIP no network\nok 2 - b\n",
			want:      []string{},
			wantKnown: true,
		},
		{
			name:      "progress redraws with carriage returns",
			output:    "running 2 tests\r\ntest a ... \rtest a ... FAILED\r\n",
			want:      []string{"a"},
			wantKnown: true,
		},
		{
			name:      "capped output keeps what head and tail show",
			output:    "--- FAIL: TestA (0.00s)\n" + omitted(123456) + "--- FAIL: TestZ (0.00s)\nFAIL\tm\t1.0s\n",
			want:      []string{"m.TestA", "m.TestZ"},
			wantKnown: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := ParseFailures(tt.output)
			require.Equal(t, tt.wantKnown, known)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestGateToFailingSet runs a real `go test` gate end to end: Discover, Run,
// ParseFailures.
func TestGateToFailingSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	dir := t.TempDir()
	writeFile(t, dir, "go.mod", "module example.com/e2e\n\ngo 1.26\n", 0o644)
	writeFile(t, dir, "e2e_test.go", `package e2e

import "testing"

func TestGreen(t *testing.T) {}
func TestRed(t *testing.T) { t.Fatal("red") }
`, 0o644)
	g, err := Discover(dir)
	require.NoError(t, err)
	require.Equal(t, "detected: go test ./...", g.Source)
	res := Run(context.Background(), g, Options{Dir: dir, Timeout: 2 * time.Minute})
	require.Equal(t, Fail, res.Verdict, res.Output)
	got, known := ParseFailures(res.Output)
	require.True(t, known)
	require.Equal(t, []string{"example.com/e2e.TestRed"}, got)
}

// FuzzParseFailures checks that no output makes the parsers panic and that
// the set is well formed. Seeds: every captured output in testdata plus the
// corpus in testdata/fuzz/FuzzParseFailures.
func FuzzParseFailures(f *testing.F) {
	files, err := filepath.Glob("testdata/*/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, output string) {
		got, known := ParseFailures(output)
		if !known && len(got) > 0 {
			t.Fatalf("unknown format but failing %q", got)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("not a sorted set: %q", got)
		}
		for _, n := range got {
			if n == "" || n != strings.TrimSpace(n) {
				t.Fatalf("bad name %q", n)
			}
			if utf8.ValidString(output) && !utf8.ValidString(n) {
				t.Fatalf("invalid UTF-8 name %q from valid input", n)
			}
		}
		again, knownAgain := ParseFailures(output)
		if knownAgain != known || !slices.Equal(again, got) {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
	})
}

func TestLeaves(t *testing.T) {
	got := leaves([]string{"A", "A/b", "A/b/c", "A-1", "B", "C/d", "/x", "E//f", "E"}, "/")
	require.Equal(t, []string{"A/b/c", "A-1", "B", "C/d", "/x", "E//f"}, got)
}
