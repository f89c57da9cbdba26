package golden

import (
	"os"
	"path/filepath"
	"testing"
)

type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }
func (r *recorder) Helper()                           {}

func TestAssert(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Assert(t, "a.txt", "one\ntwo\n")
	if got := Read(t, "a.txt"); got != "one\ntwo\n" {
		t.Fatalf("Read = %q", got)
	}
	r := &recorder{TB: t}
	Assert(r, "a.txt", "one\nthree\n")
	if r.failed == "" {
		t.Fatal("a differing file passed")
	}
}
