package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNeedsApproval(t *testing.T) {
	high, low := Plan{Ambiguity: AmbiguityHigh}, Plan{Ambiguity: AmbiguityLow}
	medium := Plan{Ambiguity: AmbiguityMedium}
	tests := []struct {
		point      CheckpointKind
		plan       Plan
		full, semi bool
		supervised bool
	}{
		{point: CheckpointPlan, plan: high, semi: true, supervised: true},
		{point: CheckpointPlan, plan: medium},
		{point: CheckpointPlan, plan: low},
		{point: CheckpointMilestone, plan: low, semi: true, supervised: true},
		{point: CheckpointFeature, plan: low, supervised: true},
		{point: CheckpointFeature, plan: high, supervised: true},
		{point: "later", plan: low, semi: true, supervised: true}, // unknown checkpoint: wait, except in full
	}
	for _, tt := range tests {
		require.Equal(t, tt.full, AutonomyFull.NeedsApproval(tt.point, tt.plan), "full %s %s", tt.point, tt.plan.Ambiguity)
		require.Equal(t, tt.semi, AutonomySemi.NeedsApproval(tt.point, tt.plan), "semi %s %s", tt.point, tt.plan.Ambiguity)
		require.Equal(t, tt.supervised, AutonomySupervised.NeedsApproval(tt.point, tt.plan), "supervised %s %s", tt.point, tt.plan.Ambiguity)
		require.Equal(t, tt.supervised, Autonomy("bogus").NeedsApproval(tt.point, tt.plan), "unknown level acts as supervised")
		// Monotonic: each level waits wherever the looser one does.
		if tt.full {
			require.True(t, tt.semi)
		}
		if tt.semi {
			require.True(t, tt.supervised)
		}
	}
}

func TestParseAutonomy(t *testing.T) {
	for in, want := range map[string]Autonomy{"": AutonomyFull, " Full ": AutonomyFull, "SEMI": AutonomySemi, "supervised": AutonomySupervised} {
		got, err := ParseAutonomy(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.True(t, got.Valid())
	}
	_, err := ParseAutonomy("yolo")
	require.ErrorContains(t, err, `autonomy "yolo" is not one of full|semi|supervised`)
	require.False(t, Autonomy("yolo").Valid())
}
