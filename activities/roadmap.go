package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
)

// RoadmapBranch is the supervisor's branch: the runs of one supervised
// repository build on each other there, and the user's own branches are
// never touched.
const RoadmapBranch = "horizon/roadmap"

// RoadmapInput names a supervised repository and its base branch.
type RoadmapInput struct {
	Repo string
	// Base is the user's branch the roadmap and the work start from, e.g. "main".
	Base string
	// Path is the roadmap file inside the repository (supervisor.roadmap).
	Path string
}

// RoadmapText is the roadmap as it is at the tip of the base branch.
type RoadmapText struct {
	// Commit is the base branch's tip the text was read from.
	Commit string
	Found  bool
	Text   string
	// Problem says why a roadmap that is there cannot be read (too large,
	// not a file, not text); Text is then empty. The supervisor shows it
	// and goes on with its queue until the roadmap is fixed.
	Problem string
}

// RoadmapLimit is the largest roadmap horizon reads. A roadmap is a list
// of goals; one this large is a mistake (a log or a data file committed
// under its name), and its text would not fit in a workflow's history.
const RoadmapLimit = 512 << 10

// ReadRoadmap reads the roadmap file from the tip of the base branch (never
// from the work tree: a person's uncommitted edits are not the roadmap yet).
// A missing file is not an error: the supervisor then runs its queue only.
func (a *Activities) ReadRoadmap(ctx context.Context, in RoadmapInput) (RoadmapText, error) {
	defer keepAlive(ctx)()
	commit, err := git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Base+"^{commit}")
	if err != nil {
		return RoadmapText{}, badInput("read roadmap: base branch %s is not in %s", in.Base, in.Repo)
	}
	path := filepath.ToSlash(in.Path)
	// The object's type says whether the roadmap is there at all, and
	// whether it is a file.
	typ, err := git(ctx, in.Repo, "cat-file", "-t", commit+":"+path)
	if err != nil {
		return RoadmapText{Commit: commit}, nil
	}
	problem := func(format string, args ...any) (RoadmapText, error) {
		return RoadmapText{Commit: commit, Found: true, Problem: fmt.Sprintf("roadmap %s at %s ", path, short(commit)) + fmt.Sprintf(format, args...)}, nil
	}
	if typ != "blob" {
		return problem("is a %s, not a file: commit a Markdown file there", typ)
	}
	size, err := git(ctx, in.Repo, "cat-file", "-s", commit+":"+path)
	if err != nil {
		return RoadmapText{}, fmt.Errorf("read roadmap %s at %s: %w", path, short(commit), err)
	}
	if n, _ := strconv.Atoi(size); n > RoadmapLimit {
		return problem("is %s; a roadmap may be %s at most: keep its items short and move details into files it links to", byteSize(n), byteSize(RoadmapLimit))
	}
	text, err := git(ctx, in.Repo, "show", commit+":"+path)
	if err != nil {
		return RoadmapText{}, fmt.Errorf("read roadmap %s at %s: %w", path, short(commit), err)
	}
	if strings.ContainsRune(text, 0) || !utf8.ValidString(text) {
		return problem("is not UTF-8 text: commit a Markdown file there")
	}
	return RoadmapText{Commit: commit, Found: true, Text: text + "\n"}, nil
}

// Ways SyncRoadmap brought horizon/roadmap up to the base branch.
const (
	SyncCreated     = "created"
	SyncUpToDate    = "up-to-date"
	SyncFastForward = "fast-forward"
	SyncMerge       = "merge"    // a merge commit waits in MergeDir for the gate
	SyncConflict    = "conflict" // a person must merge
)

// SyncOutput says how horizon/roadmap relates to the base branch now.
type SyncOutput struct {
	Action string
	// Tip is horizon/roadmap's tip (before a pending merge lands).
	Tip string
	// Base is the base branch's tip.
	Base string
	// MergeDir and MergeCommit hold a clean merge of the base into
	// horizon/roadmap, to be gated and then landed with AdvanceRoadmap.
	MergeDir    string
	MergeCommit string
	// Conflict lists the files that did not merge.
	Conflict []string
}

