// Package golden compares test output with files under a package's
// testdata/ directory, and rewrites them when the test binary runs with
// -update. Importing it registers the -update flag, so a package that uses
// it must not declare its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// Updating reports whether the run rewrites golden files.
func Updating() bool { return *update }

// Read returns testdata/<name>.
func Read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read testdata/%s: %v", name, err)
	}
	return string(b)
}

// Assert compares got with testdata/<name>, or rewrites the file under
// -update. A mismatch names the first differing line rather than dumping
// both files.
func Assert(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file %s (run the test with -update to create it): %v", path, err)
	}
	if string(want) == got {
		return
	}
	w, g := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			t.Fatalf("%s differs at line %d (run with -update if the change is intended, and review the diff)\nwant: %q\ngot:  %q", path, i+1, wl, gl)
		}
	}
}
