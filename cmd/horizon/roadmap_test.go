package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A roadmap with errors, or one that cannot be a roadmap, is listed with
// its error and exits 2 (bad input), in text and in JSON; a good one
// exits 0.
func TestRoadmapErrorsExitAsBadInput(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, repo string)
		code  int
		want  string
	}{
		{"good", func(t *testing.T, repo string) {
			writeRoadmap(t, repo, "- [ ] Add a health endpoint\n")
		}, ExitOK, "Add a health endpoint"},
		{"syntax error", func(t *testing.T, repo string) {
			writeRoadmap(t, repo, "- [ ] fine\n- [] broken\n")
		}, ExitUsage, "roadmap.md:2: checkbox"},
		{"a directory", func(t *testing.T, repo string) {
			writeRoadmap(t, repo+"/.horizon/roadmap.md", "- [ ] inside\n")
		}, ExitUsage, "is a tree, not a file"},
		{"binary", func(t *testing.T, repo string) {
			writeRoadmap(t, repo, "\x00\x01\xff")
		}, ExitUsage, "is not UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			tt.write(t, repo)
			sh(t, repo, "git", "add", "-A")
			sh(t, repo, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "roadmap")
			for _, args := range [][]string{{"roadmap", "--repo", repo}, {"roadmap", "--repo", repo, "--json"}} {
				code, out, errOut := runCLI(t, args...)
				require.Equal(t, tt.code, code, "%v: %s%s", args, out, errOut)
				require.Contains(t, out, strings.ReplaceAll(tt.want, `"`, `\"`), "%v", args)
			}
		})
	}
}

// writeRoadmap writes .horizon/roadmap.md under dir (or, for a path that
// already ends in it, a file inside it).
func writeRoadmap(t *testing.T, dir, text string) {
	t.Helper()
	p := filepath.Join(dir, ".horizon", "roadmap.md")
	if strings.HasSuffix(dir, "roadmap.md") {
		p = filepath.Join(dir, "item.md")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}
