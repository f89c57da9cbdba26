package horizon

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

const fiveItems = `# Roadmap
- [ ] One {#one}
- [x] Two, done by hand {#two}
- [ ] Three {#three}
- [ ] Four {#four}
- [ ] Five {#five}
`

func mustRoadmap(t *testing.T, text string) Roadmap {
	t.Helper()
	rm, err := ParseRoadmap("r.md", text)
	require.NoError(t, err)
	return rm
}

func mustRecord(t *testing.T, rs ItemRecords, r ItemRecord) ItemRecords {
	t.Helper()
	out, err := rs.Record(r)
	require.NoError(t, err)
	return out
}

func itemIDs(its []RoadmapItem) []string {
	out := []string{}
	for _, it := range its {
		out = append(out, it.ID)
	}
	return out
}

func TestNextToDecompose(t *testing.T) {
	rm := mustRoadmap(t, fiveItems)
	var q Queue
	var rs ItemRecords

	require.Equal(t, []string{"one", "three"}, itemIDs(NextToDecompose(rm, rs, q, 2)), "top to bottom, ticked items skipped")
	require.Equal(t, []string{"one"}, itemIDs(NextToDecompose(rm, rs, q, 0)), "at least one when the queue drains")

	// "one" is being decomposed: one plan is (nearly) ready.
	rs = mustRecord(t, rs, ItemRecord{Item: "one", Title: "One", Stage: StageDecomposing, At: at(0)})
	require.Equal(t, []string{"three"}, itemIDs(NextToDecompose(rm, rs, q, 2)))
	require.Empty(t, NextToDecompose(rm, rs, q, 1))

	// Its plan is queued: still one ready.
	p := samplePlan(t)
	e, err := q.Add(QueueEntry{Kind: EntryPlan, Plan: &p, Item: "one"})
	require.NoError(t, err)
	rs = mustRecord(t, rs, ItemRecord{Item: "one", Stage: StageQueued, Entry: e.ID, At: at(1)})
	require.Equal(t, []string{"three", "four"}, itemIDs(NextToDecompose(rm, rs, q, 3)))

	// It starts: nothing ready, so two more; "one" is never chosen again.
	_, _ = q.Pop()
	rs = mustRecord(t, rs, ItemRecord{Item: "one", Stage: StageRunning, RunID: "run-1", At: at(2)})
	require.Equal(t, []string{"three", "four"}, itemIDs(NextToDecompose(rm, rs, q, 2)))

	// A queued plan a person removed does not count as ready, and its
	// item is not taken again.
	rs = mustRecord(t, rs, ItemRecord{Item: "three", Stage: StageQueued, Entry: "q7", At: at(3)})
	require.Equal(t, []string{"four", "five"}, itemIDs(NextToDecompose(rm, rs, q, 2)))

	// Everything taken: nothing left.
	rs = mustRecord(t, rs, ItemRecord{Item: "four", Stage: StageDecomposing})
	rs = mustRecord(t, rs, ItemRecord{Item: "five", Stage: StageDecomposing})
	require.Empty(t, NextToDecompose(rm, rs, q, 5))
	require.Empty(t, NextToDecompose(Roadmap{}, nil, Queue{}, 2), "an empty roadmap")
}

// Editing an item's details or moving it keeps its record: it is not
// decomposed again.
func TestNextToDecomposeSurvivesEdits(t *testing.T) {
	rm := mustRoadmap(t, "- [ ] Add CSV export\n- [ ] Dark mode\n")
	rs := mustRecord(t, nil, ItemRecord{Item: RoadmapItemID("Add CSV export"), Stage: StageDecomposing})
	edited := mustRoadmap(t, "# New heading\n- [ ] Dark mode\n  with a detail\n- [ ] add csv export.\n  now with details\n")
	require.Equal(t, itemIDs(NextToDecompose(rm, rs, Queue{}, 3)), itemIDs(NextToDecompose(edited, rs, Queue{}, 3)))
	require.Equal(t, []string{RoadmapItemID("Dark mode")}, itemIDs(NextToDecompose(edited, rs, Queue{}, 3)))
}

