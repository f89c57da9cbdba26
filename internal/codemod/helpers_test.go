package codemod

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/tools"
)

// astGrepBin returns the real ast-grep for an integration test. It skips
// under -short, and when ast-grep is missing, naming how to install it;
// under CI=true a missing ast-grep fails the test instead.
func astGrepBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: runs the real ast-grep")
	}
	bin, err := tools.Find(tools.AstGrep, "", "PATH")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: ast-grep must be installed)", err)
		}
		t.Skipf("skipping: %v", err)
	}
	return bin
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// writeFiles writes name → content under dir, creating directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// snapshot reads every file under dir (not following symlinks) into
// relative path → content; symlinks map to "-> target".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" && d.IsDir() {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	}))
	return out
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func ruleByID(t *testing.T, rules []Rule, id string) Rule {
	t.Helper()
	for _, r := range rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no rule %s in %v", id, ruleIDs(rules))
	return Rule{}
}

// inlineRule makes a project rule from YAML, as Load would.
func inlineRule(t *testing.T, path, doc string) Rule {
	t.Helper()
	rs, problems := parseRules(path, []byte(doc))
	require.Empty(t, problems)
	require.Len(t, rs, 1)
	return rs[0]
}
