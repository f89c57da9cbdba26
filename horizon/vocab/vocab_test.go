package vocab

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every session role but the reader uses a leaderboard role's models;
// every leaderboard role is its own; nothing else is a role.
func TestLeaderboardRole(t *testing.T) {
	want := map[Role]Role{
		RoleWorker: RoleBuild, RoleAuditor: RoleAnalyze, RoleLead: RoleLead, RoleExplorer: RoleExplore,
		RoleQuick: RoleQuick, RoleBuild: RoleBuild, RoleExplore: RoleExplore, RoleAnalyze: RoleAnalyze, RoleResearch: RoleResearch,
	}
	for _, r := range Roles() {
		got, ok := r.Leaderboard()
		if r == RoleReader {
			require.False(t, ok, "the reader is configured on its own")
			continue
		}
		require.True(t, ok, r)
		require.Equal(t, want[r], got, r)
	}
	for _, r := range []Role{"planner", "Build", ""} {
		_, ok := r.Leaderboard()
		require.False(t, ok, r)
	}
	require.Subset(t, Roles(), LeaderboardRoles())
}

// A kind decodes from a JSON string only; another JSON value names the
// field and wants a string.
func TestFeatureKindJSON(t *testing.T) {
	var f struct {
		Kind FeatureKind `json:"kind"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"open"}`), &f))
	require.Equal(t, KindOpen, f.Kind)
	require.NoError(t, json.Unmarshal([]byte(`{"kind":null}`), &f))
	require.Equal(t, KindOpen, f.Kind, "null leaves it as it is")
	for in, kind := range map[string]string{`{"kind":3}`: "number", `{"kind":["open"]}`: "array", `{"kind":{}}`: "object", `{"kind":true}`: "bool"} {
		err := json.Unmarshal([]byte(in), &f)
		var te *json.UnmarshalTypeError
		require.ErrorAs(t, err, &te, in)
		require.Equal(t, kind, te.Value)
		require.Equal(t, "kind", te.Field)
		require.Contains(t, err.Error(), "string")
	}
}
