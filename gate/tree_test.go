package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitRepo makes a repository whose one commit holds what setup wrote, and
// returns its directory and the commit.
func gitRepo(t *testing.T, setup func(dir string)) (string, string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	setup(dir)
	run("add", "-A")
	run("commit", "-q", "--allow-empty", "-m", "base")
	return dir, run("rev-parse", "HEAD")
}

// Discovery on a commit reads the tree as it is: modes from ls-tree,
// contents from blobs, never a mock-up of the top level, and errors name
// the repository's file.
func TestDiscoverTree(t *testing.T) {
	file := func(rel, body string) func(string) {
		return func(dir string) { writeFile(t, dir, rel, body, 0o644) }
	}
	script := func(rel string) func(string) {
		return func(dir string) { writeFile(t, dir, rel, okScript, 0o755) }
	}
	tests := []struct {
		name       string
		setup      []func(dir string)
		wantSource string
		wantMode   string
		wantErr    error
		errHas     []string
	}{
		{name: "only .horizon/roadmap.md is no gate, and says so plainly",
			setup: []func(string){file(".horizon/roadmap.md", "- [ ] a\n")}, wantErr: ErrNoGate, errHas: []string{"no gate in", ".horizon/verify.sh"}},
		{name: ".horizon/roadmap.md and go.mod: detected go test",
			setup: []func(string){file(".horizon/roadmap.md", "- [ ] a\n"), file("go.mod", "module x\n")}, wantSource: "detected: go test ./..."},
		{name: ".horizon/specialists/ and go.mod: detected go test",
			setup: []func(string){file(".horizon/specialists/reviewer.md", "---\nname: r\n---\n"), file("go.mod", "module x\n")}, wantSource: "detected: go test ./..."},
		{name: "config and gate script",
			setup: []func(string){file(".horizon/config.yaml", "gate:\n  timeout: 1m\n"), script(".horizon/verify.sh"), file("go.mod", "module x\n")}, wantSource: ".horizon/verify.sh", wantMode: ModeExecutable},
		{name: "a file named .horizon holds no gate",
			setup: []func(string){file(".horizon", "x"), script(".zecor/verify.sh")}, wantSource: ".zecor/verify.sh", wantMode: ModeExecutable},
		{name: "script 100644",
			setup: []func(string){file(".horizon/verify.sh", okScript), file("go.mod", "module x\n")}, wantErr: ErrGateNotRunnable,
			errHas: []string{"/.horizon/verify.sh is not runnable", "lacks the execute bit in the commit", "git update-index --chmod=+x .horizon/verify.sh"}},
		{name: "script is a directory",
			setup: []func(string){script(".horizon/verify.sh/run")}, wantErr: ErrGateNotRunnable, errHas: []string{"/.horizon/verify.sh is not runnable", "it is a directory"}},
		{name: "script is a symlink",
			setup: []func(string){script("scripts/check.sh"), func(dir string) {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, ".fleet"), 0o755))
				require.NoError(t, os.Symlink("../scripts/check.sh", filepath.Join(dir, ".fleet/verify.sh")))
			}}, wantSource: ".fleet/verify.sh", wantMode: ModeSymlink},
		{name: "zecor before fleet", setup: []func(string){script(".fleet/verify.sh"), script(".zecor/verify.sh")}, wantSource: ".zecor/verify.sh", wantMode: ModeExecutable},
		{name: "package.json scripts.test read from the blob",
			setup: []func(string){file("package.json", `{"scripts":{"test":"node --test"}}`)}, wantSource: "detected: npm test"},
		{name: "package.json placeholder test is no gate",
			setup: []func(string){file("package.json", `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`)}, wantErr: ErrNoGate},
		{name: "pytest marker under tests/",
			setup: []func(string){file("tests/test_calc.py", "def test_a():\n    pass\n")}, wantSource: "pytest"},
		{name: "pytest.ini", setup: []func(string){file("pytest.ini", "[pytest]\n")}, wantSource: "pytest"},
		{name: "a python file that is no test is no gate", setup: []func(string){file("tests/helper.py", "")}, wantErr: ErrNoGate},
		{name: "cargo", setup: []func(string){file("Cargo.toml", "[package]\n")}, wantSource: "detected: cargo test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, commit := gitRepo(t, func(dir string) {
				for _, s := range tt.setup {
					s(dir)
				}
			})
			// What is in the work tree but not the commit plays no part.
			writeFile(t, dir, "untracked/.horizon/verify.sh", okScript, 0o755)
			g, err := DiscoverTree(context.Background(), GitTree{Dir: dir, Commit: commit}, dir)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, s := range tt.errHas {
					require.ErrorContains(t, err, s)
				}
				require.NotContains(t, err.Error(), "not a directory")
				if tt.wantErr == ErrGateNotRunnable {
					require.ErrorContains(t, err, dir+string(filepath.Separator), "names the repository's file")
				}
				return
			}
			require.NoError(t, err)
			if tt.wantSource == "pytest" {
				tt.wantSource = pytestSource() // whichever pytest this machine has
			}
			require.Equal(t, tt.wantSource, g.Source)
			require.Equal(t, tt.wantMode, g.Mode)
			if tt.wantMode != "" {
				require.Equal(t, g.Source, g.Script)
				obj, err := exec.Command("git", "-C", dir, "rev-parse", commit+":"+g.Script).Output()
				require.NoError(t, err)
				require.Equal(t, strings.TrimSpace(string(obj)), g.Hash, "the hash is the commit's blob")
			} else {
				require.Empty(t, g.Script)
				require.Empty(t, g.Hash)
			}
		})
	}
}

// The script in the commit is the gate, not the one in the work tree: a
// gate added but not committed is not seen, and one deleted but not
// committed still is.
func TestDiscoverTreeIsTheCommitNotTheWorkTree(t *testing.T) {
	dir, commit := gitRepo(t, func(dir string) {
		writeFile(t, dir, ".zecor/verify.sh", okScript, 0o755)
	})
	require.NoError(t, os.Remove(filepath.Join(dir, ".zecor/verify.sh")))
	writeFile(t, dir, ".horizon/verify.sh", okScript, 0o755)
	g, err := DiscoverTree(context.Background(), GitTree{Dir: dir, Commit: commit}, dir)
	require.NoError(t, err)
	require.Equal(t, ".zecor/verify.sh", g.Script)
}

// A virtualenv is the repository's, named by its absolute path: a lane
// does not carry it, and one a worker makes in its lane is not consulted.
func TestDiscoverTreePytestVenvIsTheRepositorys(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	dir, commit := gitRepo(t, func(dir string) {
		writeFile(t, dir, "pyproject.toml", "[project]\nname='x'\n", 0o644)
	})
	writeFile(t, dir, ".venv/bin/python", fakePython(true), 0o755) // not committed: a virtualenv never is
	g, err := DiscoverTree(context.Background(), GitTree{Dir: dir, Commit: commit}, dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, ".venv/bin/python"), "-m", "pytest"}, g.Command)
}
