package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/ladder"
)

// Each model tier carries the explore and research roles' best models of
// its cost class: local ones at T1, metered ones at T3 and T4, none when
// the class has no model ranked for the role (the tier's own model serves).
func TestAvailabilityResolvesExploreAndResearchPerTier(t *testing.T) {
	lb, err := ladder.ParseLeaderboard([]byte(`{"revision": 1, "models": [
	  {"name": "big", "routes": ["cloud/big"], "roles": {"build": {"rank": 1}, "lead": {"rank": 1}}, "capabilities": {"cost": "high"}},
	  {"name": "opus", "routes": ["cloud/opus"], "roles": {"lead": {"rank": 2}, "research": {"rank": 1}}, "capabilities": {"cost": "high"}},
	  {"name": "finder", "routes": ["cloud/finder"], "roles": {"explore": {"rank": 1}}, "capabilities": {"cost": "low"}},
	  {"name": "coder", "routes": ["local/coder"], "roles": {"build": {"rank": 2}, "research": {"rank": 2}}, "capabilities": {"cost": "local"}},
	  {"name": "scout", "routes": ["local/scout"], "roles": {"explore": {"rank": 2}}, "capabilities": {"cost": "local"}}
	]}`))
	require.NoError(t, err)
	all := []string{"cloud/big", "cloud/opus", "cloud/finder", "local/coder", "local/scout"}
	tests := []struct {
		name      string
		connected []string
		want      map[ladder.Tier][2]string // tier: explore, research
	}{
		{"every role connected", all, map[ladder.Tier][2]string{
			ladder.T1: {"local/scout", "local/coder"},
			ladder.T3: {"cloud/finder", "cloud/opus"},
		}},
		{"no local explore model", []string{"cloud/big", "cloud/opus", "local/coder"}, map[ladder.Tier][2]string{
			ladder.T1: {"", "local/coder"},
			ladder.T3: {"", "cloud/opus"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			av := (&Activities{}).availability(lb, "", tt.connected)
			for tier, w := range tt.want {
				require.True(t, av[tier].Available, "%s: %s", tier, av[tier].Reason)
				require.Equal(t, w[0], av[tier].Explore, "%s explore", tier)
				require.Equal(t, w[1], av[tier].Research, "%s research", tier)
			}
			if av[ladder.T4].Available {
				require.Equal(t, av[ladder.T3].Explore, av[ladder.T4].Explore, "the metered tiers share the metered choice")
			}
		})
	}

	forced := (&Activities{}).availability(lb, "local/coder", nil)
	require.Empty(t, forced[ladder.T1].Explore, "--model forces one model for every step")
}
