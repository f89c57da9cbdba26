package horizon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The queue is a repository's durable, ordered list of work for the
// supervisor: goals a person added (`horizon queue add`) and plans the
// lead made of roadmap items. The supervisor runs it from the top, one
// planned run at a time (supervisor.max_active_runs). It is a plain value
// kept in the supervisor workflow's state: IDs come from a counter, never
// from a clock or randomness, so a replay rebuilds the same queue.

// EntryKind says what a queue entry holds.
type EntryKind string

// Queue entry kinds.
const (
	// EntryGoal is a goal a person added; its run plans it.
	EntryGoal EntryKind = "goal"
	// EntryPlan is a plan the lead made of a roadmap item; its run starts
	// from the plan.
	EntryPlan EntryKind = "plan"
)

// QueueEntry is one piece of queued work.
type QueueEntry struct {
	// ID is "q" and a number, unique within the repository's queue for
	// its lifetime (removed entries' numbers are not reused).
	ID   string    `json:"id"`
	Kind EntryKind `json:"kind"`
	// Goal is the goal in words; for a plan, the roadmap item's title
	// (its plan's goal when not given).
	Goal string `json:"goal"`
	// Plan is the lead's plan of a roadmap item (kind plan only).
	Plan *Plan `json:"plan,omitempty"`
	// Item is the roadmap item the plan came from (RoadmapItem.ID).
	Item string `json:"item,omitempty"`
	// Autonomy is the run's level; empty means supervisor.autonomy.
	Autonomy Autonomy `json:"autonomy,omitempty"`
	// BudgetTime and BudgetSpend (USD) are the run's hard stop; 0 means
	// the configured run.budget_* default.
	BudgetTime  time.Duration `json:"budget_time,omitempty"`
	BudgetSpend float64       `json:"budget_spend,omitempty"`
	// AddedAt is when it was queued (workflow time, passed in).
	AddedAt time.Time `json:"added_at,omitzero"`
}

// Queue is a repository's ordered work. The zero value is an empty queue.
type Queue struct {
	Entries []QueueEntry `json:"entries"`
	// Seq is the number of the last ID handed out.
	Seq int `json:"seq"`
}

// Len is the number of queued entries.
func (q Queue) Len() int { return len(q.Entries) }

// Add validates e, gives it the next ID and appends it; it returns the
// entry as stored. The goal is trimmed (a plan entry without one takes its
// plan's goal) and the autonomy normalised ("Semi" → semi). It refuses,
// with ErrInvalidEntry and nothing changed: an unknown kind, an empty
// goal, a plan entry without a plan (or with an empty one), a goal entry
// with a plan, an unknown autonomy, a negative budget, and a second plan
// for a roadmap item that already has one queued.
func (q *Queue) Add(e QueueEntry) (QueueEntry, error) {
	e.Goal = strings.TrimSpace(e.Goal)
	e.Item = strings.TrimSpace(e.Item)
	if e.Kind == EntryPlan && e.Goal == "" && e.Plan != nil {
		e.Goal = e.Plan.Goal
	}
	var bad []string
	switch e.Kind {
	case EntryGoal:
		if e.Plan != nil {
			bad = append(bad, "a goal entry carries no plan (its run plans the goal)")
		}
	case EntryPlan:
		if e.Plan == nil || len(e.Plan.Milestones) == 0 {
			bad = append(bad, "a plan entry needs the lead's plan with at least one milestone")
		}
	default:
		bad = append(bad, fmt.Sprintf("kind %q is not goal or plan", e.Kind))
	}
	if e.Goal == "" {
		bad = append(bad, "the goal is empty: say what the run should achieve")
	}
	if e.Autonomy != "" {
		a, err := ParseAutonomy(string(e.Autonomy))
		if err != nil {
			bad = append(bad, err.Error())
		}
		e.Autonomy = a
	}
	if e.BudgetTime < 0 {
		bad = append(bad, fmt.Sprintf("time budget %s is negative (0 means the configured default)", e.BudgetTime))
	}
	if e.BudgetSpend < 0 {
		bad = append(bad, fmt.Sprintf("spend budget $%g is negative (0 means the configured default)", e.BudgetSpend))
	}
	if e.Item != "" {
		if prev, ok := q.ForItem(e.Item); ok {
			bad = append(bad, fmt.Sprintf("roadmap item %q already has %s in the queue: an item is planned and run once", e.Item, prev.ID))
		}
	}
	if len(bad) > 0 {
		return QueueEntry{}, fmt.Errorf("queue add: %w: %s", ErrInvalidEntry, strings.Join(bad, "; "))
	}
	q.Seq++
	e.ID = "q" + strconv.Itoa(q.Seq)
	q.Entries = slices.Concat(q.Entries, []QueueEntry{e})
	return e, nil
}

