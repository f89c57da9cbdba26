package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// A run removes its lanes when it ends: always when it completed, when it
// did not only if run.keep_failed_lanes is 0 (DropFailedLanes).
func TestLanesRemovedAtTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		pass   bool
		drop   bool
		status horizon.Status
		remove bool
	}{
		{"completed", true, false, horizon.StatusCompleted, true},
		{"failed, kept", false, false, horizon.StatusFailed, false},
		{"failed, keep 0", false, true, horizon.StatusFailed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var removed []activities.RemoveLanesInput
			e.OnActivity(a.RemoveLanes, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RemoveLanesInput) (activities.RemoveLanesOutput, error) {
				removed = append(removed, in)
				return activities.RemoveLanesOutput{}, nil
			}).Maybe()
			in := input()
			in.MaxAttempts, in.DropFailedLanes = 1, tt.drop
			if tt.pass {
				e.sessions([]activities.SessionOutput{satisfied}, []activities.SessionOutput{accept})
				e.gates("pass")
				e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456", Branch: "horizon/run-1"}, nil).Once()
			} else {
				e.sessions([]activities.SessionOutput{satisfied}, nil)
				e.gates("fail")
			}
			e.ExecuteWorkflow(SingleRunWorkflow, in)
			s, _ := result(t, e)
			require.Equal(t, tt.status, s.Status)
			if !tt.remove {
				require.Empty(t, removed)
				return
			}
			require.Equal(t, []activities.RemoveLanesInput{{RunID: "run-1", Repo: "/repo"}}, removed)
		})
	}
}
