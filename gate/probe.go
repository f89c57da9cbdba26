package gate

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Discovery runs inside the daemon (the gate activity discovers the lane's
// gate), so the one process it starts, the virtualenv's "import pytest"
// probe, must not outlive the daemon either. Every other process the
// daemon starts goes through internal/child, but gate imports nothing else
// of the module (it is the judge, usable alone), so the probe gets the same
// two protections here: its own process group, killed whole on timeout, and
// the parent-death signal, plus a short timeout. The probe is brief and
// starts nothing meant to last, so child's guard process and record (for
// grandchildren and kernels without the signal) are not worth their cost.

// pytestProbeTimeout bounds the probe; a healthy interpreter answers in
// well under a second. A var so tests can shorten it.
var pytestProbeTimeout = 15 * time.Second

// probeWaitDelay bounds the wait for the probe's output once it is killed.
const probeWaitDelay = time.Second

// runProbe runs cmd in its own process group, dying with this process, and
// kills the whole group when ctx ends.
func runProbe(cmd *exec.Cmd) error {
	cmd.SysProcAttr = probeAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = probeWaitDelay
	// The parent-death signal fires when the thread that forked the child
	// ends, not the process: keep this goroutine on its thread until the
	// probe is waited for (golang/go#27505).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}

// probe runs name with args in dir, bounded by pytestProbeTimeout, and
// reports whether it exited 0.
func probe(dir, name string, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), pytestProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	return runProbe(cmd) == nil
}
