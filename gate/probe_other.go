//go:build !linux

package gate

import "syscall"

// probeAttr puts the probe in its own process group; without a
// parent-death signal the timeout alone bounds it.
func probeAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
