package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
)

// RemoveLanesInput names the run whose lanes go. Repo may be empty (a run
// the engine no longer knows): it is then found from the lanes' worktrees.
type RemoveLanesInput struct {
	RunID string
	Repo  string
	// DryRun only reports what would go.
	DryRun bool
}

// RemoveLanesOutput says what was (or, dry, would be) removed.
type RemoveLanesOutput struct {
	// Dir is the run's lane directory, "" when there was none.
	Dir      string   `json:"dir,omitempty"`
	Repo     string   `json:"repo,omitempty"`
	Branches []string `json:"branches,omitempty"`
}

// Empty reports whether nothing was there to remove.
func (o RemoveLanesOutput) Empty() bool { return o.Dir == "" && len(o.Branches) == 0 }

// RemoveLanes removes a run's lanes when it has ended: the git worktrees
// under $HORIZON_HOME/lanes/<run> (the integration scratch worktree too)
// and the lane branches horizon-lanes/<run>/*. The integration branch
// horizon/<run> stays: it is the run's result. Idempotent: a retry, or a
// run whose lanes are already gone, removes what is left.
func (a *Activities) RemoveLanes(ctx context.Context, in RemoveLanesInput) (RemoveLanesOutput, error) {
	defer keepAlive(ctx)()
	out, err := RemoveRunLanes(ctx, a.Home, in)
	if err != nil {
		return out, err
	}
	if !out.Empty() {
		activity.GetLogger(ctx).Info("lanes removed", "RunID", in.RunID, "Lane", out.Dir, "Branches", len(out.Branches))
	}
	return out, nil
}

// RemoveRunLanes is RemoveLanes outside an activity, for `horizon gc`.
func RemoveRunLanes(ctx context.Context, home string, in RemoveLanesInput) (RemoveLanesOutput, error) {
	if home == "" {
		return RemoveLanesOutput{}, badInput("remove lanes of %s: no horizon home", in.RunID)
	}
	if in.RunID == "" || in.RunID != filepath.Base(in.RunID) || strings.HasPrefix(in.RunID, ".") || strings.HasPrefix(in.RunID, "_") {
		return RemoveLanesOutput{}, badInput("remove lanes: %q is not a run ID", in.RunID)
	}
	dir := filepath.Join(home, "lanes", in.RunID)
	var out RemoveLanesOutput
	if _, err := os.Stat(dir); err == nil {
		out.Dir = dir
	} else if !errors.Is(err, fs.ErrNotExist) {
		return out, fmt.Errorf("remove lanes of %s: %w", in.RunID, err)
	}
	out.Repo = in.Repo
	if out.Repo == "" && out.Dir != "" {
		out.Repo = repoOfLanes(ctx, dir)
	}
	if out.Repo != "" && !gitOK(ctx, out.Repo, "rev-parse", "--git-dir") {
		// The repository is gone or moved: its branches went with it, and
		// the lane directory is all that is left to remove.
		out.Repo = ""
	}
	if out.Repo != "" {
		refs, err := git(ctx, out.Repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+horizon.LaneBranch(in.RunID, ""))
		if err != nil {
			return out, fmt.Errorf("remove lanes of %s: %w", in.RunID, err)
		}
		for _, r := range strings.Split(refs, "\n") {
			if r != "" {
				out.Branches = append(out.Branches, r)
			}
		}
	}
	if in.DryRun {
		return out, nil
	}
	if out.Repo != "" && out.Dir != "" {
		for _, wt := range worktreesUnder(ctx, out.Repo, dir) {
			if !wt.locked {
				// The directory goes below and prune forgets it: one git
				// process for all the run's lanes, not one per lane.
				continue
			}
			// Twice forced: a lane locked by a crashed git (prune keeps
			// it) may also be dirty or hold submodules.
			_, _ = git(ctx, out.Repo, "worktree", "remove", "--force", "--force", wt.path)
		}
	}
	if out.Dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			return out, fmt.Errorf("remove lanes of %s: %w", in.RunID, err)
		}
	}
	if out.Repo == "" {
		return out, nil
	}
	if _, err := git(ctx, out.Repo, "worktree", "prune"); err != nil {
		return out, fmt.Errorf("remove lanes of %s: %w", in.RunID, err)
	}
	if len(out.Branches) > 0 {
		if _, err := git(ctx, out.Repo, append([]string{"branch", "-D", "--"}, out.Branches...)...); err != nil {
			return out, fmt.Errorf("remove lane branches of %s: %w", in.RunID, err)
		}
	}
	return out, nil
}

// repoOfLanes finds the repository a run's lanes belong to from the first
// lane that is still a worktree ("" when none is).
func repoOfLanes(ctx context.Context, dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		common, err := git(ctx, filepath.Join(dir, e.Name()), "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			continue
		}
		if top, err := git(ctx, filepath.Dir(common), "rev-parse", "--show-toplevel"); err == nil {
			return top
		}
		return filepath.Dir(common)
	}
	return ""
}

// worktree is one of a repository's worktrees, and whether it is locked.
type worktree struct {
	path   string
	locked bool
}

// worktreesUnder lists repo's worktrees inside dir.
func worktreesUnder(ctx context.Context, repo, dir string) []worktree {
	list, err := git(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil
	}
	var out []worktree
	in := false // the stanza read now is of a worktree inside dir
	for _, l := range strings.Split(list, "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			in = within(p, dir)
			if in {
				out = append(out, worktree{path: p})
			}
			continue
		}
		if in && (l == "locked" || strings.HasPrefix(l, "locked ")) {
			out[len(out)-1].locked = true
		}
	}
	return out
}

// within reports whether p is dir or under it, symlinks resolved (a
// temporary directory may be reached through one).
func within(p, dir string) bool {
	if rp, err := filepath.EvalSymlinks(p); err == nil {
		p = rp
	}
	if rd, err := filepath.EvalSymlinks(dir); err == nil {
		dir = rd
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
