package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveTimeout bounds one gate run of TestLiveEcosystems; it is a safety net,
// not a timing assertion (a cold cargo build on a busy machine is slow).
const liveTimeout = 5 * time.Minute

// liveEco is one ecosystem of TestLiveEcosystems: a tiny project in
// testdata/live/<dir>/project, with the code under test in one overlay per
// variant (testdata/live/<dir>/{pass,one,two}): every test passes, one test
// fails, two tests fail.
type liveEco struct {
	dir    string
	source string              // the gate Discover must detect
	want   map[string][]string // variant → failing set, as the tool names the tests
	// setup checks that the tool is there (skipping, or failing under
	// CI=true, when it is not) and returns the gate's environment and an
	// optional step run in each fresh project directory.
	setup func(t *testing.T) (env []string, prepare func(t *testing.T, dir string))
}

var liveEcosystems = []liveEco{
	{
		dir:    "go",
		source: "detected: go test ./...",
		want: map[string][]string{
			"one": {"example.com/live.TestAdd"},
			"two": {"example.com/live.TestAdd", "example.com/live.TestMul"},
		},
		setup: func(t *testing.T) ([]string, func(*testing.T, string)) {
			_, err := exec.LookPath("go")
			needTool(t, err == nil, "go", "install Go 1.26 (https://go.dev/doc/install)")
			// The machine's environment, HOME included: the gate's go uses
			// the normal module and build cache.
			return os.Environ(), nil
		},
	},
	{
		dir:    "python",
		source: pytestSource(),
		want: map[string][]string{
			"one": {"tests/test_calc.py::test_add"},
			"two": {"tests/test_calc.py::TestCalc::test_mul", "tests/test_calc.py::test_add"},
		},
		setup: func(t *testing.T) ([]string, func(*testing.T, string)) {
			return pytestEnv(t), nil
		},
	},
	{
		dir:    "js",
		source: "detected: npm test",
		want: map[string][]string{
			"one": {"src/calc.test.js > calc > adds"},
			"two": {"src/calc.test.js > calc > adds", "src/sub.test.js > subtracts"},
		},
		setup: func(t *testing.T) ([]string, func(*testing.T, string)) {
			nodeModules := vitestModules(t)
			// npm test puts the project's node_modules/.bin on PATH: the
			// symlink hands it the checkout's vitest, so nothing is
			// installed at test time.
			return os.Environ(), func(t *testing.T, dir string) {
				require.NoError(t, os.Symlink(nodeModules, filepath.Join(dir, "node_modules")))
			}
		},
	},
	{
		dir:    "rust",
		source: "detected: cargo test",
		want: map[string][]string{
			"one": {"tests::adds"},
			"two": {"tests::adds", "tests::multiplies"},
		},
		setup: func(t *testing.T) ([]string, func(*testing.T, string)) {
			_, err := exec.LookPath("cargo")
			needTool(t, err == nil, "cargo", "install Rust with rustup (https://rustup.rs) or apt-get install -y cargo")
			// One target directory for the three variants: the second and
			// third builds are incremental.
			return append(os.Environ(), "CARGO_NET_OFFLINE=true", "CARGO_TARGET_DIR="+t.TempDir()), nil
		},
	},
}

// TestLiveEcosystems runs real test tools on tiny projects made at test
// time, end to end: Discover detects the ecosystem's command, Run executes
// it, and ParseFailures must name exactly the failing tests, in the form the
// parsers produce from the captured output in testdata/. A missing tool
// skips its ecosystem, except under CI=true, where CI is meant to have
// installed it and a missing tool fails.
func TestLiveEcosystems(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go, pytest, vitest and cargo")
	}
	for _, eco := range liveEcosystems {
		t.Run(eco.dir, func(t *testing.T) {
			env, prepare := eco.setup(t)
			for _, variant := range []string{"pass", "one", "two"} {
				t.Run(variant, func(t *testing.T) {
					dir := liveProject(t, eco.dir, variant)
					if prepare != nil {
						prepare(t, dir)
					}
					g, err := Discover(dir)
					require.NoError(t, err)
					require.Equal(t, eco.source, g.Source)

					res := Run(t.Context(), g, Options{Dir: dir, Timeout: liveTimeout, Env: env})
					t.Logf("%s %s: %s → %s (exit %d) in %s", eco.dir, variant, g, res.Verdict, res.ExitCode, res.Duration.Round(time.Millisecond))
					got, known := ParseFailures(res.Output)
					want := eco.want[variant]
					if variant == "pass" {
						require.Equal(t, Pass, res.Verdict, "err=%s\noutput:\n%s", res.Err, res.Output)
						want = []string{}
					} else {
						require.Equal(t, Fail, res.Verdict, "err=%s\noutput:\n%s", res.Err, res.Output)
						require.Positive(t, res.ExitCode)
					}
					require.True(t, known, "output not recognised:\n%s", res.Output)
					require.Equal(t, want, got, "output:\n%s", res.Output)
				})
			}
		})
	}
}

