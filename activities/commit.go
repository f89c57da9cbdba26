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

	if c := landedBefore(ctx, in, branch, trailer); c != "" {
		out.Commit = c
		out.Files = changedFiles(ctx, in.Repo, c)
		return out, nil // landed by an earlier try
	}

	lc, err := a.laneCommit(ctx, in, trailer)
	laneCommit := lc.commit
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
	parent := lc.parent
	if parent == "" {
		if parent, err = git(ctx, in.Lane, "rev-parse", laneCommit+"^"); err != nil {
			return out, fmt.Errorf("commit feature: %w", err)
		}
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
	if landed == laneCommit && lc.files != nil {
		out.Files = lc.files
	} else {
		out.Files = changedFiles(ctx, in.Repo, landed)
	}
	activity.GetLogger(ctx).Info("feature landed", "RunID", in.RunID, "Feature", in.Feature, "Attempt", in.Attempt, "Branch", branch, "Commit", landed)
	return out, nil
}

// errNothingToCommit is an accepted lane without a change.
var errNothingToCommit = errors.New("the accepted attempt changed no files; nothing to commit")

// landedBefore finds the commit an earlier try landed on branch: the one
// with the feature's trailer. It looks from the lane's base on, which
// every landing of the lane's change comes after, so a long history is
// not read for every commit; a base git cannot use has the whole branch
// read, as a missed landing would land the change twice.
func landedBefore(ctx context.Context, in CommitInput, branch, trailer string) string {
	grep := []string{"log", "-1", "--format=%H", "--fixed-strings", "--grep=" + trailer}
	if in.BaseCommit != "" {
		if c, err := git(ctx, in.Repo, append(grep, in.BaseCommit+"..refs/heads/"+branch)...); err == nil {
			return c
		}
	}
	c, _ := git(ctx, in.Repo, append(grep, "refs/heads/"+branch)...)
	return c
}

// laneCommitted is the lane's commit of the accepted change: parent and
// files are known when this try made it ("" and nil when an earlier try
// did).
type laneCommitted struct {
	commit, parent string
	files          []string
}

// laneCommit commits the lane's work tree on the lane branch (or finds the
// commit an earlier try made).
func (a *Activities) laneCommit(ctx context.Context, in CommitInput, trailer string) (laneCommitted, error) {
	// The head and its message in one git process: every process counts
	// in a feature's commit.
	top, err := git(ctx, in.Lane, "log", "-1", "--format=%H%n%B", "HEAD")
	if err != nil {
		return laneCommitted{}, fmt.Errorf("commit feature: %w", err)
	}
	head, msg, _ := strings.Cut(top, "\n")
	if strings.Contains(msg, trailer) {
		return laneCommitted{commit: head}, nil // committed by an earlier try that died before landing it
	}
	args := append([]string{"add", "-A", "--", "."}, excluded...)
	if _, err := git(ctx, in.Lane, args...); err != nil {
		return laneCommitted{}, fmt.Errorf("commit feature: stage: %w", err)
	}
	// What is staged is what the commit changes: the same list
	// changedFiles reads off a commit (renames as a deletion and an
	// addition), and none means nothing to commit.
	staged, err := git(ctx, in.Lane, "diff", "--cached", "--name-only", "--no-renames")
	if err != nil {
		return laneCommitted{}, fmt.Errorf("commit feature: staged files: %w", err)
	}
	if staged == "" {
		return laneCommitted{}, errNothingToCommit
	}
	msg = fmt.Sprintf("%s\n\nHorizon-Run: %s\n%s\nHorizon-Attempt: %d\n", strings.TrimSpace(in.Message), in.RunID, trailer, in.Attempt)
	if _, err := git(ctx, in.Lane, "commit", "--no-verify", "-q", "-m", msg); err != nil {
		return laneCommitted{}, fmt.Errorf("commit feature: %w", err)
	}
	c, err := git(ctx, in.Lane, "rev-parse", "HEAD")
	if err != nil {
		return laneCommitted{}, fmt.Errorf("commit feature: %w", err)
	}
	return laneCommitted{commit: c, parent: head, files: strings.Split(staged, "\n")}, nil
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
