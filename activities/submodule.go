package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A lane is a git worktree, and a new worktree has its submodules' paths
// empty: a gate that needs one passes in the repository and fails in every
// lane. Lanes therefore initialise the submodules the commit records, each
// cloned from the repository's own copy (.git/modules/<name>, or the
// checked-out submodule), never from the network. The URL is given on the
// command line only: the user's .git/config, shared by every worktree, is
// not written.

// submodule is one submodule a commit records.
type submodule struct {
	name, path string
	commit     string // the gitlink: the submodule commit the superproject records
}

// SubmoduleError says why a lane cannot have a submodule the commit needs.
type SubmoduleError struct {
	Repo, Name, Path, Commit string
	Reason                   string
}

func (e *SubmoduleError) Error() string {
	return fmt.Sprintf("submodule %s (path %s, commit %s) cannot be set up in a lane: %s; lanes copy submodules from the repository's own copy, never from the network: run `git submodule update --init -- %s` in %s, then start again",
		e.Name, e.Path, short(e.Commit), e.Reason, e.Path, e.Repo)
}

// submodulesAt lists the submodules commit records, read in dir (the
// repository or one of its worktrees): names and paths from the commit's
// .gitmodules, gitlinks from its tree. A .gitmodules entry whose path is
// not a gitlink in the tree is not a submodule of this commit.
func submodulesAt(ctx context.Context, dir, commit string) ([]submodule, error) {
	if !gitOK(ctx, dir, "cat-file", "-e", commit+":.gitmodules") {
		return nil, nil
	}
	out, err := git(ctx, dir, "config", "--blob", commit+":.gitmodules", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		// --get-regexp exits 1 when nothing matches: a .gitmodules without paths.
		if gitOK(ctx, dir, "config", "--blob", commit+":.gitmodules", "--list") {
			return nil, nil
		}
		return nil, fmt.Errorf("read .gitmodules of %s: %w", short(commit), err)
	}
	var subs []submodule
	for _, line := range strings.Split(out, "\n") {
		key, path, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "submodule."), ".path")
		entry, err := git(ctx, dir, "ls-tree", commit, "--", path)
		f := strings.Fields(entry)
		if err != nil || len(f) < 3 || f[1] != "commit" {
			continue
		}
		subs = append(subs, submodule{name: name, path: path, commit: f[2]})
	}
	return subs, nil
}

// submoduleSource is the repository's own copy of s that holds s.commit:
// the absorbed git dir .git/modules/<name>, or a checkout at its path.
func submoduleSource(ctx context.Context, repo string, s submodule) (string, error) {
	common, err := git(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("find submodule %s: %w", s.name, err)
	}
	top, err := git(ctx, repo, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("find submodule %s: %w", s.name, err)
	}
	reason := fmt.Sprintf("the repository has no copy of it (no %s, and %s is not checked out)", filepath.Join(common, "modules", s.name), filepath.Join(top, s.path))
	for _, cand := range []string{filepath.Join(common, "modules", s.name), filepath.Join(top, s.path)} {
		gitDir := cand
		if _, err := os.Stat(filepath.Join(cand, ".git")); err == nil {
			gitDir = filepath.Join(cand, ".git")
		} else if _, err := os.Stat(filepath.Join(cand, "HEAD")); err != nil {
			continue // neither a checkout nor a git dir
		}
		if gitOK(ctx, repo, "--git-dir="+gitDir, "cat-file", "-e", s.commit+"^{commit}") {
			return cand, nil
		}
		reason = fmt.Sprintf("its copy %s does not have commit %s (fetch it there)", cand, short(s.commit))
	}
	return "", &SubmoduleError{Repo: repo, Name: s.name, Path: s.path, Commit: s.commit, Reason: reason}
}

// CheckSubmodules reports, before a run starts, a submodule of commit that
// lanes could not set up, as a *SubmoduleError. The run's Preflight and
// the CLI's checks before a run exists (`horizon start`, `horizon doctor`)
// share it, so a submodule is refused the same way by both.
func CheckSubmodules(ctx context.Context, repo, commit string) error {
	subs, err := submodulesAt(ctx, repo, commit)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if _, err := submoduleSource(ctx, repo, s); err != nil {
			return err
		}
	}
	return nil
}

// initSubmodules checks out, in worktree dir, the submodules its HEAD
// records, cloned from repo's own copies. With refresh unset only missing
// ones are set up (a retried lane keeps what its worker did inside one);
// with refresh set every one is moved to the recorded commit (the scratch
// integration worktree, whose gitlinks change as features land).
func initSubmodules(ctx context.Context, repo, dir string, refresh bool) error {
	subs, err := submodulesAt(ctx, dir, "HEAD")
	if err != nil {
		return err
	}
	for _, s := range subs {
		if _, err := os.Stat(filepath.Join(dir, s.path, ".git")); err == nil && !refresh {
			continue
		}
		src, err := submoduleSource(ctx, repo, s)
		if err != nil {
			return err
		}
		if _, err := git(ctx, dir,
			"-c", "protocol.file.allow=always",
			"-c", "submodule."+s.name+".url="+src,
			"-c", "submodule."+s.name+".active=true",
			"submodule", "update", "--checkout", "--", s.path); err != nil {
			return fmt.Errorf("set up submodule %s: %w", s.name, err)
		}
	}
	return nil
}

// asSubmoduleError is err's SubmoduleError, if it is one.
func asSubmoduleError(err error) (*SubmoduleError, bool) {
	var se *SubmoduleError
	return se, errors.As(err, &se)
}
