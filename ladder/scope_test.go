package ladder

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, file string
		want          bool
	}{
		{"ladder", "ladder/route.go", true},
		{"ladder/", "ladder/testdata/seq/a1.txt", true},
		{"./ladder/**", "ladder/route.go", true},
		{"ladder", "ladderx/route.go", false},
		{"ladder/*.go", "ladder/route.go", true},
		{"ladder/*.go", "ladder/testdata/x.go", false},
		{"ladder/*", "ladder/testdata/x.go", true}, // * matched the directory testdata
		{"cmd/*/main.go", "cmd/horizon/main.go", true},
		{"cmd/*/main.go", "cmd/horizon/sub/main.go", false},
		{"**/*_test.go", "a/b/c_test.go", true},
		{"**/*_test.go", "c_test.go", true},
		{"internal/**/doc.go", "internal/doc.go", true},
		{"internal/**/doc.go", "internal/a/b/doc.go", true},
		{"**/**/**/x", "a/x", true},
		{"README.md", "README.md", true},
		{"README.md", "docs/README.md", false}, // anchored at the root
		{"*.md", "docs/README.md", false},
		{"calc.go", "./calc.go", true},
		{"a/b", "a/../a/b/c", true}, // cleaned first
		{"**", "../x", false},
		{"**", "/etc/passwd", false},
		{"", "x", false},
		{"/abs", "abs", false},
		{"a/../b", "b", false},
		{"[", "[", false}, // malformed pattern
		{"docs/my notes.txt", "docs/my notes.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.file, func(t *testing.T) {
			require.Equal(t, tt.want, MatchPath(tt.pattern, tt.file))
		})
	}
}

func TestValidatePattern(t *testing.T) {
	require.NoError(t, ValidatePattern("internal/**/*.go"))
	require.Error(t, ValidatePattern("["))
	require.Error(t, ValidatePattern("../x"))
	require.Error(t, ValidatePattern("/x"))
	require.Error(t, ValidatePattern(""))
}

func TestOutsideAllowList(t *testing.T) {
	require.Nil(t, OutsideAllowList(nil, []string{"x"}))
	require.Equal(t, []string{"a.go", "z.go"},
		OutsideAllowList([]string{"ladder/"}, []string{"z.go", "ladder/x.go", "a.go", "z.go"}))
}

// A pattern covers every file below a file it covers... the directory rule,
// and "**" patterns stay fast on deep paths.
func TestMatchPathProperties(t *testing.T) {
	seg := rapid.SampledFrom([]string{"a", "b", "src", "x.go", "y_test.go"})
	rapid.Check(t, func(t *rapid.T) {
		file := strings.Join(rapid.SliceOfN(seg, 1, 12).Draw(t, "file"), "/")
		// A file is covered by itself, by each of its parent directories and by "**".
		require.True(t, MatchPath(file, file))
		require.True(t, MatchPath("**", file))
		parts := strings.Split(file, "/")
		for i := 1; i < len(parts); i++ {
			require.True(t, MatchPath(strings.Join(parts[:i], "/"), file))
		}
		pat := strings.Join(rapid.SliceOfN(rapid.SampledFrom([]string{"**", "*", "a", "src", "*.go"}), 1, 12).Draw(t, "pattern"), "/")
		MatchPath(pat, file) // must terminate quickly, whatever the answer
	})
}
