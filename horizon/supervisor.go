package horizon

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The supervisor (one per repository) works through the roadmap: when its
// queue drains, and each night ahead of time, it has the lead decompose
// the next open roadmap items into plans and queues them; each plan then
// runs once. What it has done with each item is an ItemRecord, kept in the
// supervisor workflow's state; the roadmap file itself is only read. This
// file holds the pure rules: which item is decomposed next, which record
// changes are allowed (an item is decomposed at most once and run at most
// once), and each item's state as `horizon roadmap` shows it.

// ItemStage is what the supervisor has done with a roadmap item.
type ItemStage string

// Stages of a roadmap item, in the order they normally come.
const (
	// StageDecomposing: the lead is decomposing it. Recorded before the
	// decomposition starts, so it is never started twice.
	StageDecomposing ItemStage = "decomposing"
	// StageQueued: its plan is in the queue (Entry).
	StageQueued ItemStage = "queued"
	// StageRunning: its plan runs (RunID).
	StageRunning ItemStage = "running"
	// StageDone: its run completed.
	StageDone ItemStage = "done"
	// StageBlocked: waiting for a person: its run is blocked or ended
	// without completing, or its decomposition failed (Reason says which).
	StageBlocked ItemStage = "blocked"
	// StageStalled: its run goes on but has burned attempts without
	// progress (see DetectStalls).
	StageStalled ItemStage = "stalled"
)

// next lists the stages a record may move to from each stage. Once a
// decomposition started there is no way back to it, and a run, once
// started, is the item's only run (RecordItem also refuses a second run
// ID), so "decomposed at most once, run at most once" holds by
// construction. Recording the current stage again is allowed (an
// activity retried after a crash).
var nextStages = map[ItemStage][]ItemStage{
	"":               {StageDecomposing, StageQueued},
	StageDecomposing: {StageQueued, StageBlocked},
	StageQueued:      {StageRunning},
	StageRunning:     {StageDone, StageBlocked, StageStalled},
	StageBlocked:     {StageRunning, StageStalled, StageDone},
	StageStalled:     {StageRunning, StageBlocked, StageDone},
	StageDone:        {},
}

// ItemRecord is what the supervisor has done with one roadmap item.
type ItemRecord struct {
	// Item is the roadmap item's ID (RoadmapItem.ID).
	Item string `json:"item"`
	// Title is the item's title when it was taken up, shown when the item
	// has since left the roadmap.
	Title string    `json:"title"`
	Stage ItemStage `json:"stage"`
	// Entry is the queue entry of its plan, once queued.
	Entry string `json:"entry,omitempty"`
	// RunID is its run, once started.
	RunID string `json:"run_id,omitempty"`
	// Reason says why it is blocked or stalled, in words.
	Reason string `json:"reason,omitempty"`
	// Blocker, when set, is the typed blocker that holds the item for a
	// person (a merge conflict on horizon/roadmap). It holds a queued item
	// too: its stage stays queued and it shows blocked until lifted.
	Blocker *Blocker `json:"blocker,omitempty"`
	// At is when the stage was recorded (workflow time, passed in).
	At time.Time `json:"at,omitzero"`
}

// ItemRecords are the supervisor's records, one per item, in the order
// the items were first taken up. A slice, not a map, so a workflow walks
// it deterministically.
type ItemRecords []ItemRecord

// Find returns the record of an item.
func (rs ItemRecords) Find(item string) (ItemRecord, bool) {
	if i := slices.IndexFunc(rs, func(r ItemRecord) bool { return r.Item == item }); i >= 0 {
		return rs[i], true
	}
	return ItemRecord{}, false
}

