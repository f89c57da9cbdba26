package daemon

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrNoRemote says `horizon worker` was asked to run without a remote engine.
var ErrNoRemote = errors.New("no temporal.address configured: `horizon worker` joins a remote engine (set HORIZON_TEMPORAL_ADDRESS or temporal.address); use `horizon server` for the embedded one")

// ErrNotRunning says no daemon holds the home.
var ErrNotRunning = errors.New("no horizon server is running")

// AlreadyRunningError says another daemon holds the home.
type AlreadyRunningError struct {
	Home string
	PID  int
}

func (e *AlreadyRunningError) Error() string {
	pid := "unknown pid"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("a horizon server is already running for %s (%s); use it, stop it with `horizon stop`, or set HORIZON_HOME to run another", e.Home, pid)
}

// NoPIDError says a daemon holds the home's lock but neither server.pid
// nor server.json names its pid, so it cannot be signalled.
type NoPIDError struct{ Paths Paths }

func (e *NoPIDError) Error() string {
	p := e.Paths
	return fmt.Sprintf("a horizon server holds %s, but neither %s nor %s names its pid; find it with `fuser %s` and stop it with kill", p.Lock(), p.PID(), p.Info(), p.Lock())
}
