package child

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// dieWithParent asks the kernel to SIGKILL the child when the thread that
// forked it exits (Start keeps that thread alive as long as the child).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// procStat reads a process's state, group and start time (clock ticks
// since boot) from /proc/<pid>/stat.
func procStat(pid int) (state byte, pgrp int, start uint64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	// "pid (comm) state ppid pgrp ... starttime ...": comm may hold spaces
	// and parens, so fields are counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) == 0 {
		return 0, 0, 0, false
	}
	g, err1 := strconv.Atoi(string(f[2]))
	st, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], g, st, true
}

// startTime is a live (non-zombie) process's start time.
func startTime(pid int) (uint64, bool) {
	state, _, st, ok := procStat(pid)
	if !ok || state == 'Z' || state == 'X' {
		return 0, false
	}
	return st, true
}

// groupMembers lists the live processes of group pgid.
func groupMembers(pgid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, ErrNoProc
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, g, _, ok := procStat(pid); ok && g == pgid && state != 'Z' && state != 'X' {
			out = append(out, pid)
		}
	}
	return out, nil
}
