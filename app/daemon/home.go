package daemon

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// HomeMode is the mode of $HORIZON_HOME: it holds goals, briefs,
// transcripts, the engine's database and the tokens, so only its owner may
// enter it.
const HomeMode fs.FileMode = 0o700

// fileUmask makes every file the daemon and its children create 0600 and
// every directory 0700 (the engine's database, OpenCode's store, logs,
// lanes), whatever the umask of the shell that started it.
const fileUmask = 0o077

// InsecureHomeError says the home is open to others and could not be
// closed.
type InsecureHomeError struct {
	Home string
	Mode fs.FileMode
	Err  error
}

func (e *InsecureHomeError) Error() string {
	return fmt.Sprintf("%s is open to other users (mode %04o) and cannot be narrowed to %04o: %v; run `chmod 700 %s`", e.Home, e.Mode, HomeMode, e.Err, e.Home)
}

func (e *InsecureHomeError) Unwrap() error { return e.Err }

// SecureHome creates home with HomeMode, or narrows an existing home to it
// (a home made by hand, or by an older horizon, may be 0755).
func SecureHome(home string) error {
	if err := os.MkdirAll(home, HomeMode); err != nil {
		return fmt.Errorf("daemon: create home %s: %w", home, err)
	}
	st, err := os.Stat(home)
	if err != nil {
		return fmt.Errorf("daemon: home %s: %w", home, err)
	}
	if st.Mode().Perm() == HomeMode {
		return nil
	}
	if err := os.Chmod(home, HomeMode); err != nil {
		return &InsecureHomeError{Home: home, Mode: st.Mode().Perm(), Err: err}
	}
	return nil
}

// HomeOpen reports the home's mode when others may enter or read it.
func HomeOpen(home string) (fs.FileMode, bool) {
	st, err := os.Stat(home)
	if err != nil {
		return 0, false
	}
	return st.Mode().Perm(), st.Mode().Perm()&0o077 != 0
}

// restrictUmask sets the process's umask to fileUmask; children inherit it.
func restrictUmask() { syscall.Umask(fileUmask) }
