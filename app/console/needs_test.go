package console

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

func TestNeeds(t *testing.T) {
	single := func(change func(*horizon.RunState)) *horizon.RunState {
		s := &horizon.RunState{RunID: "run-1", Status: horizon.StatusRunning, Phase: horizon.PhaseWorking}
		change(s)
		return s
	}
	tests := []struct {
		name  string
		open  bool
		state *horizon.RunState
		want  []Need
	}{
		{name: "working: nothing", open: true, state: single(func(*horizon.RunState) {})},
		{name: "a blocked one-feature run", open: true, state: single(func(s *horizon.RunState) {
			s.Status, s.Blocker = horizon.StatusBlocked, &horizon.Blocker{Type: "unavailable_service", Evidence: "503\nfrom the API"}
		}), want: []Need{{Kind: NeedBlocker, RunID: "run-1", What: "unavailable_service: 503 from the API", Command: `horizon unblock run-1 --note "..."`}}},
		{name: "at its spend ceiling", open: true, state: single(func(s *horizon.RunState) {
			s.Phase, s.Reason = horizon.PhasePaused, "spend ceiling $1.0000 reached ($1.0200 spent); raise it with `horizon set-ceiling run-1 USD`"
		}), want: []Need{{Kind: NeedCeiling, RunID: "run-1", What: "spend ceiling $1.0000 reached ($1.0200 spent); raise it with `horizon set-ceiling run-1 USD`", Command: "horizon set-ceiling run-1 USD"}}},
		{name: "paused by a person: not a need", open: true, state: single(func(s *horizon.RunState) {
			s.Phase, s.Paused = horizon.PhasePaused, true
		})},
		{name: "waiting for the plan's approval", open: true, state: single(func(s *horizon.RunState) {
			s.Waiting = &horizon.Checkpoint{Kind: horizon.CheckpointPlan, Subject: "plan", Summary: "the plan (ambiguity HIGH): 3 milestones, 7 features"}
		}), want: []Need{{Kind: NeedApproval, RunID: "run-1", Subject: "plan", What: "the plan (ambiguity HIGH): 3 milestones, 7 features", Command: "horizon approve run-1 --subject plan"}}},
		{name: "a checkpoint without a summary", open: true, state: single(func(s *horizon.RunState) {
			s.Waiting = &horizon.Checkpoint{Kind: horizon.CheckpointFeature, Subject: "f3"}
		}), want: []Need{{Kind: NeedApproval, RunID: "run-1", Subject: "f3", What: "feature f3", Command: "horizon approve run-1 --subject f3"}}},
		{name: "closed: nobody is needed", open: false, state: single(func(s *horizon.RunState) {
			s.Status, s.Blocker = horizon.StatusBlocked, &horizon.Blocker{Type: "platform_limit"}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Needs([]RunRow{{ID: "run-1", Status: status(tt.open)}}, map[string]*horizon.RunState{"run-1": tt.state}, nil)
			require.Equal(t, tt.want, got)
		})
	}
}

// Approvals come first, then blockers, then stalls, whatever the order of
// the runs.
func TestNeedsOrder(t *testing.T) {
	f := newFake()
	var kinds []NeedKind
	for _, n := range Needs(orderRows(f.rows), f.states, nil) {
		kinds = append(kinds, n.Kind)
	}
	require.Equal(t, []NeedKind{NeedApproval, NeedBlocker, NeedStalled}, kinds)
}

// status is the engine's word for a run open or closed.
func status(open bool) string {
	if open {
		return core.EngineRunning
	}
	return core.EngineCompleted
}