// Record returns the records with r stored: a new item's record is
// appended, a known one's replaced. Fields r leaves empty (Title, Entry,
// RunID) keep their recorded values. It refuses, with ErrItemStage and
// the records unchanged, a move the stage order does not allow
// (decomposing an item again, re-running a done one), a queued record
// without its entry, a running one without its run, and a second run ID
// for an item.
func (rs ItemRecords) Record(r ItemRecord) (ItemRecords, error) {
	r.Item, r.Title, r.Reason = strings.TrimSpace(r.Item), oneLine(r.Title), strings.TrimSpace(r.Reason)
	if r.Item == "" {
		return rs, fmt.Errorf("record roadmap item: %w: no item ID", ErrItemStage)
	}
	prev, known := rs.Find(r.Item)
	if _, ok := nextStages[r.Stage]; !ok || r.Stage == "" {
		return rs, fmt.Errorf("record roadmap item %q: %w: unknown stage %q", r.Item, ErrItemStage, r.Stage)
	}
	if r.Stage != prev.Stage && !slices.Contains(nextStages[prev.Stage], r.Stage) {
		from := string(prev.Stage)
		if from == "" {
			from = "nothing"
		}
		return rs, fmt.Errorf("record roadmap item %q: %w: %s cannot follow %s", r.Item, ErrItemStage, r.Stage, from)
	}
	if r.Title == "" {
		r.Title = prev.Title
	}
	if r.Entry == "" {
		r.Entry = prev.Entry
	}
	switch {
	case r.RunID == "":
		r.RunID = prev.RunID
	case prev.RunID != "" && r.RunID != prev.RunID:
		return rs, fmt.Errorf("record roadmap item %q: %w: it already ran as %s (an item runs once), not %s", r.Item, ErrItemStage, prev.RunID, r.RunID)
	}
	if r.Stage == StageQueued && r.Entry == "" {
		return rs, fmt.Errorf("record roadmap item %q: %w: queued without its queue entry", r.Item, ErrItemStage)
	}
	if r.Stage == StageRunning && r.RunID == "" {
		return rs, fmt.Errorf("record roadmap item %q: %w: running without its run ID", r.Item, ErrItemStage)
	}
	out := slices.Clone(rs)
	if known {
		out[slices.IndexFunc(out, func(x ItemRecord) bool { return x.Item == r.Item })] = r
	} else {
		out = append(out, r)
	}
	return out, nil
}

// waitingToRun reports whether the record is a plan made and not yet
// started: decomposing, or queued with its entry still in the queue.
func waitingToRun(r ItemRecord, q Queue) bool {
	switch r.Stage {
	case StageDecomposing:
		return true
	case StageQueued:
		_, ok := q.Get(r.Entry)
		return ok
	}
	return false
}

// NextToDecompose returns the roadmap items to decompose now, top to
// bottom: open items the supervisor has not taken up, as many as keep
// `ahead` (supervisor.decompose_ahead, at least 1) plans ready. Plans
// ready are items being decomposed or queued and still in the queue; a
// plan a person removed from the queue no longer counts, and its item is
// not decomposed again. With an empty queue and nothing ready this is the
// next `ahead` items, the drained-queue case.
func NextToDecompose(rm Roadmap, records ItemRecords, q Queue, ahead int) []RoadmapItem {
	n := max(ahead, 1)
	for _, r := range records {
		if waitingToRun(r, q) {
			n--
		}
	}
	var out []RoadmapItem
	for _, it := range rm.Open() {
		if n <= 0 {
			break
		}
		if _, taken := records.Find(it.ID); taken {
			continue
		}
		out = append(out, it)
		n--
	}
	return out
}

// ItemState is a roadmap item's state as `horizon roadmap` shows it.
type ItemState string

// Roadmap item states.
const (
	// ItemUnplanned: open in the roadmap, not taken up yet.
	ItemUnplanned ItemState = "unplanned"
	// ItemDecomposing: the lead is decomposing it into a plan now (the
	// supervisor's record says "decomposing" too).
	ItemDecomposing ItemState = "decomposing"
	// ItemPlanned: decomposed, but its plan was removed from the queue by
	// a person (it is not decomposed again).
	ItemPlanned ItemState = "planned"
	ItemQueued  ItemState = "queued"
	ItemRunning ItemState = "running"
	// ItemDone: its run completed, or the user ticked it ("- [x]") before
	// the supervisor took it up.
	ItemDone    ItemState = "done"
	ItemBlocked ItemState = "blocked"
	ItemStalled ItemState = "stalled"
)