// index finds an entry by ID, forgiving case and a missing "q" ("3", "Q3"
// and "q3" name the same entry), so people can type what `queue list`
// shows either way.
func (q Queue) index(id string) int {
	id = strings.ToLower(strings.TrimSpace(id))
	if !strings.HasPrefix(id, "q") {
		id = "q" + id
	}
	return slices.IndexFunc(q.Entries, func(e QueueEntry) bool { return e.ID == id })
}

// Get returns the entry with the given ID (see Remove for the spellings
// accepted).
func (q Queue) Get(id string) (QueueEntry, bool) {
	if i := q.index(id); i >= 0 {
		return q.Entries[i], true
	}
	return QueueEntry{}, false
}

// ForItem returns the queued plan of a roadmap item.
func (q Queue) ForItem(item string) (QueueEntry, bool) {
	for _, e := range q.Entries {
		if item != "" && e.Item == item {
			return e, true
		}
	}
	return QueueEntry{}, false
}

// Remove takes the entry with the given ID out of the queue and returns
// it; "q3", "Q3" and "3" all name entry q3. An unknown ID is
// ErrUnknownEntry.
func (q *Queue) Remove(id string) (QueueEntry, error) {
	i := q.index(id)
	if i < 0 {
		return QueueEntry{}, q.unknown("remove", id)
	}
	e := q.Entries[i]
	q.Entries = without(q.Entries, i)
	return e, nil
}

// MoveTop puts the entry with the given ID first, keeping the order of
// the others.
func (q *Queue) MoveTop(id string) error {
	i := q.index(id)
	if i < 0 {
		return q.unknown("move", id)
	}
	e := q.Entries[i]
	q.Entries = slices.Concat([]QueueEntry{e}, without(q.Entries, i))
	return nil
}

// Next returns the entry that runs next, without taking it.
func (q Queue) Next() (QueueEntry, bool) {
	if len(q.Entries) == 0 {
		return QueueEntry{}, false
	}
	return q.Entries[0], true
}

// Pop takes the next entry out of the queue, as its run starts.
func (q *Queue) Pop() (QueueEntry, bool) {
	e, ok := q.Next()
	if ok {
		q.Entries = without(q.Entries, 0)
	}
	return e, ok
}

// without returns a new slice of es without es[i]: the queue never
// changes an array a copy of it (a status query's answer) may share.
func without(es []QueueEntry, i int) []QueueEntry {
	if out := slices.Concat(es[:i], es[i+1:]); out != nil {
		return out
	}
	return []QueueEntry{} // an emptied queue lists as [], not null
}

func (q Queue) unknown(op, id string) error {
	ids := make([]string, len(q.Entries))
	for i, e := range q.Entries {
		ids[i] = e.ID
	}
	have := "the queue is empty"
	if len(ids) > 0 {
		have = "queued: " + strings.Join(ids, ", ")
	}
	return fmt.Errorf("queue %s %q: %w (%s; see horizon queue list)", op, id, ErrUnknownEntry, have)
}
