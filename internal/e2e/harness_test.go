// Package e2e runs the horizon binary end to end: the daemon with its
// embedded Temporal engine, the real opencode binary, real git and the
// demo's sample repository. The only stand-in is the language model
// (internal/fakemodel), served from the test process.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/fakemodel"
)

var (
	horizonBin  string
	opencodeBin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	e2eSlots = newSlots(parallelFlag())
	if testing.Short() {
		// Hermetic runs skip the e2e suite; its tests report themselves skipped.
		os.Exit(m.Run())
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	opencodeBin = os.Getenv("HORIZON_OPENCODE_BIN")
	if opencodeBin == "" {
		opencodeBin = filepath.Join(root, "node_modules", ".bin", "opencode")
	}
	if _, err := os.Stat(opencodeBin); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: opencode not found at %s: run `npm install` in %s (make setup)\n", opencodeBin, root)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "horizon-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	horizonBin = filepath.Join(dir, "horizon")
	build := exec.Command("go", "build", "-o", horizonBin, "./cmd/horizon")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build horizon: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
	}
}

// world is one isolated horizon installation: its own HORIZON_HOME, ports,
// HOME (so no user config leaks in) and scripted model.
type world struct {
	t     *testing.T
	home  string
	env   []string
	model *fakemodel.Server
}

// testPorts hands out loopback ports below the kernel's ephemeral range
// (32768–60999 on Linux), each once per test process: worlds running in
// parallel never get the same port, and no ":0" listener of another
// process (an OpenCode, an engine's internal port) can be given one
// between its pick here and the daemon's bind.
var testPorts struct {
	sync.Mutex
	next int
}

func freePort(t *testing.T) int {
	t.Helper()
	const low, high = 20000, 32768
	testPorts.Lock()
	defer testPorts.Unlock()
	if testPorts.next == 0 {
		testPorts.next = low + os.Getpid()%(high-low)
	}
	for range high - low {
		p := testPorts.next
		if testPorts.next++; testPorts.next >= high {
			testPorts.next = low
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		require.NoError(t, l.Close())
		return p
	}
	t.Fatalf("no free loopback port in %d..%d", low, high-1)
	return 0
}

func newWorld(t *testing.T, script *fakemodel.Script) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{t: t, home: filepath.Join(base, "horizon-home")}
	w.model = fakemodel.New(script)
	require.NoError(t, w.model.Start("127.0.0.1:0"))
	t.Cleanup(func() { w.model.Close() })

	userHome := filepath.Join(base, "user")
	w.env = append(os.Environ(),
		"HOME="+userHome,
		"XDG_CONFIG_HOME="+filepath.Join(userHome, ".config"),
		"XDG_DATA_HOME="+filepath.Join(userHome, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(userHome, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(userHome, ".local", "state"),
		"HORIZON_HOME="+w.home,
		"HORIZON_TEMPORAL_PORT="+strconv.Itoa(freePort(t)),
		"HORIZON_UI_PORT="+strconv.Itoa(freePort(t)),
		"HORIZON_AGENT_OPENCODE_BIN="+opencodeBin,
		"HORIZON_AGENT_HEARTBEAT_TIMEOUT=20s",
		"HORIZON_LOG_LEVEL=debug",
		"GIT_CONFIG_NOSYSTEM=1",
		// The scripted worlds are one-feature runs unless a test says
		// otherwise: a test that wants a planned run appends
		// HORIZON_RUN_PLANNED=true to w.env (os/exec keeps the last value
		// of a repeated variable, so the later entry wins).
		"HORIZON_RUN_PLANNED=false",
	)
	w.configureModels()
	t.Cleanup(func() {
		// Stop the daemon the test started, even when the test failed.
		out, code := w.run(context.Background(), "stop", "--timeout", "30s")
		if code != 0 {
			t.Logf("horizon stop: exit %d: %s", code, out)
		}
		if t.Failed() {
			w.dumpLogs()
		}
	})
	return w
}

// configureModels writes the user's OpenCode config: the scripted model as
// provider "fake" with the given models (fakemodel's default when none).
// The config dir is seeded as installed: OpenCode otherwise installs
// @opencode-ai/plugin into it with bun on every start of a fresh home, a
// 64 MB download that kept a core busy for many seconds in every test.
func (w *world) configureModels(models ...string) {
	w.t.Helper()
	dir := filepath.Join(w.userHome(), ".config", "opencode")
	require.NoError(w.t, fakemodel.WriteOpenCodeConfig(filepath.Join(dir, "opencode.json"), w.model.URL(), models...))
	require.NoError(w.t, agent.SeedConfigDeps(dir))
}

// userHome is the world's HOME, the last one set in w.env.
func (w *world) userHome() string {
	home := ""
	for _, e := range w.env {
		if h, ok := strings.CutPrefix(e, "HOME="); ok {
			home = h
		}
	}
	require.NotEmpty(w.t, home, "the world has no HOME")
	return home
}

func (w *world) dumpLogs() {
	for _, f := range []string{"logs/server.out", "logs/horizon.log", "logs/opencode.log"} {
		b, err := os.ReadFile(filepath.Join(w.home, f))
		if err != nil {
			continue
		}
		if len(b) > 12000 {
			b = b[len(b)-12000:]
		}
		w.t.Logf("--- %s (tail)\n%s", f, b)
	}
}

// run runs the horizon binary and returns its combined output and exit code.
func (w *world) run(ctx context.Context, args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, horizonBin, args...)
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(w.t, ok, "run horizon %v: %v\n%s", args, err, out.String())
		code = ee.ExitCode()
	}
	return out.String(), code
}

