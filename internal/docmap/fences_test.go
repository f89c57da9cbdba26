package docmap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// openFence is the line of a fence that is never closed (0: every fence
// is): from there on the rest of the file would render as code.
func openFence(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	open, marker := 0, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case open == 0 && (strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~")):
			open, marker = n, line[:3]
		case open != 0 && strings.HasPrefix(line, marker) && strings.Trim(line, marker[:1]) == "":
			open = 0
		}
	}
	return open, sc.Err()
}

// Every code fence of the README and ARCHITECTURE.md is closed.
func TestFencesClosed(t *testing.T) {
	for _, name := range []string{"README.md", "ARCHITECTURE.md"} {
		line, err := openFence(filepath.Join(root, name))
		require.NoError(t, err)
		require.Zero(t, line, "%s:%d opens a code fence that is never closed", name, line)
	}
}

// The check finds a fence left open, and is not fooled by a fence inside
// another kind of fence.
func TestOpenFenceFound(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int{
		"# a\n\n```sh\nmake\n```\n\ntext\n":         0,
		"# a\n\n```sh\nmake\n\n## b\n":              3,
		"~~~\n```\n~~~\n":                           0,
		"```\nx\n```\n```go\nfunc main() {}\n":      4,
		"text with ``` inside a line is no fence\n": 0,
	} {
		path := filepath.Join(dir, fmt.Sprintf("f%d.md", len(text)))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		got, err := openFence(path)
		require.NoError(t, err)
		require.Equal(t, want, got, "%q", text)
	}
}
