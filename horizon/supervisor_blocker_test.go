package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A merge conflict holds a queued item without moving its stage: the
// roadmap shows it blocked, with the typed blocker, until it is lifted.
func TestRoadmapStatusShowsAnItemHeldByAMergeConflict(t *testing.T) {
	rm, err := ParseRoadmap(".horizon/roadmap.md", "- [ ] Held {#held}\n- [ ] Free {#free}\n")
	require.NoError(t, err)
	var q Queue
	e, err := q.Add(QueueEntry{Kind: EntryGoal, Goal: "Held"})
	require.NoError(t, err)
	b := &Blocker{Type: BlockerMergeConflict, Evidence: "main does not merge into horizon/roadmap (conflict in a.go)"}
	tests := []struct {
		name    string
		blocker *Blocker
		want    ItemState
	}{
		{name: "held", blocker: b, want: ItemBlocked},
		{name: "lifted", want: ItemQueued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := ItemRecords{}.Record(ItemRecord{Item: "held", Stage: StageQueued, Entry: e.ID})
			require.NoError(t, err)
			recs, err = recs.Record(ItemRecord{Item: "held", Stage: StageQueued, Blocker: tt.blocker, Reason: "blocked"})
			require.NoError(t, err, "the blocker comes and goes without a stage move")
			rows := RoadmapStatus(rm, recs, q)
			require.Equal(t, tt.want, rows[0].State)
			require.Equal(t, tt.blocker, rows[0].Blocker)
			require.Equal(t, e.ID, rows[0].Entry, "the entry is kept")
			require.Equal(t, ItemUnplanned, rows[1].State)
		})
	}
}

func TestSupervisorMarkdownShowsItsBlocker(t *testing.T) {
	s := SupervisorState{Repo: "/r", Status: SupervisorRunning, Blocker: &SupervisorBlocker{
		Blocker: Blocker{Type: BlockerMergeConflict, Evidence: "main does not merge into horizon/roadmap (conflict in a.go)"},
		Branch:  "main", Paths: []string{"a.go"}, Lift: "merge it by hand",
	}}
	require.Contains(t, s.Markdown(), "**blocked** `merge_conflict`")
	require.Contains(t, s.Markdown(), "conflict in a.go")
	require.Equal(t, "blocked (merge_conflict): main does not merge into horizon/roadmap (conflict in a.go); merge it by hand", s.Blocker.Text())
}
