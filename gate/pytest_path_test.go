package gate

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Python project whose python3 has no pytest, with pytest only on PATH
// (a distribution's or pipx's): the gate runs that pytest, not
// `python3 -m pytest`, and passes when its tests pass. The pytest is run
// by its own interpreter with -m when that interpreter imports pytest,
// else as the script itself.
func TestPytestOnlyOnPathPasses(t *testing.T) {
	tests := []struct {
		name string
		// interpreterHasPytest: the interpreter named by pytest's #! line
		// answers `-c "import pytest"`.
		interpreterHasPytest bool
		want                 func(bin string) []string
	}{
		{name: "run by its interpreter", interpreterHasPytest: true, want: func(bin string) []string {
			return []string{filepath.Join(bin, "pytest-python"), "-m", "pytest"}
		}},
		{name: "run as the script", want: func(string) []string { return []string{"pytest"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			t.Setenv("PATH", bin+":/usr/bin:/bin")
			marks := t.TempDir()
			// The python3 first on PATH has no pytest, and says so as a
			// real one would; it leaves a mark if it is asked to run it.
			writeFile(t, bin, "python3", "#!/bin/sh\ntouch "+filepath.Join(marks, "python3")+"\necho 'No module named pytest' >&2\nexit 1\n", 0o755)
			probe := "exit 1"
			if tt.interpreterHasPytest {
				probe = "exit 0"
			}
			// pytest-python stands for the interpreter pytest was installed
			// with: `-c` is the import probe, anything else runs the tests.
			writeFile(t, bin, "pytest-python", "#!/bin/sh\n[ \"$1\" = -c ] && "+probe+"\necho \"pytest on PATH ran in $PWD: 1 passed\"\nexit 0\n", 0o755)
			writeFile(t, bin, "pytest", "#!"+filepath.Join(bin, "pytest-python")+"\n", 0o755)
			dir := t.TempDir()
			writeFile(t, dir, "pyproject.toml", "[project]\nname = \"calc\"\n", 0o644)
			writeFile(t, dir, "tests/test_calc.py", "def test_add():\n    assert 1 + 1 == 2\n", 0o644)

			g, err := Discover(dir)
			require.NoError(t, err)
			require.Equal(t, tt.want(bin), g.Command)
			r := Run(context.Background(), g, Options{Dir: dir, Timeout: time.Minute})
			require.Equal(t, Pass, r.Verdict, r.Output+r.Err)
			require.Contains(t, r.Output, "pytest on PATH ran in "+dir)
			require.NoFileExists(t, filepath.Join(marks, "python3"), "the python3 without pytest is never run")
		})
	}
}
