// Package repo inspects the user's repository before a run starts: is it a
// git repository, which commit does the run start from, and is there work
// that a run from that commit would not see.
package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotGit says the directory is not inside a git work tree.
var ErrNotGit = errors.New("not a git repository")

// BareError is a bare repository given where a work tree is needed (a
// run's lanes, the gate). It is an ErrNotGit: nothing can run in it.
type BareError struct{ Dir string }

func (e *BareError) Error() string {
	return fmt.Sprintf("repo %s is a bare repository, with no work tree for lanes and the gate: %v (clone it, `git clone %s work`, and pass the clone)", e.Dir, ErrNotGit, e.Dir)
}

func (e *BareError) Unwrap() error { return ErrNotGit }

// ErrNoCommits says the repository has no commit to start from.
var ErrNoCommits = errors.New("repository has no commits")

// DirtyError says the work tree has changes a run would not see.
type DirtyError struct {
	Root  string
	Files []string
}

func (e *DirtyError) Error() string {
	shown := e.Files
	more := ""
	if len(shown) > 5 {
		more = fmt.Sprintf(" and %d more", len(shown)-5)
		shown = shown[:5]
	}
	return fmt.Sprintf("%s has uncommitted changes (%s%s): horizon works from the last commit and never touches your work tree, so these would be invisible to the run; commit or stash them, or pass --allow-dirty to run from HEAD anyway", e.Root, strings.Join(shown, ", "), more)
}

// Info describes the starting point of a run.
type Info struct {
	Root  string // absolute work-tree root
	Head  string // commit id of HEAD
	Ref   string // branch name, or "" when detached
	Dirty []string
}

// Inspect looks at dir. It returns ErrNotGit or ErrNoCommits (wrapped with
// the path) for unusable input; dirtiness is reported in Info, not as an
// error, so the caller decides.
func Inspect(dir string) (Info, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Info{}, fmt.Errorf("repo %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return Info{}, fmt.Errorf("repo %s: not a directory: %w", abs, ErrNotGit)
	}
	root, err := run(abs, "rev-parse", "--show-toplevel")
	if err != nil {
		if bare, berr := run(abs, "rev-parse", "--is-bare-repository"); berr == nil && bare == "true" {
			return Info{}, &BareError{Dir: abs}
		}
		return Info{}, fmt.Errorf("repo %s: %w (run `git init` and commit, or pass --repo)", abs, ErrNotGit)
	}
	info := Info{Root: root}
	head, err := run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil || head == "" {
		return Info{}, fmt.Errorf("repo %s: %w (make a first commit)", root, ErrNoCommits)
	}
	info.Head = head
	if ref, err := run(root, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		info.Ref = ref
	}
	status, err := raw(root, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil {
		return Info{}, fmt.Errorf("repo %s: git status: %w", root, err)
	}
	entries := strings.Split(status, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		info.Dirty = append(info.Dirty, e[3:])
		if e[0] == 'R' || e[0] == 'C' {
			i++ // a rename's source path follows
		}
	}
	return info, nil
}

// Root is the top of the work tree dir is in: Inspect's Root, for one
// git process instead of four (no HEAD, no status).
func Root(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repo %s: %w", dir, err)
	}
	root, err := run(abs, "rev-parse", "--show-toplevel")
	if err != nil || root == "" {
		return "", fmt.Errorf("repo %s: %w", abs, ErrNotGit)
	}
	return root, nil
}

// CheckClean returns a *DirtyError when the work tree has changes.
func (i Info) CheckClean() error {
	if len(i.Dirty) == 0 {
		return nil
	}
	return &DirtyError{Root: i.Root, Files: i.Dirty}
}

func run(dir string, args ...string) (string, error) {
	out, err := raw(dir, args...)
	return strings.TrimSpace(out), err
}

func raw(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
