package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// TestBenchFigures measures what a user feels, for scripts/bench: the time
// from `horizon start` to the first agent request reaching the model (cold:
// the daemon and OpenCode start; warm: both already run), and the daemon's
// and OpenCode's resident memory at rest and at peak during a run. It prints
// figures and asserts nothing about them. Run with HORIZON_BENCH=1.
func TestBenchFigures(t *testing.T) {
	needsE2E(t)
	if os.Getenv("HORIZON_BENCH") == "" {
		t.Skip("set HORIZON_BENCH=1 (scripts/bench does)")
	}
	w := newWorld(t, demoScript(t))

	firstRequest := func(after time.Time) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		r, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return !r.Title && r.Rule != "" && r.At.After(after) })
		require.NoError(t, err)
		return r.At.Sub(after)
	}

	run := func(label string) {
		repo, _ := fixture(t)
		var peakD, peakO int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if pid, err := readPID(w.home); err == nil {
					peakD = max(peakD, rssKB(pid))
					for _, p := range children(pid) {
						peakO = max(peakO, treeRSS(p))
					}
				}
			}
		}()
		t0 := time.Now()
		cmd := exec.Command(horizonBin, "start", "--repo", repo, "--model", demo.Model, goal)
		cmd.Env = w.env
		require.NoError(t, cmd.Start())
		first := firstRequest(t0)
		require.NoError(t, cmd.Wait())
		total := time.Since(t0)
		close(stop)
		wg.Wait()
		fmt.Printf("BENCH %s start→first agent request: %d ms\n", label, first.Milliseconds())
		fmt.Printf("BENCH %s whole run (2 attempts, 4 sessions, 2 gates): %d ms\n", label, total.Milliseconds())
		fmt.Printf("BENCH %s peak RSS during run: daemon %d MiB, opencode %d MiB\n", label, peakD/1024, peakO/1024)
	}
	// Cold: no daemon, no OpenCode; `horizon start` starts both.
	t0 := time.Now()
	run("cold (no daemon, no OpenCode)")
	coldBreakdown(t, w.home, t0)
	pid, err := readPID(w.home)
	require.NoError(t, err)
	time.Sleep(3 * time.Second) // let the run's garbage settle before "at rest"
	fmt.Printf("BENCH daemon RSS at rest (after a run, OpenCode started): daemon %d MiB, opencode %d MiB\n", rssKB(pid)/1024, sumTree(children(pid))/1024)
	t0 = time.Now()
	run("warm")
	coldBreakdown(t, w.home, t0)

	out, code := w.run(context.Background(), "stop")
	require.Equal(t, 0, code, out)
	t0 = time.Now()
	out, code = w.run(context.Background(), "resume")
	require.Equal(t, 0, code, out)
	fmt.Printf("BENCH daemon start (engine + worker, `horizon resume`): %d ms\n", time.Since(t0).Milliseconds())
	time.Sleep(2 * time.Second)
	dpid, err := readPID(w.home)
	require.NoError(t, err)
	fmt.Printf("BENCH daemon RSS at rest before any run (engine + worker + Web UI): %d MiB\n", rssKB(dpid)/1024)
}

// coldBreakdown prints where a cold start's time went, from the daemon's
// log (milliseconds since t0, when `horizon start` was run): the daemon's
// first line, the engine, the worker, OpenCode, and the first session.
func coldBreakdown(t *testing.T, home string, t0 time.Time) {
	b, err := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
	require.NoError(t, err)
	marks := []struct{ label, msg string }{
		{"the daemon's first log line since", ""},
		{"engine ready", "engine ready for workers"},
		{"worker polling", "worker ready"},
		{"OpenCode ready", "opencode server ready"},
		{"preflight done (gate decided, models listed)", "preflight done"},
		{"lane ready", "lane ready"},
		{"first session starting", "session starting"},
		{"session created in OpenCode", "session created"},
	}
	seen := map[string]bool{}
	var parts []string
	for _, l := range strings.Split(string(b), "\n") {
		var e struct {
			Time    time.Time `json:"time"`
			Message string    `json:"message"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Time.Before(t0) {
			continue
		}
		for _, m := range marks {
			if !seen[m.label] && (m.msg == "" || e.Message == m.msg) {
				seen[m.label] = true
				parts = append(parts, fmt.Sprintf("%s %d ms", m.label, e.Time.Sub(t0).Milliseconds()))
			}
		}
	}
	fmt.Printf("BENCH start breakdown (since `horizon start`): %s\n", strings.Join(parts, ", "))
}

func readPID(home string) (int, error) {
	b, err := os.ReadFile(home + "/server.pid")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// children scans /proc for processes whose parent is pid (a Go program
// starts children from any of its threads, so the per-thread children
// lists are not enough).
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func treeRSS(pid int) int64 {
	total := rssKB(pid)
	for _, c := range children(pid) {
		total += treeRSS(c)
	}
	return total
}

func sumTree(pids []int) int64 {
	var s int64
	for _, p := range pids {
		s += treeRSS(p)
	}
	return s
}
