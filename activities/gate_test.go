package activities

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/child"
)

// The gate runs as a tracked child: while it runs its process group is
// recorded (a daemon restarted after a crash reaps it before the retry),
// and once RunGate returns the record and the group are gone.
func TestRunGateIsATrackedChild(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\necho $$ > \"$GATE_PID\"\nwhile [ ! -f \"$GATE_GO\" ]; do sleep 0.05; done\necho done\n")
	require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", "gate")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	lane := h.prepareLane(h.laneInput("f1", false))

	records := t.TempDir()
	require.NoError(t, child.Track(records))
	t.Cleanup(child.Untrack)
	tmp := t.TempDir()
	pidFile, goFile := filepath.Join(tmp, "pid"), filepath.Join(tmp, "go")
	t.Setenv("GATE_PID", pidFile)
	t.Setenv("GATE_GO", goFile)
	h.a.GateAllowEnv = []string{"GATE_*"}

	type result struct {
		run horizon.GateRun
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := h.env.ExecuteActivity(h.a.RunGate, GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute})
		var r horizon.GateRun
		if err == nil {
			err = v.Get(&r)
		}
		done <- result{r, err}
	}()

	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	// The record is written right after the start, so the script may
	// write its pid first: wait for the record as well.
	var rec []byte
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(records, strconv.Itoa(pid)))
		rec = b
		return err == nil && len(b) > 0
	}, 10*time.Second, 10*time.Millisecond, "the running gate is recorded by its pid")
	require.True(t, strings.HasPrefix(string(rec), strconv.Itoa(pid)+" "+strconv.Itoa(pid)+" "), "pid and group: %q", rec)
	require.Contains(t, string(rec), "verify.sh")

	require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, "pass", r.run.Verdict, r.run.Tail)
	_, err := os.Stat(filepath.Join(records, strconv.Itoa(pid)))
	require.ErrorIs(t, err, os.ErrNotExist, "the record goes with the gate")
	_, alive := procAlive(pid)
	require.False(t, alive)
}

// procAlive reads /proc/<pid>/stat: whether pid runs (not a zombie).
func procAlive(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return s, false
	}
	return s, s[i+2] != 'Z'
}
