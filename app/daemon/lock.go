// Package daemon runs horizon's long-lived process: the embedded engine (or
// a connection to a remote one), the Temporal worker with horizon's
// workflows and activities, and the OpenCode server the activities drive.
// One daemon runs per $HORIZON_HOME, guarded by a file lock; clients start
// it detached when needed and stop it with SIGTERM.
package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
)

// Paths are the daemon's files under $HORIZON_HOME.
type Paths struct{ Home string }

func (p Paths) Lock() string        { return filepath.Join(p.Home, "server.lock") }
func (p Paths) PID() string         { return filepath.Join(p.Home, "server.pid") }
func (p Paths) Info() string        { return filepath.Join(p.Home, "server.json") }
func (p Paths) Logs() string        { return filepath.Join(p.Home, "logs") }
func (p Paths) LogFile() string     { return filepath.Join(p.Home, "logs", "horizon.log") }
func (p Paths) Stdout() string      { return filepath.Join(p.Home, "logs", "server.out") }
func (p Paths) DB() string          { return filepath.Join(p.Home, "temporal.db") }
func (p Paths) OpenCode() string    { return filepath.Join(p.Home, "opencode") }
func (p Paths) Appliers() string    { return filepath.Join(p.Home, "appliers") } // session logs, settings
func (p Paths) AgentPIDs() string   { return filepath.Join(p.Home, "agents.pids") }
func (p Paths) Children() string    { return filepath.Join(p.Home, "children") } // gate, git, codemod records
func (p Paths) OpenCodeLog() string { return filepath.Join(p.Home, "logs", "opencode.log") }

// OpenCodeEndpoint says where the daemon's running OpenCode answers
// (agent.Endpoint); config.Config.OpenCodeEndpoint names the same file.
func (p Paths) OpenCodeEndpoint() string {
	return filepath.Join(p.OpenCode(), agent.EndpointFile)
}

// Lock is the held daemon lock.
type Lock struct {
	f     *os.File
	paths Paths
}

// Acquire takes the home's lock without waiting and records this process's
// pid. The kernel drops a flock when its holder dies, so a crashed daemon
// never leaves a stale lock behind.
func Acquire(p Paths) (*Lock, error) {
	if err := SecureHome(p.Home); err != nil {
		var insecure *InsecureHomeError
		if !errors.As(err, &insecure) {
			return nil, err
		}
		// Not fatal (a home on a file system without modes): Serve warns.
	}
	f, err := os.OpenFile(p.Lock(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: open lock %s: %w", p.Lock(), err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := ReadPID(p)
			return nil, &AlreadyRunningError{Home: p.Home, PID: pid}
		}
		return nil, fmt.Errorf("daemon: lock %s: %w", p.Lock(), err)
	}
	if err := os.WriteFile(p.PID(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("daemon: write %s: %w", p.PID(), err)
	}
	return &Lock{f: f, paths: p}, nil
}

// Release removes the pid and info files and drops the lock.
func (l *Lock) Release() {
	_ = os.Remove(l.paths.PID())
	_ = os.Remove(l.paths.Info())
	_ = l.f.Close()
}

// ReadPID reads server.pid (0 when absent).
func ReadPID(p Paths) (int, error) {
	b, err := os.ReadFile(p.PID())
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("daemon: %s: %w", p.PID(), err)
	}
	return pid, nil
}

// Running reports whether a daemon holds the home's lock, and its pid: from
// server.pid or, when that is gone (removed by hand or by a cleaner), from
// server.json, which a ready daemon also writes. The pid is 0 when neither
// names it.
func Running(p Paths) (int, bool) {
	f, err := os.OpenFile(p.Lock(), os.O_RDWR, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		pid, _ := ReadPID(p)
		if pid <= 0 {
			if info, err := ReadInfo(p); err == nil {
				pid = info.PID
			}
		}
		return pid, true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return 0, false
}

// Info is what a ready daemon publishes in server.json.
type Info struct {
	PID       int       `json:"pid"`
	Identity  string    `json:"identity"`
	Frontend  string    `json:"frontend"`
	UI        string    `json:"ui,omitempty"`
	Embedded  bool      `json:"embedded"`
	StartedAt time.Time `json:"started_at"`
}

// WriteInfo publishes the daemon's addresses.
func WriteInfo(p Paths, i Info) error {
	b, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return err
	}
	if err := textio.WriteAtomic(p.Info(), b, 0o600); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	return nil
}

// ReadInfo reads server.json.
func ReadInfo(p Paths) (Info, error) {
	var i Info
	b, err := os.ReadFile(p.Info())
	if err != nil {
		return i, err
	}
	return i, json.Unmarshal(b, &i)
}

// Stop asks the daemon that holds the home's lock to stop (SIGTERM) and
// waits until the lock is free. No daemon is ErrNotRunning; a daemon whose
// pid no file names is a *NoPIDError.
func Stop(p Paths, timeout time.Duration) (int, error) {
	pid, running := Running(p)
	if !running {
		return 0, ErrNotRunning
	}
	if pid <= 0 {
		return 0, &NoPIDError{Paths: p}
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return pid, fmt.Errorf("stop the horizon server: signal pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, running := Running(p); !running {
			return pid, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return pid, fmt.Errorf("the horizon server (pid %d) did not stop within %s; `kill -9 %d` is safe: runs continue after `horizon resume`", pid, timeout, pid)
}
