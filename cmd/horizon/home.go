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
