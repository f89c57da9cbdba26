package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
)

// A run's lanes go with their worktrees and lane branches, a second
// time is a no-op, and the integration branch and the user's branch stay.
func TestRemoveLanes(t *testing.T) {
	tests := []struct {
		name string
		// repo passes the repository (false: found from the lanes).
		repo bool
		// dirty leaves uncommitted work in a lane.
		dirty bool
	}{
		{"with the repository", true, false},
		{"repository found from the lanes", false, false},
		{"dirty lane", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			f1 := h.prepareLane(h.laneInput("f1", false))
			h.prepareLane(h.laneInput("f2", false))
			_, err := h.prepareIntegration()
			require.NoError(t, err)
			if tt.dirty {
				h.write(f1.Path, "wip.txt", "half done\n")
			}
			// Another run's lane must survive.
			other := h.laneInput("f1", false)
			other.RunID = "r2"
			otherLane := h.prepareLane(other)

			in := RemoveLanesInput{RunID: testRun}
			if tt.repo {
				in.Repo = h.repo
			}
			v, err := h.env.ExecuteActivity(h.a.RemoveLanes, in)
			require.NoError(t, err)
			var out RemoveLanesOutput
			require.NoError(t, v.Get(&out))
			require.Equal(t, filepath.Join(h.a.Home, "lanes", testRun), out.Dir)
			require.ElementsMatch(t, []string{horizon.LaneBranch(testRun, "f1"), horizon.LaneBranch(testRun, "f2")}, out.Branches)

			_, err = os.Stat(out.Dir)
			require.True(t, os.IsNotExist(err), "the run's lane directory is gone")
			require.Empty(t, h.git(h.repo, "branch", "--list", horizon.LaneBranch(testRun, "*")))
			require.NotContains(t, h.git(h.repo, "worktree", "list"), filepath.Join("lanes", testRun))
			require.Equal(t, h.base, h.git(h.repo, "rev-parse", horizon.IntegrationBranch(testRun)), "the result stays")
			require.Equal(t, h.base, h.git(h.repo, "rev-parse", "main"))
			require.DirExists(t, otherLane.Path)
			require.NotEmpty(t, h.git(h.repo, "branch", "--list", horizon.LaneBranch("r2", "f1")))

			// Retried (or run again): nothing left, no error.
			v, err = h.env.ExecuteActivity(h.a.RemoveLanes, RemoveLanesInput{RunID: testRun, Repo: h.repo})
			require.NoError(t, err)
			var again RemoveLanesOutput
			require.NoError(t, v.Get(&again))
			require.True(t, again.Empty(), "%+v", again)
		})
	}
}

// A dry run reports and removes nothing; a repository that is gone leaves
// only the directory to remove.
func TestRemoveRunLanesDryAndGoneRepo(t *testing.T) {
	h := newGitHarness(t)
	lane := h.prepareLane(h.laneInput("f1", false))

	out, err := RemoveRunLanes(context.Background(), h.a.Home, RemoveLanesInput{RunID: testRun, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, []string{horizon.LaneBranch(testRun, "f1")}, out.Branches)
	require.NotEmpty(t, out.Repo)
	require.DirExists(t, lane.Path)
	require.NotEmpty(t, h.git(h.repo, "branch", "--list", horizon.LaneBranch(testRun, "f1")))

	require.NoError(t, os.RemoveAll(h.repo))
	out, err = RemoveRunLanes(context.Background(), h.a.Home, RemoveLanesInput{RunID: testRun, Repo: h.repo})
	require.NoError(t, err)
	require.Empty(t, out.Repo)
	require.NoDirExists(t, filepath.Dir(lane.Path))
}

// Names that are not a run's are refused, never resolved to a path.
func TestRemoveLanesBadInput(t *testing.T) {
	h := newGitHarness(t)
	for _, id := range []string{"", "..", "../x", "a/b", "_supervisor", ".hidden"} {
		_, err := h.env.ExecuteActivity(h.a.RemoveLanes, RemoveLanesInput{RunID: id, Repo: h.repo})
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app, id)
		require.Equal(t, ErrTypeBadInput, app.Type(), id)
		require.ErrorContains(t, err, "is not a run ID")
	}
	_, err := RemoveRunLanes(context.Background(), "", RemoveLanesInput{RunID: testRun})
	require.ErrorContains(t, err, "no horizon home")
}
