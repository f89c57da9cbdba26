package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// homeError says $HORIZON_HOME cannot hold horizon's files. It is the
// environment's problem (exit 3), and no command helps until it is fixed:
// not `horizon resume`, which would fail the same way.
type homeError struct {
	home    string
	problem string
}

func (e *homeError) Error() string {
	return fmt.Sprintf("horizon's home %s %s; set HORIZON_HOME (or home: in the config) to a directory you can write", e.home, e.problem)
}

// access(2) modes.
const (
	accessWrite = 0x2
	accessExec  = 0x1
)

// checkHome reports whether home is, or can be made, a directory this user
// can write, without creating anything: the nearest part of the path that
// exists must be a writable directory.
func checkHome(home string) error {
	for dir := home; ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		switch {
		case err == nil && !st.IsDir():
			if dir == home {
				return &homeError{home, "is a file, not a directory"}
			}
			return &homeError{home, "cannot be created: " + dir + " is a file"}
		case err == nil:
			// root may write anywhere, /proc and /sys included, as far as
			// access(2) says; nothing can be made there.
			if fs := pseudoFS(dir); fs != "" {
				return &homeError{home, "is on " + fs + ", where no file can be made"}
			}
			if syscall.Access(dir, accessWrite|accessExec) != nil {
				if dir == home {
					return &homeError{home, "is not writable"}
				}
				return &homeError{home, "cannot be created: " + dir + " is not writable"}
			}
			return nil
		case errors.Is(err, fs.ErrPermission):
			return &homeError{home, "cannot be reached: " + err.Error()}
		}
		// Missing, or a part of the path is a file (ENOTDIR): look further up.
		if filepath.Dir(dir) == dir {
			return &homeError{home, "cannot be created: " + err.Error()}
		}
	}
}

// pseudoFS names the kernel file system dir is on when it is one that
// holds no files of ours (proc, sysfs, ...); "" otherwise.
func pseudoFS(dir string) string {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return ""
	}
	switch uint64(st.Type) {
	case 0x9fa0:
		return "/proc (procfs)"
	case 0x62656572:
		return "sysfs"
	case 0x1cd1:
		return "devpts"
	case 0x63677270, 0x27e0eb:
		return "cgroupfs"
	case 0x64626720:
		return "debugfs"
	}
	return ""
}