func TestItemRecordsRecord(t *testing.T) {
	var rs ItemRecords
	rs = mustRecord(t, rs, ItemRecord{Item: " a ", Title: " Add\nCSV ", Stage: StageDecomposing, At: at(0)})
	rs = mustRecord(t, rs, ItemRecord{Item: "b", Title: "B", Stage: StageQueued, Entry: "q1"})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageQueued, Entry: "q2", At: at(1)})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageQueued, At: at(2)}) // a retried activity
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageRunning, RunID: "run-a", At: at(3)})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageStalled, Reason: "6 attempts since the last accepted feature"})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageRunning, RunID: "run-a"})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageBlocked, Reason: "f3 needs a credential"})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageRunning})
	rs = mustRecord(t, rs, ItemRecord{Item: "a", Stage: StageDone, At: at(9)})
	require.Equal(t, ItemRecords{
		{Item: "a", Title: "Add CSV", Stage: StageDone, Entry: "q2", RunID: "run-a", At: at(9)},
		{Item: "b", Title: "B", Stage: StageQueued, Entry: "q1"},
	}, rs)

	tests := []struct {
		name string
		r    ItemRecord
		want string
	}{
		{"decomposed twice", ItemRecord{Item: "b", Stage: StageDecomposing}, "decomposing cannot follow queued"},
		{"done runs again", ItemRecord{Item: "a", Stage: StageRunning, RunID: "run-a"}, "running cannot follow done"},
		{"done decomposed again", ItemRecord{Item: "a", Stage: StageDecomposing}, "decomposing cannot follow done"},
		{"run before a plan", ItemRecord{Item: "c", Stage: StageRunning, RunID: "r"}, "running cannot follow nothing"},
		{"done before a run", ItemRecord{Item: "b", Stage: StageDone}, "done cannot follow queued"},
		{"queued without entry", ItemRecord{Item: "c", Stage: StageQueued}, "queued without its queue entry"},
		{"running without run", ItemRecord{Item: "b", Stage: StageRunning}, "running without its run ID"},
		{"unknown stage", ItemRecord{Item: "b", Stage: "paused"}, `unknown stage "paused"`},
		{"no stage", ItemRecord{Item: "b"}, `unknown stage ""`},
		{"no item", ItemRecord{Stage: StageDecomposing}, "no item ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := rs.Record(tt.r)
			require.True(t, errors.Is(err, ErrItemStage), err)
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, rs, out, "a refused change leaves the records as they were")
		})
	}

	// A second run of an item is refused, whatever the stage.
	rs2 := mustRecord(t, nil, ItemRecord{Item: "x", Stage: StageQueued, Entry: "q1"})
	rs2 = mustRecord(t, rs2, ItemRecord{Item: "x", Stage: StageRunning, RunID: "run-1"})
	rs2 = mustRecord(t, rs2, ItemRecord{Item: "x", Stage: StageBlocked})
	_, err := rs2.Record(ItemRecord{Item: "x", Stage: StageRunning, RunID: "run-2"})
	require.ErrorContains(t, err, "it already ran as run-1 (an item runs once), not run-2")

	// Record never changes the slice it was called on.
	before := ItemRecords{{Item: "x", Stage: StageDecomposing}}
	after := mustRecord(t, before, ItemRecord{Item: "x", Stage: StageQueued, Entry: "q1"})
	require.Equal(t, StageDecomposing, before[0].Stage)
	require.Equal(t, StageQueued, after[0].Stage)
}

