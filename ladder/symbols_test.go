package ladder

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnresolvedSymbolsRealOutput reads compiler and test-runner output
// captured from the real tools (testdata/README.md says which command made
// each file).
func TestUnresolvedSymbolsRealOutput(t *testing.T) {
	tests := []struct {
		file string
		want []string // nil: no unresolved symbol
	}{
		// Go 1.26.8, `go test ./...`: two undefined names and a missing package member.
		{"symbols/go_undefined_plain.txt", []string{"Helper", "plus", "strings.ToUpperCase"}},
		// `go test -json ./...`: the same, inside escaped Output strings.
		{"symbols/go_undefined_json.txt", []string{"Helper", "plus", "strings.ToUpperCase"}},
		// `go vet ./...` stops at the first error.
		{"symbols/go_undefined_vet.txt", []string{"plus"}},
		// gate's go3 project, plain and -json.
		{"gate/gotest/build_failed_plain.txt", []string{"undefinedThing"}},
		{"gate/gotest/build_failed_json.txt", []string{"undefinedThing"}},
		// tsc 5.9.3, `npx tsc -p .`: TS2304 twice and TS2552 (with a suggestion).
		{"symbols/tsc_plain.txt", []string{"formatPrice", "startValue", "strng"}},
		// `npx tsc -p . --pretty`: colour codes between the words.
		{"symbols/tsc_pretty.txt", []string{"formatPrice", "startValue", "strng"}},
		// cargo 1.95.0: value, function, type and macro not found in this scope.
		{"symbols/cargo_unresolved.txt", []string{"Cart", "format_price", "printline", "start_value"}},
		// gate's rs3 project.
		{"gate/cargo/compile_error.txt", []string{"missing_value"}},
		// pytest 7.2.1: full tracebacks, and --tb=line.
		{"symbols/pytest_nameerror.txt", []string{"fmt_price", "start_value", "valuse"}},
		{"symbols/pytest_nameerror_tbline.txt", []string{"fmt_price", "start_value", "valuse"}},
		// python 3.11: a plain traceback, and one with "Did you mean".
		{"symbols/python_nameerror.txt", []string{"start_value"}},
		{"symbols/python_nameerror_didyoumean.txt", []string{"valuse"}},
		// node 20 test runner, spec reporter: "ReferenceError [Error]: …".
		{"symbols/node_spec_referror.txt", []string{"startValue"}},

		// Failures that are not unresolved names.
		// node's TAP reporter splits the error name from its message: a known miss.
		{"symbols/node_tap_referror.txt", nil},
		// pytest: ModuleNotFoundError is a missing dependency, not a symbol.
		{"gate/pytest/collect_error.txt", nil},
		// vitest: "Cannot find module" is not "Cannot find name".
		{"gate/vitest/file_error.txt", nil},
		// plain assertion failures.
		{"gate/gotest/two_plain.txt", nil},
		{"gate/jest/two.txt", nil},
		{"gate/cargo/two.txt", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out := readTestdata(t, tt.file)
			got := UnresolvedSymbols(out)
			if tt.want == nil {
				require.Empty(t, got)
			} else {
				require.Equal(t, tt.want, got)
			}
			// Windows line ends change nothing.
			require.Equal(t, got, UnresolvedSymbols(strings.ReplaceAll(out, "\n", "\r\n")))
		})
	}
}

func TestUnresolvedSymbolsShapes(t *testing.T) {
	tests := []struct {
		name, out string
		want      []string
	}{
		{"empty", "", nil},
		{"go without position is not a compiler message", "undefined: foo", nil},
		{"go unicode name", "x.go:1:2: undefined: größe\n", []string{"größe"}},
		{"go line only", "x.go:12: undefined: Foo\n", []string{"Foo"}},
		{"rust in module", "error[E0425]: cannot find function `frob` in module `util`\n", []string{"frob"}},
		{"rust trait", "error[E0405]: cannot find trait `Shape` in this scope\n", []string{"Shape"}},
		{"pytest truncated summary only", "FAILED t.py::test_a - NameError: name 'start_value' is not ...\n", nil},
		{"duplicates collapse", "NameError: name 'a' is not defined\nNameError: name 'a' is not defined\n", []string{"a"}},
		{"js dollar name", "ReferenceError: $el is not defined\n", []string{"$el"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnresolvedSymbols(tt.out)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}
