package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
)

// `horizon demo` is a planned run against its own scripted model, whatever
// run.planned says (the world sets it false): the lead plans two features,
// f1 is accepted at once, f2's auditor rejects once and the next attempt,
// whose brief carries the finding, is accepted; one commit per feature
// lands on horizon/<run>, each inside its feature's paths.
func TestDemoRunsAPlannedRun(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{}) // the demo serves its own model
	dir := filepath.Join(t.TempDir(), "demo")

	out, code := w.run(context.Background(), "demo", "--dir", dir)
	require.Equal(t, 0, code, out)
	for _, want := range []string{
		"planned, autonomy full",
		"plan: 2 milestones, 2 features, ambiguity LOW",
		"f1 accepted after 1 attempt ",
		"f2 attempt 1 audit reject; [concern] no case adds numbers of opposite signs",
		"f2 accepted after 2 attempts",
		"integration gate on horizon/",
		"features 2 of 2 accepted",
		"+check -4 6 2",
		// It ends saying what still runs, how to stop it, and where next.
		"daemon (with its OpenCode server, about 770 MB) is still running",
		"`horizon stop` stops it",
		"horizon console",
		"User Metadata tab holds the plan table",
	} {
		require.Contains(t, out, want)
	}
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)

	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.NotNil(t, s.Plan)
	f2, ok := s.Plan.Feature("f2")
	require.True(t, ok)
	require.Len(t, f2.Attempts, 2)
	require.Equal(t, horizon.OutcomeRejected, f2.Attempts[0].Outcome)
	require.Equal(t, horizon.OutcomeAccepted, f2.Attempts[1].Outcome)

	commits := strings.Fields(git(t, dir, "rev-list", "--reverse", "main..horizon/"+id))
	require.Len(t, commits, 2, "one commit per feature")
	for i, want := range []string{"add.sh", "tests/test_add.sh"} {
		require.Equal(t, want, git(t, dir, "diff-tree", "--no-commit-id", "--name-only", "-r", commits[i]))
	}
	require.Contains(t, git(t, dir, "show", "main:add.sh"), "$(( $1 - $2 ))", "the user's branch moved")
	require.Empty(t, git(t, dir, "status", "--porcelain"))
}
