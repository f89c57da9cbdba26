package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeFile creates dir/rel (and its parents) with the given mode.
func writeFile(t *testing.T, dir, rel, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), mode))
	require.NoError(t, os.Chmod(p, mode)) // WriteFile's mode is filtered by umask
	return p
}

const okScript = "#!/bin/sh\nexit 0\n"

func TestDiscover(t *testing.T) {
	script := func(rel string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { writeFile(t, dir, rel, okScript, 0o755) }
	}
	file := func(rel, body string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { writeFile(t, dir, rel, body, 0o644) }
	}
	tests := []struct {
		name       string
		setup      []func(t *testing.T, dir string)
		wantSource string
		wantCmd    []string // nil: the script itself
		wantErr    error
		errHas     []string
	}{
		{name: "horizon script", setup: []func(*testing.T, string){script(".horizon/verify.sh")}, wantSource: ".horizon/verify.sh"},
		{name: "horizon before zecor and fleet", setup: []func(*testing.T, string){script(".fleet/verify.sh"), script(".zecor/verify.sh"), script(".horizon/verify.sh")}, wantSource: ".horizon/verify.sh"},
		{name: "zecor before fleet", setup: []func(*testing.T, string){script(".fleet/verify.sh"), script(".zecor/verify.sh")}, wantSource: ".zecor/verify.sh"},
		{name: "fleet alone", setup: []func(*testing.T, string){script(".fleet/verify.sh")}, wantSource: ".fleet/verify.sh"},
		{name: "script before detection", setup: []func(*testing.T, string){file("go.mod", "module x\n"), script(".fleet/verify.sh")}, wantSource: ".fleet/verify.sh"},
		{name: "go", setup: []func(*testing.T, string){file("go.mod", "module x\n")}, wantSource: "detected: go test ./...", wantCmd: []string{"go", "test", "./..."}},
		{name: "go before npm", setup: []func(*testing.T, string){file("go.mod", "module x\n"), file("package.json", `{"scripts":{"test":"vitest run"}}`)}, wantSource: "detected: go test ./...", wantCmd: []string{"go", "test", "./..."}},
		{name: "pyproject", setup: []func(*testing.T, string){file("pyproject.toml", "")}, wantSource: "detected: python3 -m pytest", wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "pytest.ini", setup: []func(*testing.T, string){file("pytest.ini", "")}, wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "setup.cfg", setup: []func(*testing.T, string){file("setup.cfg", "")}, wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "tox.ini", setup: []func(*testing.T, string){file("tox.ini", "")}, wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "test_*.py at top", setup: []func(*testing.T, string){file("test_a.py", "")}, wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "test_*.py under tests", setup: []func(*testing.T, string){file("tests/test_a.py", "")}, wantCmd: []string{"python3", "-m", "pytest"}},
		{name: "npm test", setup: []func(*testing.T, string){file("package.json", `{"scripts":{"test":"vitest run"}}`)}, wantSource: "detected: npm test", wantCmd: []string{"npm", "test"}},
		{name: "cargo", setup: []func(*testing.T, string){file("Cargo.toml", "[package]\n")}, wantSource: "detected: cargo test", wantCmd: []string{"cargo", "test"}},
		{name: "npm placeholder test is no gate", setup: []func(*testing.T, string){file("package.json", `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`)}, wantErr: ErrNoGate},
		{name: "package.json without scripts is no gate", setup: []func(*testing.T, string){file("package.json", `{"name":"x"}`)}, wantErr: ErrNoGate},
		{name: "python file not a test is no gate", setup: []func(*testing.T, string){file("main.py", "")}, wantErr: ErrNoGate},
		{
			name:    "nothing",
			wantErr: ErrNoGate,
			errHas: []string{
				".horizon/verify.sh", ".zecor/verify.sh", ".fleet/verify.sh",
				"go.mod", "pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "test_*.py", "package.json", "Cargo.toml",
				"chmod +x .horizon/verify.sh",
			},
		},
		{
			name: "script is a directory",
			setup: []func(*testing.T, string){func(t *testing.T, dir string) {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, ".horizon/verify.sh"), 0o755))
			}},
			wantErr: ErrGateNotRunnable,
			errHas:  []string{".horizon/verify.sh", "directory"},
		},
		{
			name:    "script without execute bit",
			setup:   []func(*testing.T, string){file(".zecor/verify.sh", okScript)},
			wantErr: ErrGateNotRunnable,
			errHas:  []string{".zecor/verify.sh", "execute bit", "chmod +x"},
		},
		{
			name:    "broken script does not fall back to the next one",
			setup:   []func(*testing.T, string){file(".horizon/verify.sh", okScript), script(".fleet/verify.sh"), file("go.mod", "module x\n")},
			wantErr: ErrGateNotRunnable,
			errHas:  []string{".horizon/verify.sh", "chmod +x"},
		},
	}
	// No pytest on PATH, so Python projects get python3 -m pytest (see
	// TestDiscoverPytest for the other choices).
	t.Setenv("PATH", t.TempDir())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range tt.setup {
				s(t, dir)
			}
			g, err := Discover(dir)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, s := range tt.errHas {
					require.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			if tt.wantSource != "" {
				require.Equal(t, tt.wantSource, g.Source)
			}
			if tt.wantCmd == nil {
				want := filepath.Join(dir, g.Source)
				require.Equal(t, want, g.Path)
				require.Equal(t, []string{want}, g.Command)
				require.True(t, filepath.IsAbs(g.Path))
			} else {
				require.Empty(t, g.Path)
				require.Equal(t, tt.wantCmd, g.Command)
			}
		})
	}
}

