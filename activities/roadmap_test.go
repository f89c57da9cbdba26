package activities

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func (h *gitHarness) commit(file, body, msg string) string {
	h.t.Helper()
	h.write(h.repo, file, body)
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", msg)
	return h.git(h.repo, "rev-parse", "HEAD")
}

// act runs an activity in the harness's activity environment and decodes
// its result into out.
func act[T any](h *gitHarness, fn any, in any) (T, error) {
	h.t.Helper()
	var out T
	v, err := h.env.ExecuteActivity(fn, in)
	if err != nil {
		return out, err
	}
	require.NoError(h.t, v.Get(&out))
	return out, nil
}

func TestReadRoadmapFromBaseTipNotWorkTree(t *testing.T) {
	h := newGitHarness(t)
	in := RoadmapInput{Repo: h.repo, Base: "main", Path: ".horizon/roadmap.md"}

	got, err := act[RoadmapText](h, h.a.ReadRoadmap, in)
	require.NoError(t, err)
	require.False(t, got.Found, "no roadmap committed yet")
	require.Equal(t, h.base, got.Commit)

	tip := h.commit(".horizon/roadmap.md", "- [ ] first\n", "roadmap")
	h.write(h.repo, ".horizon/roadmap.md", "- [ ] uncommitted edit\n")
	got, err = act[RoadmapText](h, h.a.ReadRoadmap, in)
	require.NoError(t, err)
	require.True(t, got.Found)
	require.Equal(t, tip, got.Commit)
	require.Equal(t, "- [ ] first\n", got.Text)

	_, err = act[RoadmapText](h, h.a.ReadRoadmap, RoadmapInput{Repo: h.repo, Base: "nope", Path: ".horizon/roadmap.md"})
	require.ErrorContains(t, err, "base branch nope")
}

// A roadmap that is there but cannot be a roadmap is a Problem the
// supervisor shows, never a result too large for the engine or an error
// retried for ever.
func TestReadRoadmapProblems(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *gitHarness)
		path  string
		want  string
	}{
		{"too large", func(h *gitHarness) {
			h.commit(".horizon/roadmap.md", "- [ ] "+strings.Repeat("x", 600<<10)+"\n", "huge roadmap")
		}, ".horizon/roadmap.md", "is 600.0 KiB; a roadmap may be 512.0 KiB at most"},
		{"a directory", func(h *gitHarness) {
			h.commit(".horizon/roadmap.md/item.md", "- [ ] first\n", "roadmap dir")
		}, ".horizon/roadmap.md", "is a tree, not a file"},
		{"binary", func(h *gitHarness) {
			h.commit(".horizon/roadmap.md", "- [ ] \x00\xff\xfe\n", "binary roadmap")
		}, ".horizon/roadmap.md", "is not UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			tt.setup(h)
			got, err := act[RoadmapText](h, h.a.ReadRoadmap, RoadmapInput{Repo: h.repo, Base: "main", Path: tt.path})
			require.NoError(t, err)
			require.True(t, got.Found)
			require.Empty(t, got.Text)
			require.Contains(t, got.Problem, "roadmap "+tt.path+" at ")
			require.Contains(t, got.Problem, tt.want)
		})
	}
}