// ItemStatus is one row of `horizon roadmap`.
type ItemStatus struct {
	Item  string    `json:"item"`
	Title string    `json:"title"`
	State ItemState `json:"state"`
	// Line is the item's line in the roadmap; 0 when it has left the
	// roadmap (its record is still shown while the supervisor has one).
	Line int `json:"line,omitempty"`
	// Ticked: the roadmap marks it done ("- [x]").
	Ticked bool   `json:"ticked,omitempty"`
	Entry  string `json:"entry,omitempty"`
	RunID  string `json:"run_id,omitempty"`
	// Detail says more about the state, in words.
	Detail string `json:"detail,omitempty"`
	// Blocker is the typed blocker a person must lift, when there is one.
	Blocker *Blocker `json:"blocker,omitempty"`
}

// RoadmapStatus computes every item's state: the roadmap's items in file
// order, then records of items no longer in the roadmap, in record order.
// A record's stage wins over a tick in the file (the user ticking an
// item that runs does not stop the run); a tick counts only for an item
// the supervisor has not taken up.
func RoadmapStatus(rm Roadmap, records ItemRecords, q Queue) []ItemStatus {
	out := []ItemStatus{}
	inFile := map[string]bool{}
	for _, it := range rm.Items {
		inFile[it.ID] = true
		st := ItemStatus{Item: it.ID, Title: it.Title, Line: it.Line, Ticked: it.Done}
		if r, ok := records.Find(it.ID); ok {
			st = st.from(r, q)
		} else if it.Done {
			st.State, st.Detail = ItemDone, "ticked in the roadmap"
		} else {
			st.State = ItemUnplanned
		}
		out = append(out, st)
	}
	for _, r := range records {
		if !inFile[r.Item] {
			st := ItemStatus{Item: r.Item, Title: r.Title}.from(r, q)
			st.Detail = joinDetail(st.Detail, "no longer in the roadmap")
			out = append(out, st)
		}
	}
	return out
}

// from fills the state from the item's record.
func (st ItemStatus) from(r ItemRecord, q Queue) ItemStatus {
	st.Entry, st.RunID, st.Detail = r.Entry, r.RunID, r.Reason
	switch r.Stage {
	case StageDecomposing:
		st.State, st.Detail = ItemDecomposing, joinDetail("being decomposed", r.Reason)
	case StageQueued:
		st.State = ItemQueued
		if _, ok := q.Get(r.Entry); !ok {
			st.State, st.Detail = ItemPlanned, joinDetail(fmt.Sprintf("its plan %s was removed from the queue", r.Entry), r.Reason)
		}
	case StageRunning:
		st.State = ItemRunning
	case StageDone:
		st.State = ItemDone
	case StageBlocked:
		st.State = ItemBlocked
	case StageStalled:
		st.State = ItemStalled
	}
	if r.Blocker != nil {
		b := *r.Blocker
		st.State, st.Blocker = ItemBlocked, &b
	}
	return st
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// StageForRun is the stage a roadmap item's record takes from its run's
// state, with the reason in words: done when the run completed; blocked
// when it ended otherwise (a run is not retried: a person decides);
// stalled while it runs without progress (DetectStalls with
// stallAttempts); running otherwise. A running run with a blocked feature
// or at a checkpoint stays running: the daily report lists what it waits
// for.
func StageForRun(s RunState, stallAttempts int) (ItemStage, string) {
	switch s.Status {
	case StatusCompleted:
		return StageDone, ""
	case StatusBlocked, StatusFailed, StatusCancelled:
		why := oneLine(s.Reason)
		if why == "" {
			why = string(s.ReasonKind)
		}
		return StageBlocked, joinDetail(fmt.Sprintf("run %s ended %s", s.RunID, s.Status), why)
	}
	if st := DetectStalls(s, stallAttempts); len(st) > 0 {
		return StageStalled, st[0].Detail
	}
	return StageRunning, ""
}
