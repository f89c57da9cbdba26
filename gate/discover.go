package gate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Gate is a command whose exit status judges a change: 0 is pass.
type Gate struct {
	// Path is the absolute path of the gate script, or "" for a detected
	// command.
	Path string `json:"path,omitempty"`
	// Command is the argv to run, in the lane directory.
	Command []string `json:"command"`
	// Source says where the gate came from, for humans and receipts:
	// ".horizon/verify.sh", "detected: go test ./...", or the script path
	// given to FromScript.
	Source string `json:"source"`
	// Script, Mode and Hash are the script's path relative to the root,
	// its git mode and its object ID, as DiscoverTree found them in a
	// commit ("" for a detected command; Hash "" on disk).
	Script string `json:"script,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Hash   string `json:"hash,omitempty"`
}

// String renders the command line, for logs and receipts.
func (g Gate) String() string { return strings.Join(g.Command, " ") }

// ScriptPaths are the gate scripts Discover looks for, relative to the
// directory, in order. The first that exists is the gate.
var ScriptPaths = []string{".horizon/verify.sh", ".zecor/verify.sh", ".fleet/verify.sh"}

// npmPlaceholderTest is the scripts.test that `npm init` writes; it always
// fails, so a package.json carrying it has no tests to run.
const npmPlaceholderTest = `echo "Error: no test specified" && exit 1`

// detector recognises one ecosystem and the command that tests it.
type detector struct {
	looked  string // how the marker is named in ErrNoGate
	command []string
	match   func(t Tree) bool
	// choose, when set, picks the command for a matching tree whose
	// files are named under root (instead of command).
	choose func(t Tree, root string) []string
}

var detectors = []detector{
	{
		looked:  "go.mod (go test ./...)",
		command: []string{"go", "test", "./..."},
		match:   func(t Tree) bool { return isFile(t, "go.mod") },
	},
	{
		looked: "pyproject.toml, pytest.ini, setup.cfg, tox.ini or test_*.py (.venv/venv python -m pytest, pytest, python3 -m pytest)",
		match:  isPython,
		choose: pytestCommand,
	},
	{
		looked:  "package.json with scripts.test (npm test)",
		command: []string{"npm", "test"},
		match:   hasNpmTest,
	},
	{
		looked:  "Cargo.toml (cargo test)",
		command: []string{"cargo", "test"},
		match:   func(t Tree) bool { return isFile(t, "Cargo.toml") },
	},
}

// Discover finds the gate of dir: the first of ScriptPaths that exists, else
// a command detected from the ecosystem (go.mod → go test ./...; pyproject.toml,
// pytest.ini, setup.cfg, tox.ini or test_*.py → pytest, see pytestCommand;
// package.json with a scripts.test → npm test; Cargo.toml → cargo test, in
// that order). A run never discovers in a lane: it discovers once on its
// base commit (DiscoverTree over a GitTree); Discover serves `horizon gate`
// and the loop, which judge a working directory.
//
// A gate script that exists but cannot be run (a directory, or no execute
// bit) is an error matching ErrGateNotRunnable; Discover does not fall back to
// the next candidate or guess an interpreter, since the repository plainly
// meant that script to be its judge. When nothing is found the error matches
// ErrNoGate and names every path looked for.
func Discover(dir string) (Gate, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Gate{}, fmt.Errorf("discover gate in %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Gate{}, fmt.Errorf("discover gate: %w", err)
	}
	if !st.IsDir() {
		return Gate{}, fmt.Errorf("discover gate: %s is not a directory", abs)
	}
	return DiscoverTree(context.Background(), DirTree(abs), abs)
}

// FromScript returns the gate that runs the script at path. The lead uses it
// to run the base commit's copy of a lane's gate script, kept outside the
// lane, so a worker cannot edit its own judge. The copy must keep its execute
// bit; Run reports an error verdict otherwise.
func FromScript(path string) Gate {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return Gate{Path: abs, Command: []string{abs}, Source: path}
}

func isFile(t Tree, p string) bool {
	e, ok, err := t.Entry(p)
	return err == nil && ok && isFileMode(e.Mode)
}

func isPython(t Tree) bool {
	for _, m := range []string{"pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"} {
		if isFile(t, m) {
			return true
		}
	}
	for _, sub := range []string{".", "tests", "test"} {
		es, _ := t.List(sub)
		for _, e := range es {
			if ok, _ := path.Match("test_*.py", path.Base(e.Path)); ok && isFileMode(e.Mode) {
				return true
			}
		}
	}
	return false
}

// VenvDirs are the project virtualenvs pytestCommand looks in, in order.
var VenvDirs = []string{".venv", "venv"}

// pytestCommand picks how to run pytest in dir: the project's virtualenv
// interpreter (.venv, then venv) when it can import pytest, since that is
// where the project's own dependencies are; else a pytest executable on
// PATH (a distribution's pytest, such as Debian's /usr/bin/pytest, runs
// under its own interpreter, which a bare python3 need not be); else
// python3 -m pytest, whose "No module named pytest" at least says what is
// missing. The virtualenv's interpreter is named relative to dir, so the
// command works in any checkout of the same tree that carries the
// virtualenv. Discovered in a commit (a GitTree), the virtualenv is the
// one in the repository's own directory (root), named by its absolute
// path: lanes do not carry it, and one a worker made in its lane is not
// the repository's.
func pytestCommand(t Tree, root string) []string {
	_, onDisk := t.(DirTree)
	for _, venv := range VenvDirs {
		for _, py := range []string{"python", "python3"} {
			rel := filepath.Join(venv, "bin", py)
			if canImportPytest(filepath.Join(root, rel)) {
				if !onDisk {
					return []string{filepath.Join(root, rel), "-m", "pytest"}
				}
				return []string{"./" + filepath.ToSlash(rel), "-m", "pytest"}
			}
		}
	}
	if path, err := exec.LookPath("pytest"); err == nil {
		// Run that pytest's own interpreter with -m, not the script: -m
		// puts the project's root on sys.path, as `python3 -m pytest`
		// does, so a project importing its own modules from its root
		// collects the same way under either.
		if py := scriptInterpreter(path); py != "" && canImportPytest(py) {
			return []string{py, "-m", "pytest"}
		}
		return []string{"pytest"}
	}
	return []string{"python3", "-m", "pytest"}
}

// scriptInterpreter is the interpreter a script's #! line names ("" when
// none): a path, or the program `/usr/bin/env` is asked to find.
func scriptInterpreter(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		p, err := exec.LookPath(fields[1])
		if err != nil {
			return ""
		}
		return p
	}
	return fields[0]
}

// canImportPytest reports whether the interpreter at py exists, is
// executable and imports pytest.
func canImportPytest(py string) bool {
	st, err := os.Stat(py)
	if err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return false
	}
	return probe(filepath.Dir(py), py, "-c", "import pytest") // its own group, dying with the daemon (probe.go)
}

func hasNpmTest(t Tree) bool {
	if !isFile(t, "package.json") {
		return false
	}
	data, err := t.Read("package.json")
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	s, _ := pkg.Scripts["test"].(string)
	s = strings.TrimSpace(s)
	return s != "" && s != npmPlaceholderTest
}
