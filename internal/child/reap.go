package child

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// reapWait bounds how long Reap waits for the groups it killed to go.
const reapWait = 5 * time.Second

// Reap kills (SIGKILL to the whole group) every recorded child under dir
// that is still running, and its group's members, then removes the
// records. Call it when a daemon starts, before it takes work, so an
// activity retried after a crash never runs beside what its first attempt
// left (two gates in one lane). It returns how many groups it killed.
//
// A record names the leader's pid, group and start time. A live process
// with that pid but another start time is a stranger that reused the pid:
// it is left alone. A dead leader whose group still has members is still
// ours: Linux does not hand out a pid that is in use as a group ID.
func Reap(dir string, log zerolog.Logger) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reap children in %s: %w", dir, err)
	}
	killed := 0
	var waitFor []int
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		pid, pgid, start, what, err := readRecord(path)
		if err != nil {
			log.Warn().Err(err).Str("Record", path).Msg("unreadable child record; removed")
			_ = os.Remove(path)
			continue
		}
		if reapable(pid, pgid, start) {
			if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				log.Warn().Err(err).Int("PGID", pgid).Str("Command", what).Msg("cannot kill a child a previous daemon left behind")
				continue // keep the record: the next start tries again
			}
			log.Warn().Int("PID", pid).Int("PGID", pgid).Str("Command", what).Msg("killed a child a previous daemon left behind")
			waitFor = append(waitFor, pgid)
			killed++
		}
		_ = os.Remove(path)
	}
	deadline := time.Now().Add(reapWait)
	for _, g := range waitFor {
		for {
			m, _ := groupMembers(g)
			if len(m) == 0 || time.Now().After(deadline) {
				break
			}
			_ = syscall.Kill(-g, syscall.SIGKILL) // a member may have forked meanwhile
			time.Sleep(10 * time.Millisecond)
		}
	}
	return killed, nil
}

// reapable decides whether a recorded child's group is still ours to kill.
func reapable(pid, pgid int, start uint64) bool {
	if st, alive := startTime(pid); alive {
		return start != 0 && st == start
	}
	m, err := groupMembers(pgid)
	return err == nil && len(m) > 0
}

// readRecord parses a record: "pid pgid start" and the command line.
func readRecord(path string) (pid, pgid int, start uint64, what string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, "", err
	}
	head, what, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(head)
	if len(f) != 3 {
		return 0, 0, 0, "", fmt.Errorf("record %s: want \"pid pgid start\", got %q", path, head)
	}
	pid, err1 := strconv.Atoi(f[0])
	pgid, err2 := strconv.Atoi(f[1])
	start, err3 := strconv.ParseUint(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || pid <= 1 || pgid <= 1 {
		return 0, 0, 0, "", fmt.Errorf("record %s: bad numbers in %q", path, head)
	}
	return pid, pgid, start, strings.TrimSpace(what), nil
}
