package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// The PID file lists the opencode servers a daemon started, one "pid pgid"
// line each, so that a daemon restarted after a hard crash can stop the ones
// its predecessor left behind (Pdeathsig covers most deaths, not all: a
// kernel without it, a reparenting subreaper, or tools that left the group).

var pidFileMu sync.Mutex // serialises edits by the servers of one process

func (s *Server) recordPID() error {
	if s.pidFile == "" {
		return nil
	}
	pidFileMu.Lock()
	defer pidFileMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.pidFile), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(s.pidFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.pidLine = fmt.Sprintf("%d %d", s.cmd.Process.Pid, s.pgid)
	if _, err := fmt.Fprintln(f, s.pidLine); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// forgetPID removes this server's line from the PID file.
func (s *Server) forgetPID() {
	if s.pidFile == "" || s.pidLine == "" {
		return
	}
	pidFileMu.Lock()
	defer pidFileMu.Unlock()
	b, err := os.ReadFile(s.pidFile)
	if err != nil {
		return
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != s.pidLine {
			keep = append(keep, l)
		}
	}
	out := strings.Join(keep, "\n")
	if out != "" {
		out += "\n"
	}
	if err := os.WriteFile(s.pidFile, []byte(out), 0o644); err != nil {
		s.log.Warn().Err(err).Msg("cannot update the opencode pid file")
	}
}

// ReapOrphans kills (SIGKILL to the whole process group) every opencode
// server listed in pidFile that still runs, then empties the file. Call it
// when the daemon starts, before it starts servers of its own. A listed pid
// whose process is no longer opencode (the pid was reused) is left alone; a
// group whose leader is gone is still killed, since Linux does not hand out
// a pid that is in use as a process group ID, so its members are the old
// server's children. It returns how many groups it signalled.
func ReapOrphans(pidFile string, log zerolog.Logger) (int, error) {
	pidFileMu.Lock()
	defer pidFileMu.Unlock()
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reap opencode orphans: %w", err)
	}
	n := 0
	var waitFor []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 1 {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil || pid <= 1 {
			continue
		}
		pgid := pid
		if len(fields) > 1 {
			if g, err := strconv.Atoi(fields[1]); err == nil && g > 1 {
				pgid = g
			}
		}
		switch cmd, alive := cmdline(pid); {
		case alive && !strings.Contains(cmd, "opencode"):
			log.Debug().Int("PID", pid).Str("Cmdline", cmd).Msg("pid reused by another program; not reaping")
			continue
		case !alive && len(groupMembers(pgid)) == 0:
			continue
		}
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			log.Warn().Err(err).Int("PGID", pgid).Msg("cannot kill orphaned opencode")
			continue
		}
		log.Warn().Int("PID", pid).Int("PGID", pgid).Msg("killed an opencode server left by a previous daemon")
		waitFor = append(waitFor, pgid)
		n++
	}
	// Give the kernel a moment, so the caller starts on a clean slate.
	deadline := time.Now().Add(3 * time.Second)
	for _, g := range waitFor {
		for len(groupMembers(g)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := os.WriteFile(pidFile, nil, 0o644); err != nil {
		return n, fmt.Errorf("reap opencode orphans: %w", err)
	}
	return n, nil
}

// cmdline returns a process's command line (NULs as spaces) and whether it
// exists and is not a zombie.
func cmdline(pid int) (string, bool) {
	if _, state, ok := procStat(pid); !ok || state == 'Z' {
		return "", false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))), true
}

// procStat reads a process's group ID and state from /proc/<pid>/stat.
func procStat(pid int) (pgrp int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) == 0 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return g, f[0][0], true
}

// groupMembers lists the live (non-zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, state, ok := procStat(pid); ok && g == pgid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}
