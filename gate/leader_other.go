//go:build !linux

package gate

import "os/exec"

// watchLeader returns a channel closed once cmd's process has exited and a
// function returning cmd.Wait's error. Without waitid(WNOWAIT) the leader is
// reaped straight away, so its process group ID could in principle be reused
// before Run's final group kill; PIDs are allocated sequentially, which makes
// that window practically unreachable.
func watchLeader(cmd *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	var waitErr error
	go func() {
		defer close(exited)
		waitErr = cmd.Wait()
	}()
	return exited, func() error {
		<-exited
		return waitErr
	}
}
