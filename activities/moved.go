package activities

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// ErrTypeCannotSee is a worker that cannot see a path every worker of the
// engine must share (a run's repository, its lane): retryable, so Temporal
// hands the activity to another worker (README: Running on a cluster).
const ErrTypeCannotSee = "WorkerCannotSee"

// mustSee fails with ErrTypeCannotSee when path does not exist here.
func (a *Activities) mustSee(what, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return temporal.NewApplicationError(fmt.Sprintf("worker %s cannot see the %s %s (%v): every worker of the engine must see the repositories and worker.shared_dir at the same paths (README: Running on a cluster); retrying elsewhere", a.Identity, what, path, err), ErrTypeCannotSee)
	}
	return nil
}

// movedFrom says whether a retried session's heartbeat names a session
// that another worker ran: OpenCode's store is per worker, so that
// session cannot be continued here and a fresh one starts.
func (a *Activities) movedFrom(hb SessionHeartbeat) bool {
	return hb.SessionID != "" && hb.Worker != "" && hb.Worker != a.Identity
}

// movedBrief is the brief of a session started afresh on this worker
// after the worker running it was lost: the same brief, plus what the lane
// already holds, so the agent builds on the work instead of redoing it.
func movedBrief(ctx context.Context, prompt, lane, base string, hb SessionHeartbeat) string {
	state, err := git(ctx, lane, "status", "--short")
	if err != nil {
		state = "(could not read the lane: " + err.Error() + ")"
	}
	stat, _ := git(ctx, lane, "diff", "--stat", base)
	state = strings.TrimSpace(state)
	if state == "" && strings.TrimSpace(stat) == "" {
		state = "(nothing yet: the lane is as it was cut)"
	}
	return prompt + fmt.Sprintf("\n\n## Continuing work another worker started\n\nThis task was in progress on worker %s, which was lost; its session could not be carried over. The lane already holds what it did:\n\n```\n%s\n%s\n```\n\nRead those files first and build on them; do not redo work that is already there.\n", hb.Worker, state, strings.TrimSpace(stat))
}

// movedNote is what the attempt records when its session moved.
func movedNote(old, new, worker string) string {
	return fmt.Sprintf("session moved: %s → %s (worker %s lost)", old, new, worker)
}
