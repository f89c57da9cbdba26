package gate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
