package gate

import (
	"context"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// Bad input the gate must survive, beyond what run_test.go and
// discover_test.go cover (no execute bit, a directory found by Discover,
// bounded output, invalid UTF-8 bytes).

// TestRunScriptIsDirectory: the lead's copy of a gate script (FromScript)
// turned out to be a directory; Run reports an error verdict, it does not
// fail the change or hang.
func TestRunScriptIsDirectory(t *testing.T) {
	dir := t.TempDir()
	res := Run(context.Background(), FromScript(dir), Options{Dir: dir})
	require.Equal(t, Error, res.Verdict)
	require.Equal(t, -1, res.ExitCode)
	require.Contains(t, res.Err, dir)
	require.Zero(t, res.PGID, "nothing was started")
}

// TestRunMegabytesOfNonUTF8FailingOutput: a failing gate that prints
// megabytes, much of it not UTF-8 (Latin-1 test names, binary noise). The
// output is capped to head and tail, valid UTF-8, and the failing tests
// shown in head and tail are still found.
func TestRunMegabytesOfNonUTF8FailingOutput(t *testing.T) {
	t.Parallel()
	g, dir := scriptGate(t, `echo '--- FAIL: TestFirst (0.00s)'
yes "$(printf 'noise \377\376 line')" | head -n 300000
printf -- '--- FAIL: TestLast (0.00s)\n    --- FAIL: TestLast/caf\351 (0.00s)\n' >&2
printf 'FAIL\texample.com/big\t0.100s\nFAIL\n'
exit 1
`)
	res := Run(context.Background(), g, Options{Dir: dir})
	require.Equal(t, Fail, res.Verdict, res.Err)
	require.Equal(t, 1, res.ExitCode)
	noise := int64(300000 * len("noise \377\376 line\n"))
	require.Greater(t, res.OutputBytes, noise)
	require.LessOrEqual(t, len(res.Output), DefaultMaxOutput+len(omitted(res.OutputBytes)))
	require.True(t, utf8.ValidString(res.Output))
	require.Contains(t, res.Output, "noise \uFFFD line\n", "each run of invalid bytes becomes one U+FFFD")

	got, known := ParseFailures(res.Output)
	require.True(t, known)
	require.Equal(t, []string{"example.com/big.TestFirst", "example.com/big.TestLast/caf\uFFFD"}, got)
}

// TestRunOnOutputHugeLine: megabytes without a newline reach OnOutput in
// pieces, no byte lost or reordered. (The size of the pieces depends on how
// the reads fall; TestDrainSplitsLongLines checks it.)
func TestRunOnOutputHugeLine(t *testing.T) {
	t.Parallel()
	const size = 3<<20 + 100
	g, dir := scriptGate(t, "head -c 3145828 /dev/zero | tr '\\0' x; echo; echo end\n")
	var lines []string
	res := Run(context.Background(), g, Options{Dir: dir, OnOutput: func(l string) { lines = append(lines, l) }})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Equal(t, int64(size+len("\nend\n")), res.OutputBytes)
	require.Greater(t, len(lines), size/maxLine, "the line reached OnOutput in pieces")
	require.Equal(t, "end", lines[len(lines)-1])
	joined := strings.Join(lines[:len(lines)-1], "")
	require.Equal(t, size, len(joined))
	require.Equal(t, size, strings.Count(joined, "x"), "only the x bytes, none lost")
}

// TestDrainSplitsLongLines feeds drain a long line in reads of various sizes:
// OnOutput must get the same pieces, none longer than 64 KiB, however the
// reads fall.
//
// It guards a fixed bug: drain used to split a pending line only while no
// newline had arrived, so a line over 64 KiB whose newline came in the read
// that overflowed it went to OnOutput whole, and the piece count depended on
// read timing.
func TestDrainSplitsLongLines(t *testing.T) {
	long := strings.Repeat("x", 2*maxLine+100)
	want := []string{long[:maxLine], long[maxLine : 2*maxLine], long[2*maxLine:], "end"}
	input := long + "\nend\n"
	for _, reads := range [][]int{
		{len(input)},                       // everything at once
		{60 << 10, len(input)},             // 60 KiB pending, then the rest with the newline
		{maxLine, 2 * maxLine, len(input)}, // the line's pieces, then its tail and the newline
		{1, 2*maxLine + 100, len(input)},   // the whole line but the newline
	} {
		var chunks []io.Reader
		prev := 0
		for _, end := range reads {
			chunks = append(chunks, strings.NewReader(input[prev:end]))
			prev = end
		}
		var got []string
		drain(io.MultiReader(chunks...), newCapBuffer(DefaultMaxOutput), func(l string) { got = append(got, l) })
		lens := func(ls []string) []int {
			var n []int
			for _, l := range ls {
				n = append(n, len(l))
			}
			return n
		}
		require.Equal(t, lens(want), lens(got), "reads ending at %v", reads)
		require.Equal(t, want, got, "reads ending at %v", reads)
	}
}
