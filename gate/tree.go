package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Git modes of tree entries, as `git ls-tree` prints them.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeDir        = "040000"
	ModeSubmodule  = "160000"
)

// Entry is one entry of a tree: its slash-separated path from the root,
// git mode and object ID ("" for a directory on disk).
type Entry struct {
	Path   string
	Mode   string
	Object string
}

// Tree is what discovery reads: a commit's tree as it is (modes from
// `git ls-tree`, contents from blobs), or a directory on disk. Paths are
// slash-separated and relative to the root.
type Tree interface {
	// Entry is the entry at p; ok is false when there is none.
	Entry(p string) (e Entry, ok bool, err error)
	// List is the entries directly under dir ("" or "." for the root).
	List(dir string) ([]Entry, error)
	// Read is the content of the file at p.
	Read(p string) ([]byte, error)
}

// GitTree is a commit's tree in the repository at Dir, read with git:
// nothing is checked out, so discovery sees exactly what a lane cut at
// the commit holds.
type GitTree struct {
	Dir    string
	Commit string
}

func (t GitTree) git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", t.Dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// lsTree lists entries, each "<mode> <type> <object>\t<path>", NUL-ended.
func (t GitTree) lsTree(paths ...string) ([]Entry, error) {
	args := append([]string{"ls-tree", "--full-tree", "-z", t.Commit, "--"}, paths...)
	out, err := t.git(args...)
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", t.Commit, err)
	}
	var es []Entry
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 {
			continue
		}
		es = append(es, Entry{Path: p, Mode: f[0], Object: f[2]})
	}
	return es, nil
}

// Entry implements Tree.
func (t GitTree) Entry(p string) (Entry, bool, error) {
	p = path.Clean(p)
	es, err := t.lsTree(p)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range es {
		if e.Path == p {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// List implements Tree.
func (t GitTree) List(dir string) ([]Entry, error) {
	dir = path.Clean(dir)
	if dir == "." || dir == "" {
		return t.lsTree()
	}
	e, ok, err := t.Entry(dir)
	if err != nil || !ok || e.Mode != ModeDir {
		return nil, err
	}
	return t.lsTree(dir + "/")
}

// Read implements Tree.
func (t GitTree) Read(p string) ([]byte, error) {
	e, ok, err := t.Entry(p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("read %s at %s: %w", p, t.Commit, fs.ErrNotExist)
	}
	return t.git("cat-file", "blob", e.Object)
}

// DirTree is a directory on disk, seen as a tree: modes come from the
// file system (stat, so a symbolic link reads as what it points at, as
// running it would).
type DirTree string

// Entry implements Tree.
func (d DirTree) Entry(p string) (Entry, bool, error) {
	st, err := os.Stat(filepath.Join(string(d), filepath.FromSlash(p)))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Path: p, Mode: diskMode(st)}, true, nil
}

// List implements Tree.
func (d DirTree) List(dir string) ([]Entry, error) {
	ents, err := os.ReadDir(filepath.Join(string(d), filepath.FromSlash(dir)))
	if err != nil {
		return nil, nil // an unreadable or missing directory holds nothing to detect
	}
	var out []Entry
	for _, de := range ents {
		p := path.Join(dir, de.Name())
		if e, ok, err := d.Entry(p); err == nil && ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Read implements Tree.
func (d DirTree) Read(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(p)))
}

func diskMode(st fs.FileInfo) string {
	switch {
	case st.IsDir():
		return ModeDir
	case !st.Mode().IsRegular():
		return "irregular (" + st.Mode().Type().String() + ")"
	case st.Mode().Perm()&0o111 != 0:
		return ModeExecutable
	}
	return ModeFile
}

// isFileMode: a regular file, or a link git would check out.
func isFileMode(m string) bool {
	return m == ModeFile || m == ModeExecutable || m == ModeSymlink
}

// DiscoverTree finds the gate of a tree: the first of ScriptPaths the tree
// holds, else a command detected from the ecosystem (see Discover). root
// is the directory the tree's paths are named under in messages (the
// repository, never a temporary copy) and where a Python project's
// virtualenv is looked for. The result carries the script's git mode and
// object ID, so a caller can put exactly that script back later.
func DiscoverTree(ctx context.Context, t Tree, root string) (Gate, error) {
	looked := make([]string, 0, len(ScriptPaths)+len(detectors))
	for _, rel := range ScriptPaths {
		if err := ctx.Err(); err != nil {
			return Gate{}, err
		}
		looked = append(looked, filepath.Join(root, rel))
		if ok, err := parentsAreDirs(t, rel); err != nil || !ok {
			if err != nil {
				return Gate{}, fmt.Errorf("discover gate in %s: %w", root, err)
			}
			continue
		}
		e, ok, err := t.Entry(rel)
		if err != nil {
			return Gate{}, fmt.Errorf("discover gate in %s: %w", root, err)
		}
		if !ok {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if err := modeRunnable(abs, rel, e.Mode, t); err != nil {
			return Gate{}, err
		}
		return Gate{Path: abs, Command: []string{abs}, Source: rel, Script: rel, Mode: e.Mode, Hash: e.Object}, nil
	}
	for _, d := range detectors {
		looked = append(looked, d.looked)
		if d.match(t) {
			cmd := append([]string(nil), d.command...)
			if d.choose != nil {
				cmd = d.choose(t, root)
			}
			return Gate{Command: cmd, Source: "detected: " + strings.Join(cmd, " ")}, nil
		}
	}
	return Gate{}, &NoGateError{Dir: root, Looked: looked}
}

// parentsAreDirs reports whether every parent of rel is a directory in
// the tree: a committed file named .horizon holds no .horizon/verify.sh,
// and is no gate either.
func parentsAreDirs(t Tree, rel string) (bool, error) {
	dir := path.Dir(rel)
	if dir == "." {
		return true, nil
	}
	e, ok, err := t.Entry(dir)
	if err != nil || !ok {
		return false, err
	}
	return e.Mode == ModeDir, nil
}

// modeRunnable judges a gate script by its mode in the tree: a lane
// checks out exactly that.
func modeRunnable(abs, rel, mode string, t Tree) error {
	_, fromGit := t.(GitTree)
	commit := ""
	if fromGit {
		commit = " in the commit"
	}
	switch mode {
	case ModeExecutable, ModeSymlink: // a link the lane resolves when it runs it
		return nil
	case ModeFile:
		fix := "run: chmod +x " + abs + " (and commit the mode change)"
		if fromGit {
			fix = fmt.Sprintf("run: chmod +x %s && git update-index --chmod=+x %s && git commit", abs, rel)
		}
		return &NotRunnableError{Path: abs, Reason: "it lacks the execute bit" + commit, Fix: fix}
	case ModeDir:
		fix := "replace it with an executable script that exits 0 when the checks pass"
		if fromGit {
			fix += ", and commit it"
		}
		return &NotRunnableError{Path: abs, Reason: "it is a directory", Fix: fix}
	default:
		return &NotRunnableError{Path: abs, Reason: "it is not a regular file (mode " + mode + ")", Fix: "replace it with an executable script"}
	}
}
