package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/golden"
)

// testdata/mixed.jsonl is a recorded `go test -json -p 1 ./...` of a
// module with a passing package (twelve timed tests, subtests, a skip), a
// failing one (a failed subtest, a panic), one that does not build and
// one with no tests.
func TestSummaryOfRecordedRun(t *testing.T) {
	f, err := os.Open("testdata/mixed.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	s := newSummary(&out, slowestShown)
	require.NoError(t, s.read(f))
	s.finish(false)
	got := out.String()
	golden.Assert(t, "mixed.golden", got)

	// go test's own lines stay: each package's verdict, in order, and the
	// closing FAIL last.
	for _, l := range []string{
		"FAIL\texample.com/rec/bad\t",
		"FAIL\texample.com/rec/broken [build failed]",
		"ok  \texample.com/rec/good\t",
		"?   \texample.com/rec/nothing\t[no test files]",
	} {
		require.Contains(t, got, "\n"+l)
	}
	require.True(t, strings.HasSuffix(got, "\nFAIL\texample.com/rec/bad\nFAIL\texample.com/rec/broken\nFAIL\n"), got)
	// Failed tests show their output, the build error shows; passing
	// tests stay quiet and test2json's framing is gone.
	for _, s := range []string{"the answer was wrong", "sub says no", "--- FAIL: TestBroken/sub", "about to panic", "assignment to entry in nil map", "undefined: undefined"} {
		require.Contains(t, got, s)
	}
	for _, s := range []string{"quiet log of a passing test", "fine, and quiet", "=== RUN", "=== PAUSE", "=== CONT", "--- PASS", "\nPASS\n"} {
		require.NotContains(t, got, s)
	}

	// The slowest: ten top-level tests, slowest first.
	_, table, ok := strings.Cut(got, "== the 10 slowest tests\n")
	require.True(t, ok, got)
	rows := regexp.MustCompile(`(?m)^ +([0-9.]+)s  (pass|fail|skip) +example\.com/rec/\w+ (\S+)$`).FindAllStringSubmatch(table, -1)
	require.Len(t, rows, 10)
	prev := 1e9
	for _, r := range rows {
		require.NotContains(t, r[3], "/", "subtests are counted in their test")
		e, err := strconv.ParseFloat(r[1], 64)
		require.NoError(t, err)
		require.LessOrEqual(t, e, prev)
		prev = e
	}
	require.Equal(t, "TestBroken", rows[0][3])
}

// The command keeps go test's exit status, whatever it is, and closes
// with PASS only when it is 0.
func TestRunKeepsExitStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script string
		code   int
		last   string
	}{
		{"passed", `printf '%s\n' '{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}'; exit 0`, 0, "ok  \tp\t0.1s\nPASS\n"},
		{"failed", "cat testdata/mixed.jsonl; exit 1", 1, "FAIL\n"},
		{"no package failed but go test did", "echo 'go: bad flag'; exit 2", 2, "go: bad flag\nFAIL\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"sh", "-c", tt.script}, &out, &errOut)
			require.Equal(t, tt.code, code, errOut.String())
			require.True(t, strings.HasSuffix(out.String(), tt.last), "%q", out.String())
		})
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run(nil, &out, &errOut))
	require.Contains(t, errOut.String(), "usage: slowest go test -json")
}
