package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/horizon"
)

const testRun = "r1"

// gitHarness is a repository with one commit and an Activities whose home
// is a temp dir; activities that log run in a Temporal test environment.
type gitHarness struct {
	t    *testing.T
	repo string
	base string
	a    *Activities
	env  *testsuite.TestActivityEnvironment
}

func newGitHarness(t *testing.T) *gitHarness {
	t.Helper()
	h := &gitHarness{t: t, repo: t.TempDir(), a: &Activities{Home: t.TempDir()}}
	h.git(h.repo, "init", "-q", "-b", "main")
	h.write(h.repo, "README.md", "# repo\n")
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", "init")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	var s testsuite.WorkflowTestSuite
	h.env = s.NewTestActivityEnvironment()
	h.env.RegisterActivity(h.a)
	return h
}

func (h *gitHarness) git(dir string, args ...string) string {
	h.t.Helper()
	out, err := git(context.Background(), dir, args...)
	require.NoError(h.t, err)
	return out
}

func (h *gitHarness) write(dir, name, body string) {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
	require.NoError(h.t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
}

func (h *gitHarness) laneInput(feature string, fromIntegration bool) LaneInput {
	return LaneInput{RunID: testRun, Feature: feature, Repo: h.repo, BaseCommit: h.base, FromIntegration: fromIntegration}
}

func (h *gitHarness) prepareLane(in LaneInput) Lane {
	h.t.Helper()
	v, err := h.env.ExecuteActivity(h.a.PrepareLane, in)
	require.NoError(h.t, err)
	var lane Lane
	require.NoError(h.t, v.Get(&lane))
	return lane
}

func (h *gitHarness) prepareIntegration() (Lane, error) {
	h.t.Helper()
	v, err := h.env.ExecuteActivity(h.a.PrepareIntegration, IntegrationInput{RunID: testRun, Repo: h.repo})
	if err != nil {
		return Lane{}, err
	}
	var lane Lane
	require.NoError(h.t, v.Get(&lane))
	return lane, nil
}

// land writes a file in the feature's lane and lands it on the integration
// branch with CommitFeature; it returns the integration branch's new tip.
func (h *gitHarness) land(feature string, lane Lane, file, body string) string {
	h.t.Helper()
	h.write(lane.Path, file, body)
	v, err := h.env.ExecuteActivity(h.a.CommitFeature, CommitInput{
		RunID: testRun, Feature: feature, Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: lane.Base, Message: "add " + file,
	})
	require.NoError(h.t, err)
	var out CommitOutput
	require.NoError(h.t, v.Get(&out))
	require.Equal(h.t, out.Commit, h.tip())
	return out.Commit
}

func (h *gitHarness) tip() string {
	h.t.Helper()
	return h.git(h.repo, "rev-parse", "refs/heads/"+horizon.IntegrationBranch(testRun))
}

func TestPrepareLaneBase(t *testing.T) {
	tests := []struct {
		name string
		// run prepares lanes and returns the last one with the base it
		// must report.
		run func(h *gitHarness) (Lane, string)
	}{
		{name: "new lane at the base commit", run: func(h *gitHarness) (Lane, string) {
			return h.prepareLane(h.laneInput("f1", false)), h.base
		}},
		{name: "new planned lane before anything landed", run: func(h *gitHarness) (Lane, string) {
			return h.prepareLane(h.laneInput("f1", true)), h.base
		}},
		{name: "planned lane cut from the integration tip after a commit landed", run: func(h *gitHarness) (Lane, string) {
			tip := h.land("f1", h.prepareLane(h.laneInput("f1", true)), "one.txt", "1\n")
			require.NotEqual(t, h.base, tip)
			lane := h.prepareLane(h.laneInput("f2", true))
			require.FileExists(t, filepath.Join(lane.Path, "one.txt"), "f2 builds on f1")
			return lane, tip
		}},
		{name: "non-planned lane ignores the integration tip", run: func(h *gitHarness) (Lane, string) {
			h.land("f1", h.prepareLane(h.laneInput("f1", true)), "one.txt", "1\n")
			lane := h.prepareLane(h.laneInput("f2", false))
			require.NoFileExists(t, filepath.Join(lane.Path, "one.txt"))
			return lane, h.base
		}},
		{name: "existing lane keeps the base it was cut from", run: func(h *gitHarness) (Lane, string) {
			first := h.prepareLane(h.laneInput("f2", true))
			h.land("f1", h.prepareLane(h.laneInput("f1", true)), "one.txt", "1\n")
			again := h.prepareLane(h.laneInput("f2", true)) // a retry after the integration branch moved
			require.Equal(t, first.Path, again.Path)
			return again, first.Base
		}},
		{name: "existing lane whose head carries the feature trailer", run: func(h *gitHarness) (Lane, string) {
			lane := h.prepareLane(h.laneInput("f1", true))
			h.land("f1", lane, "one.txt", "1\n")
			require.NotEqual(t, h.base, h.git(lane.Path, "rev-parse", "HEAD"), "CommitFeature committed on the lane")
			return h.prepareLane(h.laneInput("f1", true)), h.base
		}},
		{name: "lane branch without its worktree (resumed run), head carries the trailer", run: func(h *gitHarness) (Lane, string) {
			lane := h.prepareLane(h.laneInput("f1", true))
			h.land("f1", lane, "one.txt", "1\n")
			require.NoError(t, os.RemoveAll(lane.Path))
			return h.prepareLane(h.laneInput("f1", true)), h.base
		}},
		{name: "a trailer of another feature is not this lane's", run: func(h *gitHarness) (Lane, string) {
			lane := h.prepareLane(h.laneInput("f1", false))
			h.write(lane.Path, "x.txt", "x\n")
			h.git(lane.Path, "add", ".")
			h.git(lane.Path, "commit", "-q", "-m", "x\n\nHorizon-Feature: "+testRun+"/f10\n")
			return h.prepareLane(h.laneInput("f1", false)), h.git(lane.Path, "rev-parse", "HEAD")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			lane, want := tt.run(h)
			require.Equal(t, want, lane.Base)
			require.Equal(t, lane.Branch, h.git(lane.Path, "rev-parse", "--abbrev-ref", "HEAD"))
			require.Len(t, lane.Base, 40, "a full commit ID")
		})
	}
}

func TestPrepareLaneNewLaneHeadIsBase(t *testing.T) {
	h := newGitHarness(t)
	tip := h.land("f1", h.prepareLane(h.laneInput("f1", true)), "one.txt", "1\n")
	lane := h.prepareLane(h.laneInput("f2", true))
	require.Equal(t, tip, h.git(lane.Path, "rev-parse", "HEAD"))
	require.Equal(t, lane.Branch, h.git(lane.Path, "rev-parse", "--abbrev-ref", "HEAD"))
}

func TestPrepareIntegration(t *testing.T) {
	tests := []struct {
		name string
		// leave makes the mess an earlier run left behind.
		leave func(h *gitHarness, dir string)
	}{
		{name: "first use"},
		{name: "dirty tree and untracked files", leave: func(h *gitHarness, dir string) {
			h.write(dir, "README.md", "edited by a gate run\n")
			h.write(dir, "one.txt", "staged change\n")
			h.git(dir, "add", "one.txt")
			h.write(dir, "out/coverage.txt", "leftover\n")
		}},
		{name: "failed cherry-pick", leave: func(h *gitHarness, dir string) {
			// A commit that conflicts with one.txt on the branch.
			w := filepath.Join(filepath.Dir(dir), "conflict")
			h.git(h.repo, "worktree", "add", "-q", "--detach", w, h.base)
			h.write(w, "one.txt", "conflicting\n")
			h.git(w, "add", ".")
			h.git(w, "commit", "-q", "-m", "conflict")
			c := h.git(w, "rev-parse", "HEAD")
			_, err := git(context.Background(), dir, "cherry-pick", c)
			require.Error(h.t, err)
			require.True(h.t, gitOK(context.Background(), dir, "rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"))
		}},
		{name: "stale directory that is not a worktree", leave: func(h *gitHarness, dir string) {
			require.NoError(h.t, os.RemoveAll(dir))
			h.write(dir, "junk.txt", "half made\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			_, err := h.prepareIntegration()
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, ErrTypeBadInput, appErr.Type())
			require.ErrorContains(t, err, horizon.IntegrationBranch(testRun))

			h.land("f1", h.prepareLane(h.laneInput("f1", true)), "one.txt", "1\n")
			first, err := h.prepareIntegration()
			require.NoError(t, err)
			if tt.leave != nil {
				tt.leave(h, first.Path)
			}
			// The branch moves on after the mess was left.
			tip := h.land("f2", h.prepareLane(h.laneInput("f2", true)), "two.txt", "2\n")

			lane, err := h.prepareIntegration()
			require.NoError(t, err)
			require.Equal(t, filepath.Join(h.a.lanesDir(), testRun, "_integration"), lane.Path)
			require.Equal(t, horizon.IntegrationBranch(testRun), lane.Branch)
			require.Equal(t, tip, lane.Base)
			require.Equal(t, tip, h.git(lane.Path, "rev-parse", "HEAD"))
			require.Empty(t, h.git(lane.Path, "status", "--porcelain", "--untracked-files=all"))
			require.False(t, gitOK(context.Background(), lane.Path, "rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"))
			require.FileExists(t, filepath.Join(lane.Path, "two.txt"))
			require.NoFileExists(t, filepath.Join(lane.Path, "junk.txt"))
		})
	}
}

func TestHasTrailer(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{"fix\n\nHorizon-Run: r1\nHorizon-Feature: r1/f1\nHorizon-Attempt: 2", true},
		{"fix\n\nHorizon-Feature: r1/f10", false},
		{"mentions Horizon-Feature: r1/f1 in prose", false},
		{"", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, hasTrailer(tt.msg, "Horizon-Feature: r1/f1"), tt.msg)
	}
}

// An accepted lane with no change is a feature already done: the branch's
// tip is cited, nothing is committed, and the next feature lands normally.
func TestCommitFeatureAlreadyDone(t *testing.T) {
	h := newGitHarness(t)
	lane := h.prepareLane(h.laneInput("f1", true))
	_, err := h.prepareIntegration()
	require.NoError(t, err)
	before := h.tip()
	v, err := h.env.ExecuteActivity(h.a.CommitFeature, CommitInput{
		RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: lane.Base, Message: "nothing",
	})
	require.NoError(t, err)
	var out CommitOutput
	require.NoError(t, v.Get(&out))
	require.True(t, out.AlreadyDone)
	require.Equal(t, before, out.Commit)
	require.Empty(t, out.Files)
	require.Equal(t, before, h.tip(), "nothing landed")

	tip := h.land("f2", h.prepareLane(h.laneInput("f2", true)), "two.txt", "2\n")
	require.NotEqual(t, before, tip)
}
