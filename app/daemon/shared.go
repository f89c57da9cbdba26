package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/horizon/horizon/config"
)

// SharedDirs are the directories under worker.shared_dir (else the home)
// that every worker of one engine must see at the same absolute path: any
// worker may run any step of any run. lanes/ holds the git worktrees, which
// a repository records by absolute path; runs/ the receipts, transcripts
// and handoffs a later step reads; spend/ the day's spend, which bounds all
// runs together; reports/ the daily reports; tasks/ the background tasks'
// metadata and output streams, which `horizon task output` and a task
// resumed on another worker read.
var SharedDirs = []string{"lanes", "runs", "spend", "reports", "tasks"}

// PrivateFiles are what each worker keeps in its own home and must never
// share: the lock that makes it the home's only daemon, and OpenCode's
// session store (a session lives in the store of the worker that ran it).
var PrivateFiles = []string{"server.lock", "opencode"}

// CheckShared checks, before a worker takes work, that it can write every
// shared directory, and that its home (the lock, OpenCode's store) is not
// inside the shared directory, where another worker would find it.
func CheckShared(cfg *config.Config) error {
	shared := cfg.DataDir()
	if cfg.Worker.SharedDir != "" {
		rel, err := filepath.Rel(shared, cfg.Home)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("home %s is inside worker.shared_dir %s: each worker needs its own home outside it (its lock and OpenCode's session store must not be shared)", cfg.Home, shared)
		}
	}
	for _, d := range SharedDirs {
		dir := filepath.Join(shared, d)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("shared directory %s: %w (worker.shared_dir must be writable by every worker)", dir, err)
		}
		probe, err := os.CreateTemp(dir, ".probe-")
		if err != nil {
			return fmt.Errorf("shared directory %s is not writable: %w (worker.shared_dir must be writable by every worker)", dir, err)
		}
		probe.Close()
		_ = os.Remove(probe.Name())
	}
	return nil
}
