package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// A retried session whose heartbeat names another worker's session is a
// move: the new brief is the old one plus what the lane holds, and the
// note names both sessions and the lost worker. A heartbeat from this
// worker (a restart of the same home) or without a worker is no move.
func TestSessionMoved(t *testing.T) {
	a := &Activities{Identity: "horizon@b:2"}
	require.True(t, a.movedFrom(SessionHeartbeat{SessionID: "ses_1", Worker: "horizon@a:1"}))
	require.False(t, a.movedFrom(SessionHeartbeat{SessionID: "ses_1", Worker: "horizon@b:2"}))
	require.False(t, a.movedFrom(SessionHeartbeat{SessionID: "ses_1"}))
	require.False(t, a.movedFrom(SessionHeartbeat{Worker: "horizon@a:1"}))
	require.Equal(t, "session moved: ses_1 → ses_2 (worker horizon@a:1 lost)", movedNote("ses_1", "ses_2", "horizon@a:1"))

	lane := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "base"}} {
		_, err := git(context.Background(), lane, args...)
		require.NoError(t, err)
	}
	base, err := git(context.Background(), lane, "rev-parse", "HEAD")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(lane, "half.sh"), []byte("echo half\n"), 0o644))
	brief := movedBrief(context.Background(), "# Task (attempt 1)\nDo it.", lane, base, SessionHeartbeat{SessionID: "ses_1", Worker: "horizon@a:1"})
	require.Contains(t, brief, "# Task (attempt 1)\nDo it.")
	require.Contains(t, brief, "worker horizon@a:1, which was lost")
	require.Contains(t, brief, "?? half.sh")
}

// A worker that cannot see a path every worker must share fails with a
// retryable error naming the path, so Temporal retries elsewhere.
func TestMustSee(t *testing.T) {
	a := &Activities{Identity: "horizon@b:2"}
	require.NoError(t, a.mustSee("repository", t.TempDir()))
	err := a.mustSee("repository", "/nonexistent/repo")
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, ErrTypeCannotSee, ae.Type())
	require.False(t, ae.NonRetryable())
	require.Contains(t, err.Error(), "/nonexistent/repo")
	require.Contains(t, err.Error(), "horizon@b:2")
}
