package horizon

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func entryIDs(q Queue) []string {
	out := []string{}
	for _, e := range q.Entries {
		out = append(out, e.ID)
	}
	return out
}

func TestQueueAddRemoveMove(t *testing.T) {
	var q Queue
	_, ok := q.Next()
	require.False(t, ok, "an empty queue has no next entry")

	a, err := q.Add(QueueEntry{Kind: EntryGoal, Goal: "  Add CSV export ", Autonomy: " Semi", BudgetTime: time.Hour, BudgetSpend: 2, AddedAt: at(0)})
	require.NoError(t, err)
	require.Equal(t, QueueEntry{ID: "q1", Kind: EntryGoal, Goal: "Add CSV export", Autonomy: AutonomySemi, BudgetTime: time.Hour, BudgetSpend: 2, AddedAt: at(0)}, a)

	p := samplePlan(t)
	b, err := q.Add(QueueEntry{Kind: EntryPlan, Plan: &p, Item: "dates"})
	require.NoError(t, err)
	require.Equal(t, "q2", b.ID)
	require.Equal(t, p.Goal, b.Goal, "a plan entry without a goal takes its plan's")

	c, err := q.Add(QueueEntry{Kind: EntryGoal, Goal: "Third"})
	require.NoError(t, err)
	require.Equal(t, "q3", c.ID)
	require.Equal(t, []string{"q1", "q2", "q3"}, entryIDs(q))

	e, ok := q.ForItem("dates")
	require.True(t, ok)
	require.Equal(t, "q2", e.ID)
	_, ok = q.ForItem("")
	require.False(t, ok, "goal entries have no item")

	require.NoError(t, q.MoveTop("3"))
	require.Equal(t, []string{"q3", "q1", "q2"}, entryIDs(q))
	require.NoError(t, q.MoveTop("Q3"), "moving the first entry to the top changes nothing")
	require.Equal(t, []string{"q3", "q1", "q2"}, entryIDs(q))

	got, ok := q.Get("q1")
	require.True(t, ok)
	require.Equal(t, a, got)

	snapshot := q // a status query's copy must not change under later edits
	r, err := q.Remove("q1")
	require.NoError(t, err)
	require.Equal(t, a, r)
	require.Equal(t, []string{"q3", "q2"}, entryIDs(q))
	require.Equal(t, []string{"q3", "q1", "q2"}, entryIDs(snapshot))

	d, err := q.Add(QueueEntry{Kind: EntryGoal, Goal: "Fourth"})
	require.NoError(t, err)
	require.Equal(t, "q4", d.ID, "numbers are not reused")

	next, ok := q.Next()
	require.True(t, ok)
	require.Equal(t, "q3", next.ID)
	require.Equal(t, 3, q.Len(), "Next does not take the entry")
	for _, want := range []string{"q3", "q2", "q4"} {
		e, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, want, e.ID)
	}
	_, ok = q.Pop()
	require.False(t, ok)

	js, err := json.Marshal(q)
	require.NoError(t, err)
	require.JSONEq(t, `{"entries": [], "seq": 4}`, string(js))
}

func TestQueueUnknownEntry(t *testing.T) {
	var q Queue
	_, err := q.Remove("q1")
	require.True(t, errors.Is(err, ErrUnknownEntry))
	require.ErrorContains(t, err, `queue remove "q1": unknown queue entry (the queue is empty; see horizon queue list)`)
	_, err = q.Add(QueueEntry{Kind: EntryGoal, Goal: "a"})
	require.NoError(t, err)
	err = q.MoveTop("q9")
	require.True(t, errors.Is(err, ErrUnknownEntry))
	require.ErrorContains(t, err, "queued: q1")
}

func TestQueueAddRefuses(t *testing.T) {
	p := samplePlan(t)
	tests := []struct {
		name string
		e    QueueEntry
		want string
	}{
		{"no kind", QueueEntry{Goal: "x"}, `kind "" is not goal or plan`},
		{"empty goal", QueueEntry{Kind: EntryGoal, Goal: " \n"}, "the goal is empty"},
		{"goal with a plan", QueueEntry{Kind: EntryGoal, Goal: "x", Plan: &p}, "a goal entry carries no plan"},
		{"plan without a plan", QueueEntry{Kind: EntryPlan, Goal: "x", Item: "i"}, "needs the lead's plan"},
		{"empty plan", QueueEntry{Kind: EntryPlan, Goal: "x", Plan: &Plan{Goal: "x"}}, "at least one milestone"},
		{"bad autonomy", QueueEntry{Kind: EntryGoal, Goal: "x", Autonomy: "yolo"}, `autonomy "yolo" is not one of full|semi|supervised`},
		{"negative time", QueueEntry{Kind: EntryGoal, Goal: "x", BudgetTime: -time.Second}, "time budget -1s is negative"},
		{"negative spend", QueueEntry{Kind: EntryGoal, Goal: "x", BudgetSpend: -1}, "spend budget $-1 is negative"},
		{"second plan of an item", QueueEntry{Kind: EntryPlan, Plan: &p, Item: "dates"}, `roadmap item "dates" already has q1 in the queue`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q Queue
			_, err := q.Add(QueueEntry{Kind: EntryPlan, Plan: &p, Item: "dates"})
			require.NoError(t, err)
			before := q
			_, err = q.Add(tt.e)
			require.True(t, errors.Is(err, ErrInvalidEntry), err)
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, before, q, "a refused entry changes nothing")
		})
	}
}

// Property: any sequence of operations keeps IDs unique and increasing
// in creation order, Seq at the number of adds, and the queue equal to a
// model list; the same sequence gives the same queue (no clock, no
// randomness inside).
func TestQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for round := 0; round < 300; round++ {
		var q, again Queue
		var model []string
		adds := 0
		type op struct {
			kind int
			arg  int
		}
		var ops []op
		for i := 0; i < 30; i++ {
			ops = append(ops, op{rng.IntN(4), rng.IntN(12)})
		}
		apply := func(q *Queue, o op) {
			id := "q" + string(rune('0'+o.arg%10))
			switch o.kind {
			case 0:
				_, err := q.Add(QueueEntry{Kind: EntryGoal, Goal: "g"})
				require.NoError(t, err)
			case 1:
				_, _ = q.Remove(id)
			case 2:
				_ = q.MoveTop(id)
			case 3:
				_, _ = q.Pop()
			}
		}
		for _, o := range ops {
			apply(&q, o)
			apply(&again, o)
			id := "q" + string(rune('0'+o.arg%10))
			switch o.kind {
			case 0:
				adds++
				model = append(model, q.Entries[len(q.Entries)-1].ID)
			case 1:
				if i := slices.Index(model, id); i >= 0 {
					model = slices.Delete(model, i, i+1)
				}
			case 2:
				if i := slices.Index(model, id); i >= 0 {
					model = append([]string{id}, slices.Delete(model, i, i+1)...)
				}
			case 3:
				if len(model) > 0 {
					model = model[1:]
				}
			}
			require.Equal(t, adds, q.Seq)
			got := entryIDs(q)
			if len(model) == 0 {
				require.Empty(t, got)
			} else {
				require.Equal(t, model, got)
			}
		}
		require.Equal(t, q, again)
	}
}
