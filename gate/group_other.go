//go:build !linux

package gate

// liveMember cannot tell zombies from live processes without /proc, so it
// takes kill(2)'s word that the group still exists.
func liveMember(pgid int) bool { return true }
