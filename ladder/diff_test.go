package ladder

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDiffRealDiffs(t *testing.T) {
	tests := []struct {
		file           string
		files          []string
		added, deleted int
	}{
		// git 2.39.5, `git diff` after a one-line comment edit.
		{"seq/a1.diff", []string{"calc.go"}, 1, 1},
		// two files, one of them out of a card's scope.
		{"diff/two_files.diff", []string{"README.md", "calc.go"}, 3, 2},
		// `git diff --cached -M`: a deletion, a pure rename, a new file, a new binary file.
		{"diff/mixed.diff", []string{"README.md", "calc_test.go", "docs.md", "internal/util/util.go", "logo.bin"}, 4, 15},
		// quoted non-ASCII name, name with a space (git adds a tab after it).
		{"diff/quoted.diff", []string{"café.md", "my notes.txt"}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			st, err := ParseDiff([]byte(readTestdata(t, tt.file)))
			require.NoError(t, err)
			require.Equal(t, tt.files, st.Files)
			require.Equal(t, tt.added, st.Added)
			require.Equal(t, tt.deleted, st.Deleted)
			require.Equal(t, tt.added+tt.deleted, st.ChangedLines())
			require.True(t, strings.HasPrefix(st.Hash, "sha256:"))
		})
	}
}

func TestParseDiffHash(t *testing.T) {
	a1 := readTestdata(t, "seq/a1.diff")
	a2 := readTestdata(t, "seq/a2.diff")
	h := func(s string) string {
		st, err := ParseDiff([]byte(s))
		require.NoError(t, err)
		return st.Hash
	}
	require.Equal(t, h(a1), h(a2), "the same edit made twice")
	// Longer abbreviated blob IDs (core.abbrev) do not change the hash.
	require.Equal(t, h(a1), h(strings.Replace(a1, "index ac2b7c0..9570622", "index ac2b7c0d1..95706221f", 1)))
	// A different change does.
	require.NotEqual(t, h(a1), h(strings.Replace(a1, "the sum of a and b", "a plus b", 1)))
	require.NotEqual(t, h(a1), h(""))
	require.Equal(t, h(""), h(""))
}

func TestParseDiffMalformed(t *testing.T) {
	a1 := readTestdata(t, "seq/a1.diff")
	tests := []struct {
		name, diff, err string
	}{
		{"cut short", a1[:len(a1)-30], "cut short"},
		{"bad hunk header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +x @@\n+a\n", "malformed hunk header"},
		{"foreign line in a hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n x\n?? what\n", "inside the hunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseDiff([]byte(tt.diff))
			require.ErrorContains(t, err, tt.err)
			require.NotEmpty(t, st.Files, "what was read is kept")
		})
	}
}

func TestParseDiffEmpty(t *testing.T) {
	st, err := ParseDiff(nil)
	require.NoError(t, err)
	require.Equal(t, []string{}, st.Files)
	require.Zero(t, st.ChangedLines())
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", st.Hash)
}

func TestHeaderPaths(t *testing.T) {
	require.Equal(t, []string{"my notes.txt"}, headerPaths("a/my notes.txt b/my notes.txt"))
	require.Equal(t, []string{"new.go", "old.go"}, headerPaths("a/old.go b/new.go"))
	require.Equal(t, []string{"café.md"}, headerPaths(`"a/caf\303\251.md" "b/caf\303\251.md"`))
	require.Equal(t, []string{"x y", "z"}, headerPaths(`"a/x y" b/z`))
}

func FuzzParseDiff(f *testing.F) {
	for _, name := range []string{"seq/a1.diff", "diff/two_files.diff", "diff/mixed.diff", "diff/quoted.diff"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, _ := ParseDiff([]byte(s))
		require.GreaterOrEqual(t, st.Added, 0)
		require.GreaterOrEqual(t, st.Deleted, 0)
		require.True(t, strings.HasPrefix(st.Hash, "sha256:"))
	})
}
