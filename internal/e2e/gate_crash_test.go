package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
)

// A gate outlives a killed daemon (issue): SIGKILL the daemon while the
// baseline gate sleeps. The gate and what it started die with the daemon;
// `horizon resume` retries the gate and the run completes; and at no moment
// do two gates run in the lane.
func TestGateDiesWithKilledDaemon(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, demoScript(t))
	repo, _ := fixture(t)

	// The demo's gate, made to log each run's pid and to sleep while the
	// test holds it.
	ctl := t.TempDir()
	hold, runs := filepath.Join(ctl, "hold"), filepath.Join(ctl, "gate-runs")
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> %s\nif [ -f %s ]; then sleep 40; fi\nset -e\ncd \"$(dirname \"$0\")/..\"\nsh tests/test_add.sh\n", runs, hold)
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "verify.sh"), []byte(script), 0o755))
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-am", "slow gate")
	require.NoError(t, os.WriteFile(hold, nil, 0o644))

	lanes := filepath.Join(w.home, "lanes")
	mon := watchGates(lanes)
	defer mon.stop()

	out, code := w.stdout("start", "--single", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	// The baseline gate is asleep: its shell and its sleep run in its group.
	var gatePID int
	require.Eventually(t, func() bool {
		pids := gateRuns(t, runs)
		if len(pids) == 0 {
			return false
		}
		gatePID = pids[0]
		return len(groupMembers(gatePID)) >= 2
	}, 2*time.Minute, 50*time.Millisecond, "the baseline gate did not start")
	require.Eventually(t, func() bool { return mon.max() > 0 }, 10*time.Second, 10*time.Millisecond, "the monitor sees the gate")

	pid := w.daemonPID()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !alive(pid) }, 30*time.Second, 50*time.Millisecond)
	// Not at the next start, not after its 40 s: with the daemon.
	require.Eventually(t, func() bool { return !alive(gatePID) && len(groupMembers(gatePID)) == 0 }, 10*time.Second, 50*time.Millisecond,
		"the gate's processes outlived the daemon: %v", groupMembers(gatePID))

	require.NoError(t, os.Remove(hold))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, id)

	final := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, "%+v", final)
	require.Greater(t, len(gateRuns(t, runs)), 1, "the baseline gate was retried after the crash")
	mon.stop()
	require.Equal(t, int32(1), mon.max(), "two gates ran in the lane at once")
	// The new daemon forgets each child once it is done: what is recorded
	// still runs (its OpenCode server), and no gate is among it.
	recs, err := os.ReadDir(filepath.Join(w.home, "children"))
	require.NoError(t, err)
	for _, r := range recs {
		b, err := os.ReadFile(filepath.Join(w.home, "children", r.Name()))
		require.NoError(t, err)
		p, err := strconv.Atoi(r.Name())
		require.NoError(t, err)
		require.True(t, alive(p), "record of a finished child: %s", b)
		require.NotContains(t, string(b), "verify.sh")
	}
}

// gateRuns reads the pids the gate logged, in order.
func gateRuns(t *testing.T, path string) []int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, p)
	}
	return pids
}

// gateMonitor counts, every few milliseconds, the gates running in a lane
// (process groups with a live .horizon/verify.sh shell; a gate's subshells
// share its group), and keeps the most seen at once.
type gateMonitor struct {
	most atomic.Int32
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func watchGates(lanes string) *gateMonitor {
	m := &gateMonitor{done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			if n := int32(len(gatesIn(lanes))); n > m.most.Load() {
				m.most.Store(n)
			}
			select {
			case <-m.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return m
}

func (m *gateMonitor) max() int32 { return m.most.Load() }

func (m *gateMonitor) stop() {
	m.once.Do(func() { close(m.done) })
	m.wg.Wait()
}

// gatesIn lists the process groups of live processes running verify.sh
// with a working directory under lanes.
func gatesIn(lanes string) []int {
	groups := map[int]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmd, []byte("verify.sh")) {
			continue
		}
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err == nil && strings.HasPrefix(cwd, lanes+string(filepath.Separator)) {
			if g, err := syscall.Getpgid(pid); err == nil && !groups[g] {
				groups[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
