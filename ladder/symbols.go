package ladder

import (
	"regexp"
	"slices"
)

// symbolREs match the messages compilers and runtimes print for a name they
// cannot resolve. Each has one group: the name. The Go pattern is not
// anchored to the line start so that it also matches inside the escaped
// "Output" strings of `go test -json` (the name ends at the `\n` escape).
var symbolREs = []*regexp.Regexp{
	// go build / go test / go vet: "calc/calc.go:5:37: undefined: plus",
	// qualified for a missing package member: "undefined: strings.ToUpperCase".
	regexp.MustCompile(`\.go:\d+(?::\d+)?: undefined: ([\pL_][\pL\pN_]*(?:\.[\pL_][\pL\pN_]*)?)`),
	// tsc: "error TS2304: Cannot find name 'startValue'." and TS2552 "…
	// Did you mean 'string'?".
	regexp.MustCompile(`Cannot find name '([^'\s]+)'`),
	// rustc E0425/E0412/E0433 family: "cannot find value `start_value` in
	// this scope", also function, type, macro, trait, …, and "in module `m`".
	regexp.MustCompile("cannot find (?:value|function|type|macro|trait|struct, variant or union type|attribute macro|derive macro|attribute) `([^`\\s]+)` in (?:this scope|module `[^`]*`|crate `[^`]*`)"),
	// Python: "NameError: name 'start_value' is not defined" (3.11 may add
	// ". Did you mean: 'values'?"). pytest's truncated summary lines
	// ("is not ...") do not match, their full form elsewhere does.
	regexp.MustCompile(`NameError: name '([^'\s]+)' is not defined`),
	// JavaScript at run time (node, jest, vitest): "ReferenceError:
	// startValue is not defined", node's spec reporter adds " [Error]".
	regexp.MustCompile(`ReferenceError(?: \[Error\])?: ([\pL_$][\pL\pN_$]*) is not defined`),
}

// UnresolvedSymbols returns the names that output (a gate's combined
// stdout and stderr) reports as unresolved, sorted and without duplicates:
// Go "undefined: X", TypeScript "Cannot find name 'X'", Rust "cannot find
// value/function/type/macro `X` in this scope", Python "NameError: name 'X'
// is not defined" and JavaScript "ReferenceError: X is not defined".
// Terminal colour codes are ignored.
func UnresolvedSymbols(output string) []string {
	output = stripANSI(output)
	var out []string
	for _, re := range symbolREs {
		for _, m := range re.FindAllStringSubmatch(output, -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ansiRE matches terminal escape sequences (colours, OSC hyperlinks), which
// tsc --pretty and CI-coloured runners put between the words.
var ansiRE = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

func stripANSI(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			return ansiRE.ReplaceAllString(s, "")
		}
	}
	return s
}