// liveProject makes a fresh copy of testdata/live/<eco>/project with the
// variant's files laid over it. Each variant gets its own directory, so no
// tool can reuse a stale cache keyed by path and modification time (pyc
// files, pytest's cache, cargo's fingerprints).
func liveProject(t *testing.T, eco, variant string) string {
	t.Helper()
	dir := t.TempDir()
	base := filepath.Join("testdata", "live", eco)
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(base, "project"))))
	// CopyFS never overwrites: a variant file that shadowed a project file
	// would be an error here, not a silent mix.
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(base, variant))))
	return dir
}

// needTool skips the test when a tool is missing, naming how to install it;
// under CI=true it fails instead: CI installs every tool the live tests use.
func needTool(t *testing.T, ok bool, tool, install string) {
	t.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf("%s is not available; install it: %s", tool, install)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: .ci/run must install it)", msg)
	}
	t.Skip(msg)
}

// pytestSource is how Discover names the pytest command on this machine:
// a pytest on PATH (Debian's python3-pytest installs one) is run by its own
// interpreter with -m, before a bare python3 -m pytest.
func pytestSource() string {
	return "detected: " + strings.Join(pytestCommand(DirTree(os.TempDir()), os.TempDir()), " ")
}

// pytestEnv returns the gate's environment for the pytest project. Discover
// picks the project's .venv/venv interpreter, else a pytest on PATH (run by
// its own interpreter), else `python3 -m pytest` (pytestCommand); the
// project here has no virtualenv, so a pytest on PATH, such as Debian's
// /usr/bin/pytest, is used as it is. For the last case: Debian's
// python3-pytest belongs to /usr/bin/python3, so when the python3 first on
// PATH (a pyenv shim, say) has no pytest but /usr/bin/python3 does, a
// python3 link to it is put first on the gate's PATH.
func pytestEnv(t *testing.T) []string {
	t.Helper()
	const install = "apt-get install -y python3-pytest"
	hasPytest := func(python string) bool {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		return exec.CommandContext(ctx, python, "-m", "pytest", "--version").Run() == nil
	}
	if p, err := exec.LookPath("python3"); err == nil && hasPytest(p) {
		return os.Environ()
	}
	const debian = "/usr/bin/python3"
	needTool(t, hasPytest(debian), "pytest (python3 -m pytest)", install)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(debian, filepath.Join(bin, "python3")))
	return append(os.Environ(), "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
}

// vitestModules returns the checkout's node_modules, in which
// `npm install` (make setup, .ci/run) put vitest from the root package.json.
func vitestModules(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	install := "cd " + root + " && npm install --no-audit --no-fund (vitest is a devDependency in package.json)"
	_, errNPM := exec.LookPath("npm")
	needTool(t, errNPM == nil, "npm", "apt-get install -y nodejs npm")
	nodeModules := filepath.Join(root, "node_modules")
	_, err := os.Stat(filepath.Join(nodeModules, ".bin", "vitest"))
	needTool(t, err == nil, "vitest", install)
	return nodeModules
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod: the horizon checkout.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		_, err := os.Stat(filepath.Join(dir, "go.mod"))
		if err == nil {
			return dir
		}
		require.True(t, errors.Is(err, fs.ErrNotExist), "stat go.mod: %v", err)
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the working directory")
		dir = parent
	}
}