// fakePython is an interpreter that imports pytest only when told to.
func fakePython(hasPytest bool) string {
	if hasPytest {
		return "#!/bin/sh\n[ \"$1 $2\" = \"-c import pytest\" ] && exit 0\nexit 3\n"
	}
	return "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pytest'\" >&2\nexit 1\n"
}

// A Python project's pytest runs under the project's virtualenv when that
// can import pytest, else the pytest on PATH, else python3 -m pytest.
func TestDiscoverPytest(t *testing.T) {
	venvPy := func(rel string, hasPytest bool) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { writeFile(t, dir, rel, fakePython(hasPytest), 0o755) }
	}
	tests := []struct {
		name       string
		project    []func(t *testing.T, dir string)
		pytestPATH bool // a pytest executable on PATH
		want       []string
	}{
		{name: "nothing: python3 -m pytest", want: []string{"python3", "-m", "pytest"}},
		{name: "pytest on PATH", pytestPATH: true, want: []string{"pytest"}},
		{name: ".venv with pytest wins over PATH", project: []func(*testing.T, string){venvPy(".venv/bin/python", true)}, pytestPATH: true, want: []string{"./.venv/bin/python", "-m", "pytest"}},
		{name: "venv with pytest", project: []func(*testing.T, string){venvPy("venv/bin/python", true)}, want: []string{"./venv/bin/python", "-m", "pytest"}},
		{name: "venv with only python3", project: []func(*testing.T, string){venvPy("venv/bin/python3", true)}, want: []string{"./venv/bin/python3", "-m", "pytest"}},
		{name: ".venv before venv", project: []func(*testing.T, string){venvPy(".venv/bin/python", true), venvPy("venv/bin/python", true)}, want: []string{"./.venv/bin/python", "-m", "pytest"}},
		{name: ".venv without pytest falls to venv", project: []func(*testing.T, string){venvPy(".venv/bin/python", false), venvPy("venv/bin/python", true)}, want: []string{"./venv/bin/python", "-m", "pytest"}},
		{name: ".venv without pytest falls to PATH", project: []func(*testing.T, string){venvPy(".venv/bin/python", false)}, pytestPATH: true, want: []string{"pytest"}},
		{name: ".venv without pytest, none on PATH", project: []func(*testing.T, string){venvPy(".venv/bin/python", false)}, want: []string{"python3", "-m", "pytest"}},
		{
			name: "interpreter without execute bit is skipped",
			project: []func(*testing.T, string){func(t *testing.T, dir string) {
				writeFile(t, dir, ".venv/bin/python", fakePython(true), 0o644)
			}},
			pytestPATH: true,
			want:       []string{"pytest"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if tt.pytestPATH {
				writeFile(t, bin, "pytest", okScript, 0o755)
			}
			t.Setenv("PATH", bin)
			dir := t.TempDir()
			writeFile(t, dir, "pyproject.toml", "", 0o644)
			for _, s := range tt.project {
				s(t, dir)
			}
			g, err := Discover(dir)
			require.NoError(t, err)
			require.Equal(t, tt.want, g.Command)
			require.Equal(t, "detected: "+strings.Join(tt.want, " "), g.Source)
			require.Empty(t, g.Path)
		})
	}
}

// The virtualenv's interpreter is named relative to the directory, and Run
// starts it from there.
func TestDiscoverPytestVenvRuns(t *testing.T) {
	t.Setenv("PATH", t.TempDir()+":/usr/bin:/bin")
	dir := t.TempDir()
	writeFile(t, dir, "pyproject.toml", "", 0o644)
	writeFile(t, dir, ".venv/bin/python", "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\necho \"venv pytest ran in $PWD\"\nexit 0\n", 0o755)
	g, err := Discover(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"./.venv/bin/python", "-m", "pytest"}, g.Command)
	r := Run(context.Background(), g, Options{Dir: dir, Timeout: time.Minute})
	require.Equal(t, Pass, r.Verdict, r.Output+r.Err)
	require.Contains(t, r.Output, "venv pytest ran in "+dir)
}

func TestDiscoverErrorsAreTyped(t *testing.T) {
	dir := t.TempDir()
	_, err := Discover(dir)
	var ng *NoGateError
	require.True(t, errors.As(err, &ng))
	require.Equal(t, dir, ng.Dir)
	require.Contains(t, ng.Looked, filepath.Join(dir, ".horizon/verify.sh"))
	require.NotErrorIs(t, err, ErrGateNotRunnable)

	writeFile(t, dir, ".horizon/verify.sh", okScript, 0o644)
	_, err = Discover(dir)
	var nr *NotRunnableError
	require.True(t, errors.As(err, &nr))
	require.Equal(t, filepath.Join(dir, ".horizon/verify.sh"), nr.Path)
	require.NotErrorIs(t, err, ErrNoGate)
}

func TestDiscoverBadDir(t *testing.T) {
	_, err := Discover(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNoGate)

	f := writeFile(t, t.TempDir(), "file", "", 0o644)
	_, err = Discover(f)
	require.ErrorContains(t, err, "not a directory")
}

func TestFromScript(t *testing.T) {
	p := writeFile(t, t.TempDir(), "verify.sh", okScript, 0o755)
	g := FromScript(p)
	require.Equal(t, p, g.Path)
	require.Equal(t, []string{p}, g.Command)
	require.Equal(t, p, g.Source)

	t.Chdir(filepath.Dir(p))
	g = FromScript("verify.sh")
	require.Equal(t, p, g.Path, "a relative path is made absolute")
}
