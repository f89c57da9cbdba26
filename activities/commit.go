package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
)

// excluded paths never enter a commit: agent runtimes' own state.
var excluded = []string{":(exclude).opencode", ":(exclude).horizon/runs"}

// CommitFeature commits the accepted lane and lands it on the run's
// integration branch exactly once: the commit carries a Horizon-Feature
// trailer, and a retry that finds it on the branch does nothing more.
func (a *Activities) CommitFeature(ctx context.Context, in CommitInput) (_ CommitOutput, err error) {
	defer a.watchOutage(ctx, in.RunID, in.Feature)(&err)
	defer keepAlive(ctx)()
	branch := horizon.IntegrationBranch(in.RunID)
	trailer := fmt.Sprintf("Horizon-Feature: %s/%s", in.RunID, in.Feature)
	out := CommitOutput{Branch: branch}

	if c, _ := git(ctx, in.Repo, "log", "-1", "--format=%H", "--fixed-strings", "--grep="+trailer, "refs/heads/"+branch); c != "" {
		out.Commit = c
		out.Files = changedFiles(ctx, in.Repo, c)
		return out, nil // landed by an earlier try
	}

	laneCommit, err := a.laneCommit(ctx, in, trailer)
	tip, terr := git(ctx, in.Repo, "rev-parse", "refs/heads/"+branch)
	if errors.Is(err, errNothingToCommit) && terr == nil {
		// The gate passed and the auditor accepted a lane with no change:
		// the work was on the branch already (a roadmap item done by an
		// earlier run). That is a done feature, not a failed one.
		out.Commit, out.AlreadyDone = tip, true
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if terr != nil {
		return out, fmt.Errorf("commit feature: %w", terr)
	}
	parent, err := git(ctx, in.Lane, "rev-parse", laneCommit+"^")
	if err != nil {
		return out, fmt.Errorf("commit feature: %w", err)
	}
	landed := laneCommit
	if parent != tip {
		// The branch moved since the lane was cut: replay the change on top
		// in a scratch worktree, never in the user's.
		landed, err = a.replay(ctx, in, branch, laneCommit)
		if err != nil {
			return out, err
		}
	}
	// Compare-and-swap: only moves the branch if nobody else did.
	if _, err := git(ctx, in.Repo, "update-ref", "refs/heads/"+branch, landed, tip); err != nil {
		return out, fmt.Errorf("commit feature: advance %s: %w", branch, err)
	}
	out.Commit = landed
	out.Files = changedFiles(ctx, in.Repo, landed)
	activity.GetLogger(ctx).Info("feature landed", "RunID", in.RunID, "Feature", in.Feature, "Attempt", in.Attempt, "Branch", branch, "Commit", landed)
	return out, nil
}

// errNothingToCommit is an accepted lane without a change.
var errNothingToCommit = errors.New("the accepted attempt changed no files; nothing to commit")

// laneCommit commits the lane's work tree on the lane branch (or finds the
// commit an earlier try made).
func (a *Activities) laneCommit(ctx context.Context, in CommitInput, trailer string) (string, error) {
	head, err := git(ctx, in.Lane, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("commit feature: %w", err)
	}
	if msg, _ := git(ctx, in.Lane, "log", "-1", "--format=%B", head); strings.Contains(msg, trailer) {
		return head, nil // committed by an earlier try that died before landing it
	}
	args := append([]string{"add", "-A", "--", "."}, excluded...)
	if _, err := git(ctx, in.Lane, args...); err != nil {
		return "", fmt.Errorf("commit feature: stage: %w", err)
	}
	if gitOK(ctx, in.Lane, "diff", "--cached", "--quiet") {
		return "", errNothingToCommit
	}
	msg := fmt.Sprintf("%s\n\nHorizon-Run: %s\n%s\nHorizon-Attempt: %d\n", strings.TrimSpace(in.Message), in.RunID, trailer, in.Attempt)
	if _, err := git(ctx, in.Lane, "commit", "--no-verify", "-q", "-m", msg); err != nil {
		return "", fmt.Errorf("commit feature: %w", err)
	}
	return git(ctx, in.Lane, "rev-parse", "HEAD")
}

func (a *Activities) replay(ctx context.Context, in CommitInput, branch, commit string) (string, error) {
	// The scratch worktree is shared with the integration gate: start clean.
	dir := a.integrationDir(in.RunID)
	if err := cleanWorktree(ctx, in.Repo, dir, "refs/heads/"+branch); err != nil {
		return "", fmt.Errorf("commit feature: integration worktree: %w", err)
	}
	if _, err := git(ctx, dir, "cherry-pick", "--allow-empty", commit); err != nil {
		_, _ = git(ctx, dir, "cherry-pick", "--abort")
		return "", fmt.Errorf("commit feature: replay %s onto %s: %w", short(commit), branch, err)
	}
	return git(ctx, dir, "rev-parse", "HEAD")
}

func changedFiles(ctx context.Context, dir, commit string) []string {
	out, err := git(ctx, dir, "diff-tree", "--no-commit-id", "--name-only", "-r", commit)
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}
