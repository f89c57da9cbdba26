//go:build !linux

package child

import "syscall"

// dieWithParent: only Linux has a parent-death signal; the guard and Reap
// remain.
func dieWithParent(*syscall.SysProcAttr) {}

func startTime(int) (uint64, bool) { return 0, false }

func groupMembers(int) ([]int, error) { return nil, ErrNoProc }