func TestRoadmapStatus(t *testing.T) {
	rm := mustRoadmap(t, `- [ ] Unplanned {#u}
- [x] Ticked by hand {#t}
- [ ] Being decomposed {#d}
- [ ] Queued {#q}
- [ ] Removed from the queue {#rm}
- [x] Running, then ticked {#r}
- [ ] Done {#done}
- [ ] Blocked {#b}
- [ ] Stalled {#s}
`)
	p := samplePlan(t)
	var q Queue
	e, err := q.Add(QueueEntry{Kind: EntryPlan, Plan: &p, Item: "q"})
	require.NoError(t, err)
	var rs ItemRecords
	for _, r := range []ItemRecord{
		{Item: "gone", Title: "Left the roadmap", Stage: StageQueued, Entry: "q9"},
		{Item: "d", Stage: StageDecomposing},
		{Item: "q", Stage: StageQueued, Entry: e.ID},
		{Item: "rm", Stage: StageQueued, Entry: "q5"},
		{Item: "r", Stage: StageQueued, Entry: "q2"},
		{Item: "r", Stage: StageRunning, RunID: "run-r"},
		{Item: "done", Stage: StageQueued, Entry: "q3"},
		{Item: "done", Stage: StageRunning, RunID: "run-done"},
		{Item: "done", Stage: StageDone},
		{Item: "b", Stage: StageQueued, Entry: "q4"},
		{Item: "b", Stage: StageRunning, RunID: "run-b"},
		{Item: "b", Stage: StageBlocked, Reason: "f3 needs a credential"},
		{Item: "s", Stage: StageQueued, Entry: "q6"},
		{Item: "s", Stage: StageRunning, RunID: "run-s"},
		{Item: "s", Stage: StageStalled, Reason: "same failing set three attempts in a row"},
	} {
		rs = mustRecord(t, rs, r)
	}
	require.Equal(t, []ItemStatus{
		{Item: "u", Title: "Unplanned", State: ItemUnplanned, Line: 1},
		{Item: "t", Title: "Ticked by hand", State: ItemDone, Line: 2, Ticked: true, Detail: "ticked in the roadmap"},
		{Item: "d", Title: "Being decomposed", State: ItemDecomposing, Line: 3, Detail: "being decomposed"},
		{Item: "q", Title: "Queued", State: ItemQueued, Line: 4, Entry: "q1"},
		{Item: "rm", Title: "Removed from the queue", State: ItemPlanned, Line: 5, Entry: "q5", Detail: "its plan q5 was removed from the queue"},
		{Item: "r", Title: "Running, then ticked", State: ItemRunning, Line: 6, Ticked: true, Entry: "q2", RunID: "run-r"},
		{Item: "done", Title: "Done", State: ItemDone, Line: 7, Entry: "q3", RunID: "run-done"},
		{Item: "b", Title: "Blocked", State: ItemBlocked, Line: 8, Entry: "q4", RunID: "run-b", Detail: "f3 needs a credential"},
		{Item: "s", Title: "Stalled", State: ItemStalled, Line: 9, Entry: "q6", RunID: "run-s", Detail: "same failing set three attempts in a row"},
		{Item: "gone", Title: "Left the roadmap", State: ItemPlanned, Entry: "q9", Detail: "its plan q9 was removed from the queue; no longer in the roadmap"},
	}, RoadmapStatus(rm, rs, q))
	require.Equal(t, []ItemStatus{}, RoadmapStatus(Roadmap{}, nil, Queue{}))
}

func TestStageForRun(t *testing.T) {
	tests := []struct {
		name   string
		s      RunState
		stage  ItemStage
		reason string
	}{
		{"completed", RunState{RunID: "r", Status: StatusCompleted}, StageDone, ""},
		{"ended blocked", RunState{RunID: "r", Status: StatusBlocked, Reason: "every feature left is blocked"}, StageBlocked, "run r ended blocked; every feature left is blocked"},
		{"failed on budget", RunState{RunID: "r", Status: StatusFailed, ReasonKind: ReasonBudget}, StageBlocked, "run r ended failed; budget"},
		{"cancelled", RunState{RunID: "r", Status: StatusCancelled}, StageBlocked, "run r ended cancelled"},
		{"running", RunState{RunID: "r", Status: StatusRunning}, StageRunning, ""},
		{"stalled", RunState{RunID: "r", Status: StatusRunning, Attempts: []Attempt{
			failing(1, 0, "a", "x.T"), failing(2, 10, "b", "x.T"), failing(3, 20, "c", "x.T"),
		}}, StageStalled, "the last 3 attempts failed the gate with the same 1 failing test: x.T"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stage, reason := StageForRun(tt.s, 6)
			require.Equal(t, tt.stage, stage)
			require.Equal(t, tt.reason, reason)
		})
	}
}
