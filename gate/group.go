package gate

import (
	"errors"
	"syscall"
	"time"
)

// groupAlive reports whether process group pgid has a live member. Zombies
// do not count: they hold no resources and wait only for their parent (often
// init, which may reap lazily) to collect them.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return liveMember(pgid)
}

// awaitGroupGone polls until group pgid has no live member, re-sending
// SIGKILL (a member may have forked between the kill and its death), for at
// most limit. It reports whether live members remain.
func awaitGroupGone(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	delay := time.Millisecond
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return false
		}
		if !liveMember(pgid) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(delay)
		delay = min(delay*2, 20*time.Millisecond)
	}
}
