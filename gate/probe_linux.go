package gate

import "syscall"

// probeAttr puts the probe in its own process group and has the kernel
// kill it when the daemon dies.
func probeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
