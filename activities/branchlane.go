package activities

// Branch lanes: the worktree of work that leaves its own branch rather
// than landing on a run's (an editing background task's, a loop's). The
// lane is cut at a base commit on its branch; at the end what changed is
// committed there and the worktree removed, the branch stays.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"
)

// branchLane makes (or finds, on a retry) the worktree dir on branch, cut
// at base; the user's branch and work tree are untouched. what names the
// work in errors ("task ID", "loop ID").
func branchLane(ctx context.Context, repo, dir, branch, base, what string) error {
	if top, err := git(ctx, dir, "rev-parse", "--show-toplevel"); err == nil && samePath(top, dir) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("%s lane: %w", what, err)
	}
	_ = os.RemoveAll(dir) // half-made by a crash
	_, _ = git(ctx, repo, "worktree", "prune")
	var err error
	if gitOK(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		_, err = git(ctx, repo, "worktree", "add", "--force", dir, branch)
	} else {
		if !gitOK(ctx, repo, "cat-file", "-e", base+"^{commit}") {
			return badInput("%s: base commit %s is not in %s", what, base, repo)
		}
		_, err = git(ctx, repo, "worktree", "add", "-b", branch, dir, base)
	}
	if err != nil {
		return fmt.Errorf("%s lane: %w", what, err)
	}
	if err := initSubmodules(ctx, repo, dir, false); err != nil {
		return submoduleFailure(what+" lane", err)
	}
	activity.GetLogger(ctx).Info("branch lane ready", "Work", what, "Lane", dir, "Branch", branch)
	return nil
}

// commitBranchLane commits what changed in the lane dir onto its branch
// (once: a retry finds the worktree gone, or nothing staged), then removes
// the worktree. It returns the branch's tip, or "" when the branch is
// missing or still at base (nothing changed).
func commitBranchLane(ctx context.Context, repo, dir, branch, base, msg, what string) (string, error) {
	if top, err := git(ctx, dir, "rev-parse", "--show-toplevel"); err == nil && samePath(top, dir) {
		if _, err := git(ctx, dir, append([]string{"add", "-A", "--", "."}, excluded...)...); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if !gitOK(ctx, dir, "diff", "--cached", "--quiet") {
			if _, err := git(ctx, dir, "commit", "-q", "-m", msg); err != nil {
				return "", fmt.Errorf("%s: commit: %w", what, err)
			}
		}
		if _, err := git(ctx, repo, "worktree", "remove", "--force", dir); err != nil {
			return "", fmt.Errorf("%s: remove lane: %w", what, err)
		}
	}
	if !gitOK(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		return "", nil
	}
	tip, err := git(ctx, repo, "rev-parse", "refs/heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if tip == base {
		return "", nil // nothing changed: the branch is the base
	}
	return tip, nil
}
