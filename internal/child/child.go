// Package child starts the processes a horizon daemon runs on a run's
// behalf (the gate, git, ast-grep codemods) so that none outlives the
// daemon, and reaps what a daemon that died hard left behind.
//
// Three layers, because each covers a gap of the one before:
//
//   - Every child leads its own process group and gets SIGKILL when the
//     daemon dies (Linux parent-death signal). The signal is tied to the OS
//     thread that forked the child, not to the process, so the forking
//     goroutine stays locked to its thread until the child is done: Go
//     ends a thread whose goroutine exits while locked to it, and the
//     child would be killed with it (golang/go#27505).
//   - The parent-death signal reaches the leader only, not the scripts and
//     tools it started. A guard process in the same group waits on a pipe
//     only the daemon holds; when the daemon dies the pipe closes and the
//     guard kills the whole group.
//   - Each child is recorded as a file under a directory (Track); a
//     restarted daemon calls Reap before it takes work, so what escaped
//     both (a kernel without the signal, a guard that could not start)
//     is gone before the activity that started it is retried.
package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// recordDir is where Start records children ("" records nothing). A daemon
// is one per process (it holds its home's lock), so this is process-wide.
var recordDir atomic.Pointer[string]

// Track makes every later Start record its child under dir, for Reap.
// Call it once the previous daemon's children have been reaped.
func Track(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("track children in %s: %w", dir, err)
	}
	recordDir.Store(&dir)
	return nil
}

// Untrack stops recording children (tests, a daemon shutting down).
func Untrack() { recordDir.Store(nil) }

// Process is a started child. Call Done once it has been waited for.
type Process struct {
	cmd    *exec.Cmd
	pgid   int
	record string

	guardW    *os.File      // write end of the guard's pipe; closing it fires the guard
	guardDone chan struct{} // closed once the guard has been waited for

	release chan struct{} // unlocks the forking thread
	once    sync.Once
}

// Start starts cmd as the leader of its own process group, dying with
// this process, guarded and recorded. cmd's other fields are kept; its
// SysProcAttr is extended, not replaced. A cmd made with
// exec.CommandContext is cancelled by killing its whole group.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	dieWithParent(cmd.SysProcAttr)
	if cmd.Cancel != nil { // made by CommandContext: stop the group, not just the leader
		cmd.Cancel = func() error {
			if cmd.Process == nil {
				return nil
			}
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}

	p := &Process{cmd: cmd, release: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			return
		}
		started <- nil
		<-p.release
		runtime.UnlockOSThread()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	p.pgid = cmd.Process.Pid
	p.startGuard()
	p.record = recordChild(cmd)
	return p, nil
}

// PGID is the child's process group.
func (p *Process) PGID() int { return p.pgid }

// Done ends what is left of the child's group (members the leader left
// behind, the guard), forgets its record and frees the forking thread.
// Call it after cmd.Wait; it may be called more than once.
func (p *Process) Done() {
	p.once.Do(func() {
		if p.guardDone != nil {
			// While the guard lives the group's ID cannot have been reused,
			// so this reaches only the child's leftovers and the guard. A
			// guard already gone (a SIGTERM to the group took it) leaves
			// the group to its members, if any: they still hold the ID.
			select {
			case <-p.guardDone:
				if m, err := groupMembers(p.pgid); err == nil && len(m) > 0 {
					_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
				}
			default:
				_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			}
			_ = p.guardW.Close()
			<-p.guardDone
		}
		if p.record != "" {
			_ = os.Remove(p.record)
		}
		close(p.release)
	})
}

// Run starts cmd with Start, waits for it and ends its group.
func Run(cmd *exec.Cmd) error {
	p, err := Start(cmd)
	if err != nil {
		return err
	}
	defer p.Done()
	return cmd.Wait()
}

// StartFunc is Start in the shape gate.Options.Start takes: done is
// called once the gate's leader has been waited for.
func StartFunc(cmd *exec.Cmd) (done func(), err error) {
	p, err := Start(cmd)
	if err != nil {
		return nil, err
	}
	return p.Done, nil
}

// guardScript kills its process group once its stdin closes: when the
// daemon holding the other end dies, or when Done closes it.
const guardScript = "read x; kill -KILL 0"

// startGuard starts the guard in the child's group. A guard that cannot
// start leaves the leader's parent-death signal and Reap in place.
func (p *Process) startGuard() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	g := exec.Command("/bin/sh", "-c", guardScript)
	g.Env = []string{} // read and kill are builtins; the daemon's secrets stay out
	g.Stdin = r
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: p.pgid}
	err = g.Start()
	r.Close()
	if err != nil {
		w.Close()
		return
	}
	p.guardW = w
	p.guardDone = make(chan struct{})
	go func() {
		_ = g.Wait()
		close(p.guardDone)
	}()
}

// recordChild writes the child's record and returns its path, or "" when
// children are not tracked or it cannot be written (Pdeathsig and the
// guard still apply).
func recordChild(cmd *exec.Cmd) string {
	dir := recordDir.Load()
	if dir == nil {
		return ""
	}
	pid := cmd.Process.Pid
	start, _ := startTime(pid)
	path := filepath.Join(*dir, strconv.Itoa(pid))
	line := fmt.Sprintf("%d %d %d\n%s\n", pid, pid, start, summary(cmd.Args))
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return ""
	}
	return path
}

// summary is the command line shortened for a record.
func summary(args []string) string {
	s := strings.Join(args, " ")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// ErrNoProc: process start times need /proc.
var ErrNoProc = errors.New("no /proc: process start times unavailable")
