package gate

import (
	"bytes"
	"os"
	"strconv"
)

// liveMember scans /proc for a non-zombie process in group pgid. Without
// /proc it assumes the group is alive.
func liveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// Format: pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 {
			continue
		}
		if pg, err := strconv.Atoi(string(f[2])); err == nil && pg == pgid && string(f[0]) != "Z" && string(f[0]) != "X" {
			return true
		}
	}
	return false
}