// stdout runs horizon and returns stdout only (for --json).
func (w *world) stdout(args ...string) (string, int) {
	w.t.Helper()
	cmd := exec.Command(horizonBin, args...)
	cmd.Env = w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run horizon %v: %v", args, err)
	}
	if code != 0 {
		w.t.Logf("horizon %v: exit %d, stderr: %s", args, code, errb.String())
	}
	return out.String(), code
}

func (w *world) status(id string) horizon.RunState {
	w.t.Helper()
	out, code := w.stdout("status", id, "--json")
	require.Equal(w.t, 0, code, out)
	var s horizon.RunState
	require.NoError(w.t, json.Unmarshal([]byte(out), &s), out)
	return s
}

// waitStatus polls until the run's status satisfies ok.
func (w *world) waitStatus(id string, timeout time.Duration, ok func(horizon.RunState) bool) horizon.RunState {
	w.t.Helper()
	timeout = patience(timeout)
	deadline := time.Now().Add(timeout)
	var last horizon.RunState
	for time.Now().Before(deadline) {
		out, code := w.stdout("status", id, "--json")
		// A fresh state each time: unmarshalling into last would keep a
		// field (a backoff, a blocker) that this reading omits.
		var cur horizon.RunState
		if code == 0 && json.Unmarshal([]byte(out), &cur) == nil {
			last = cur
			if ok(cur) {
				return cur
			}
		}
		// Each reading is a horizon process: most of its CPU is the
		// start of a large binary, and three tests wait at once.
		time.Sleep(time.Second)
	}
	w.t.Fatalf("run %s: condition not met within %s; last state: %+v", id, timeout, last)
	return last
}

func (w *world) daemonPID() int {
	b, err := os.ReadFile(filepath.Join(w.home, "server.pid"))
	require.NoError(w.t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(w.t, err)
	return pid
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie has exited; only its parent's wait is missing.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// needsE2E skips a test in -short mode (TestMain has not built the binary)
// and otherwise runs it in parallel with the other end-to-end tests (up
// to go test's -parallel). Each test has a world of its own (home, ports,
// model server, daemon), and most of an e2e test's time is waiting on
// timers, heartbeats and outages rather than CPU, so on two cores three
// at a time take about half the time of one. HORIZON_E2E_SERIAL=1 (and
// the bench, HORIZON_BENCH) runs them one at a time.
func needsE2E(t *testing.T) { needsE2EWeighing(t, 1) }

// needsE2EAlone is needsE2E for a test that runs a cluster: an engine
// and several workers, each with its own OpenCode. Such a test is worth
// all of -parallel's slots, so it runs with no other e2e test beside it:
// three OpenCode servers starting at once already fill two cores, and a
// cluster test beside two others saw OpenCode take 36 s to start and a
// model turn 35 s.
func needsE2EAlone(t *testing.T) { needsE2EWeighing(t, e2eSlots.capacity) }

func needsE2EWeighing(t *testing.T, weight int) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: runs the horizon daemon, opencode and git (skipped with -short)")
	}
	if os.Getenv("HORIZON_E2E_SERIAL") != "" || os.Getenv("HORIZON_BENCH") != "" {
		return
	}
	t.Parallel()
	e2eSlots.acquire(weight)
	t.Cleanup(func() { e2eSlots.release(weight) })
}

// e2eSlots shares the machine between the parallel e2e tests by weight.
// go test's -parallel counts tests; the slots count what they cost. A
// test past t.Parallel holds one of go test's places while it waits here,
// and the queue is first come, first served, so a heavy test waiting for
// every slot is not passed over by light ones arriving after it.
// TestMain sizes it once the flags are parsed.
var e2eSlots = newSlots(1)

type slots struct {
	mu       sync.Mutex
	capacity int
	free     int
	queue    []chan struct{} // waiting tests, in arrival order
	weights  []int
}

func newSlots(capacity int) *slots { return &slots{capacity: capacity, free: capacity} }

func (s *slots) acquire(weight int) {
	weight = min(weight, s.capacity)
	s.mu.Lock()
	if len(s.queue) == 0 && s.free >= weight {
		s.free -= weight
		s.mu.Unlock()
		return
	}
	ready := make(chan struct{})
	s.queue = append(s.queue, ready)
	s.weights = append(s.weights, weight)
	s.mu.Unlock()
	<-ready
}

func (s *slots) release(weight int) {
	weight = min(weight, s.capacity)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free += weight
	for len(s.queue) > 0 && s.free >= s.weights[0] {
		s.free -= s.weights[0]
		close(s.queue[0])
		s.queue, s.weights = s.queue[1:], s.weights[1:]
	}
}

// parallelFlag is go test's -parallel (GOMAXPROCS when not given).
func parallelFlag() int {
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// patience is how long a wait gives a condition: twice what the test
// names. The waits are there to catch a hang, not to time horizon (that
// is the bench's job), and the machine is shared by three tests, their
// OpenCode servers and the engines.
func patience(d time.Duration) time.Duration { return 2 * d }

// endedWithHandoff is a run that has ended and written its handoff: the
// status query reads terminal from the moment the run's outcome is
// decided, a moment before the handoff activity has returned its path.
func endedWithHandoff(s horizon.RunState) bool { return s.Status.Terminal() && s.Handoff != "" }
