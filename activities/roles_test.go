package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// TestRolesMatchLeaderboard: horizon declares the leaderboard's roles for
// the layers that route work, and the ladder spells them again to parse
// models.json (it imports nothing of the module). The activities are
// where the two meet, so this is where a drift would break a run.
func TestRolesMatchLeaderboard(t *testing.T) {
	var want []string
	for _, r := range horizon.LeaderboardRoles() {
		want = append(want, string(r))
	}
	require.Equal(t, want, ladder.Roles())

	for role, lb := range map[horizon.Role]horizon.Role{
		horizon.RoleWorker:  horizon.RoleBuild,
		horizon.RoleAuditor: horizon.RoleAnalyze,
		horizon.RoleLead:    horizon.RoleLead,
	} {
		got, ok := ladder.CanonicalRole(string(role))
		require.True(t, ok, "the leaderboard does not know role %s", role)
		require.Equal(t, string(lb), got, "role %s", role)
	}
	for _, r := range horizon.LeaderboardRoles() {
		parsed, err := horizon.ParseRole(string(r))
		require.NoError(t, err)
		require.Equal(t, r, parsed)
	}
}
