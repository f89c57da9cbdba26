package repo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func gitInit(t *testing.T, dir string, commit bool) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	if commit {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
		for _, args := range [][]string{{"add", "."}, {"commit", "-qm", "first"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		}
	}
}

func TestInspect(t *testing.T) {
	t.Run("bare", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "bare.git")
		out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
		_, err = Inspect(dir)
		require.ErrorIs(t, err, ErrNotGit)
		var be *BareError
		require.ErrorAs(t, err, &be)
		require.Contains(t, err.Error(), "is a bare repository")
		require.Contains(t, err.Error(), "git clone")
	})
	t.Run("a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(f, nil, 0o600))
		_, err := Inspect(f)
		require.ErrorIs(t, err, ErrNotGit)
		require.Contains(t, err.Error(), "not a directory")
	})
	t.Run("not git", func(t *testing.T) {
		_, err := Inspect(t.TempDir())
		require.ErrorIs(t, err, ErrNotGit)
		require.Contains(t, err.Error(), "git init")
	})
	t.Run("missing dir", func(t *testing.T) {
		_, err := Inspect(filepath.Join(t.TempDir(), "nope"))
		require.ErrorIs(t, err, ErrNotGit)
	})
	t.Run("no commits", func(t *testing.T) {
		d := t.TempDir()
		gitInit(t, d, false)
		_, err := Inspect(d)
		require.ErrorIs(t, err, ErrNoCommits)
	})
	t.Run("clean, from a subdirectory", func(t *testing.T) {
		d := t.TempDir()
		gitInit(t, d, true)
		sub := filepath.Join(d, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		info, err := Inspect(sub)
		require.NoError(t, err)
		real, _ := filepath.EvalSymlinks(d)
		require.Equal(t, real, info.Root)
		require.Equal(t, "main", info.Ref)
		require.Len(t, info.Head, 40)
		require.NoError(t, info.CheckClean())
	})
	t.Run("dirty", func(t *testing.T) {
		d := t.TempDir()
		gitInit(t, d, true)
		require.NoError(t, os.WriteFile(filepath.Join(d, "a.txt"), []byte("changed\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "new.txt"), []byte("x\n"), 0o644))
		info, err := Inspect(d)
		require.NoError(t, err)
		var de *DirtyError
		require.True(t, errors.As(info.CheckClean(), &de))
		require.ElementsMatch(t, []string{"a.txt", "new.txt"}, de.Files)
		require.Contains(t, de.Error(), "--allow-dirty")
	})
}

// Root finds the same top as Inspect, from a subdirectory and before the
// first commit, and refuses a directory outside any repository.
func TestRoot(t *testing.T) {
	d := t.TempDir()
	gitInit(t, d, false)
	sub := filepath.Join(d, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	real, _ := filepath.EvalSymlinks(d)
	for _, dir := range []string{d, sub} {
		root, err := Root(dir)
		require.NoError(t, err)
		require.Equal(t, real, root, dir)
	}
	_, err := Root(t.TempDir())
	require.ErrorIs(t, err, ErrNotGit)
}
