package gate

import (
	"os/exec"
	"syscall"
	"unsafe"
)

const (
	pPID    = 1         // P_PID for waitid(2)
	wNOWAIT = 0x1000000 // WNOWAIT: leave the child waitable
)

// watchLeader returns a channel closed once cmd's process has exited, without
// reaping it, and reap, which reaps it (cmd.Wait) and returns Wait's error.
// Until reap is called the exited leader is a zombie that keeps its process
// group ID from being reused.
func watchLeader(cmd *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	var waitErr error
	reaped := false
	go func() {
		defer close(exited)
		if waitExited(cmd.Process.Pid) != nil {
			// waitid unavailable or refused: fall back to reaping here.
			waitErr = cmd.Wait()
			reaped = true
		}
	}()
	return exited, func() error {
		<-exited
		if reaped {
			return waitErr
		}
		return cmd.Wait()
	}
}

// waitExited blocks until process pid has exited, leaving it unreaped.
func waitExited(pid int) error {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}