func TestSyncRoadmap(t *testing.T) {
	h := newGitHarness(t)
	in := RoadmapInput{Repo: h.repo, Base: "main"}
	roadmapTip := func() string { return h.git(h.repo, "rev-parse", "refs/heads/"+RoadmapBranch) }

	out, err := act[SyncOutput](h, h.a.SyncRoadmap, in)
	require.NoError(t, err)
	require.Equal(t, SyncCreated, out.Action)
	require.Equal(t, h.base, roadmapTip())

	out, err = act[SyncOutput](h, h.a.SyncRoadmap, in)
	require.NoError(t, err)
	require.Equal(t, SyncUpToDate, out.Action)

	// The person commits on main: a fast-forward.
	moved := h.commit("a.txt", "a\n", "person's work")
	out, err = act[SyncOutput](h, h.a.SyncRoadmap, in)
	require.NoError(t, err)
	require.Equal(t, SyncFastForward, out.Action)
	require.Equal(t, moved, roadmapTip())

	// horizon lands work on the roadmap branch, the person commits on
	// main: a clean merge, prepared but not landed until gated.
	h.git(h.repo, "checkout", "-q", "-b", "tmp", RoadmapBranch)
	landed := h.commit("b.txt", "b\n", "horizon's work")
	h.git(h.repo, "checkout", "-q", "main")
	h.git(h.repo, "update-ref", "refs/heads/"+RoadmapBranch, landed)
	h.commit("c.txt", "c\n", "more of the person's work")
	out, err = act[SyncOutput](h, h.a.SyncRoadmap, in)
	require.NoError(t, err)
	require.Equal(t, SyncMerge, out.Action)
	require.Equal(t, landed, roadmapTip(), "a merge lands only after the gate")
	require.FileExists(t, out.MergeDir+"/b.txt")
	require.FileExists(t, out.MergeDir+"/c.txt")

	tip, err := act[string](h, h.a.AdvanceRoadmap, AdvanceInput{Repo: h.repo, From: landed, To: out.MergeCommit})
	require.NoError(t, err)
	require.Equal(t, out.MergeCommit, tip)
	tip, err = act[string](h, h.a.AdvanceRoadmap, AdvanceInput{Repo: h.repo, From: landed, To: out.MergeCommit})
	require.NoError(t, err, "a retry after landing succeeds")
	require.Equal(t, out.MergeCommit, tip)

	// Both sides change the same file: a conflict for the person, nothing written.
	before := roadmapTip()
	h.git(h.repo, "checkout", "-q", "tmp")
	h.git(h.repo, "reset", "-q", "--hard", before)
	h.commit("a.txt", "horizon\n", "horizon edits a")
	side := h.git(h.repo, "rev-parse", "HEAD")
	h.git(h.repo, "checkout", "-q", "main")
	h.git(h.repo, "update-ref", "refs/heads/"+RoadmapBranch, side)
	h.commit("a.txt", "person\n", "person edits a")
	out, err = act[SyncOutput](h, h.a.SyncRoadmap, in)
	require.NoError(t, err)
	require.Equal(t, SyncConflict, out.Action)
	require.Equal(t, []string{"a.txt"}, out.Conflict)
	require.Equal(t, side, roadmapTip())
}

func TestAdvanceRoadmapWithRun(t *testing.T) {
	h := newGitHarness(t)
	_, err := act[SyncOutput](h, h.a.SyncRoadmap, RoadmapInput{Repo: h.repo, Base: "main"})
	require.NoError(t, err)
	h.git(h.repo, "checkout", "-q", "-b", "horizon/run-1")
	runTip := h.commit("f1.txt", "f1\n", "f1")
	h.git(h.repo, "checkout", "-q", "main")

	tip, err := act[string](h, h.a.AdvanceRoadmap, AdvanceInput{Repo: h.repo, From: h.base, Run: "run-1"})
	require.NoError(t, err)
	require.Equal(t, runTip, tip)
	require.Equal(t, h.base, h.git(h.repo, "rev-parse", "main"), "the person's branch is never touched")

	// A stale From that is not behind the new tip is refused.
	h.git(h.repo, "checkout", "-q", "-b", "other", h.base)
	other := h.commit("x.txt", "x\n", "x")
	h.git(h.repo, "checkout", "-q", "main")
	_, err = act[string](h, h.a.AdvanceRoadmap, AdvanceInput{Repo: h.repo, From: h.base, To: other})
	require.ErrorContains(t, err, "someone else wrote it")

	_, err = act[string](h, h.a.AdvanceRoadmap, AdvanceInput{Repo: h.repo, From: runTip, Run: "missing"})
	require.ErrorContains(t, err, "horizon/missing")
}