// SyncRoadmap makes horizon/roadmap (from the base branch if missing) and
// brings it up to the base branch when the person has moved it: nothing
// when the base is already in it, a fast-forward when possible, else a
// merge prepared in a scratch worktree for the workflow to gate. It never
// writes the base branch or the person's work tree.
func (a *Activities) SyncRoadmap(ctx context.Context, in RoadmapInput) (SyncOutput, error) {
	defer keepAlive(ctx)()
	base, err := git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Base+"^{commit}")
	if err != nil {
		return SyncOutput{}, badInput("sync roadmap: base branch %s is not in %s", in.Base, in.Repo)
	}
	out := SyncOutput{Base: base}
	ref := "refs/heads/" + RoadmapBranch
	tip, err := git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		if _, err := git(ctx, in.Repo, "update-ref", ref, base, ""); err != nil {
			return SyncOutput{}, fmt.Errorf("sync roadmap: create %s: %w", RoadmapBranch, err)
		}
		out.Action, out.Tip = SyncCreated, base
		return out, nil
	}
	out.Tip = tip
	switch {
	case gitOK(ctx, in.Repo, "merge-base", "--is-ancestor", base, tip):
		out.Action = SyncUpToDate
		return out, nil
	case gitOK(ctx, in.Repo, "merge-base", "--is-ancestor", tip, base):
		if _, err := git(ctx, in.Repo, "update-ref", ref, base, tip); err != nil {
			return SyncOutput{}, fmt.Errorf("sync roadmap: fast-forward %s: %w", RoadmapBranch, err)
		}
		out.Action, out.Tip = SyncFastForward, base
		return out, nil
	}
	dir := a.supervisorDir(in.Repo, "merge")
	if err := cleanWorktree(ctx, in.Repo, dir, tip); err != nil {
		return SyncOutput{}, fmt.Errorf("sync roadmap: scratch worktree: %w", err)
	}
	msg := fmt.Sprintf("horizon: merge %s into %s", in.Base, RoadmapBranch)
	if _, err := git(ctx, dir, "merge", "--no-ff", "--no-edit", "-m", msg, base); err != nil {
		files, _ := git(ctx, dir, "diff", "--name-only", "--diff-filter=U")
		_, _ = git(ctx, dir, "merge", "--abort")
		out.Action = SyncConflict
		out.Conflict = strings.Fields(files)
		if len(out.Conflict) == 0 {
			out.Conflict = []string{err.Error()}
		}
		return out, nil
	}
	merged, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return SyncOutput{}, fmt.Errorf("sync roadmap: %w", err)
	}
	out.Action, out.MergeDir, out.MergeCommit = SyncMerge, dir, merged
	activity.GetLogger(ctx).Info("roadmap merge prepared", "Repo", in.Repo, "Base", short(base), "Commit", short(merged))
	return out, nil
}

// AdvanceInput moves horizon/roadmap from one commit to a descendant.
type AdvanceInput struct {
	Repo string
	// From is the tip the caller saw; To must descend from it.
	From string
	// To is the new tip: a gated merge, or a finished run's integration
	// branch when Run is set (then To is read from horizon/<run>).
	To  string
	Run string
}

// AdvanceRoadmap lands work on horizon/roadmap as a compare-and-swap from
// the tip the workflow saw. It is idempotent: a retry that finds the branch
// already at (or past) the new tip succeeds without writing.
func (a *Activities) AdvanceRoadmap(ctx context.Context, in AdvanceInput) (string, error) {
	defer keepAlive(ctx)()
	to := in.To
	if in.Run != "" {
		branch := "refs/heads/horizon/" + in.Run
		tip, err := git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", branch+"^{commit}")
		if err != nil {
			return "", badInput("advance roadmap: run branch horizon/%s is not in %s", in.Run, in.Repo)
		}
		to = tip
	}
	ref := "refs/heads/" + RoadmapBranch
	cur, err := git(ctx, in.Repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", badInput("advance roadmap: %s is not in %s", RoadmapBranch, in.Repo)
	}
	if cur == to || (cur != in.From && gitOK(ctx, in.Repo, "merge-base", "--is-ancestor", to, cur)) {
		return cur, nil // landed before (a retry)
	}
	if cur != in.From {
		return "", badInput("advance roadmap: %s moved to %s, expected %s: someone else wrote it", RoadmapBranch, short(cur), short(in.From))
	}
	if !gitOK(ctx, in.Repo, "merge-base", "--is-ancestor", in.From, to) {
		return "", badInput("advance roadmap: %s does not descend from %s", short(to), short(in.From))
	}
	if _, err := git(ctx, in.Repo, "update-ref", ref, to, in.From); err != nil {
		return "", fmt.Errorf("advance roadmap: %w", err)
	}
	activity.GetLogger(ctx).Info("roadmap advanced", "Repo", in.Repo, "From", short(in.From), "To", short(to), "RunID", in.Run)
	return to, nil
}

// supervisorDir is a supervisor's scratch space under the lanes, one per
// repository.
func (a *Activities) supervisorDir(repo, name string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(a.lanesDir(), "_supervisor", hex.EncodeToString(sum[:6]), name)
}
