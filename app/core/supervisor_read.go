package core

// What a surface reads of a supervisor beyond its state: its queue and
// its roadmap.

import (
	"context"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// QueueView is one entry of a supervisor's queue as a person sees it.
type QueueView struct {
	horizon.QueueEntry
	Position         int  `json:"position"`
	WaitsForApproval bool `json:"waits_for_approval"`
}

// QueueOf is a supervisor's queue, next first.
func QueueOf(s *horizon.SupervisorState) []QueueView {
	views := []QueueView{}
	for i, e := range s.Queue.Entries {
		views = append(views, QueueView{QueueEntry: e, Position: i + 1, WaitsForApproval: s.NeedsApproval(e)})
	}
	return views
}

// Queue reads a running supervisor's queue.
func (s Supervisors) Queue(ctx context.Context, id string) ([]QueueView, error) {
	st, err := s.Supervisor(ctx, id)
	if err != nil {
		return nil, err
	}
	return QueueOf(st), nil
}

// RoadmapView is a repository's roadmap and what became of each item.
type RoadmapView struct {
	horizon.RoadmapRef
	// Found is false when the roadmap file is not on Base.
	Found bool   `json:"found"`
	Base  string `json:"base"`
	// Tip is the newest commit on horizon/roadmap, when a supervisor runs.
	Tip string `json:"tip,omitempty"`
}

// RoadmapOf reads the roadmap at path from the tip of base in repo and
// tells each item's state from sup's records and queue (sup nil: no
// supervisor runs, every open item is unplanned). A running supervisor's
// base and path win over the ones given. A base that is not in the
// repository is an error of the input.
func RoadmapOf(ctx context.Context, repo, base, path string, sup *horizon.SupervisorState) (*RoadmapView, error) {
	if sup != nil {
		base, path = sup.Base, sup.Roadmap
	}
	text, err := (&activities.Activities{}).ReadRoadmap(ctx, activities.RoadmapInput{Repo: repo, Base: base, Path: path})
	if err != nil {
		return nil, err // the activity's error names the read and the base
	}
	v := &RoadmapView{RoadmapRef: horizon.RoadmapRef{File: path, Items: []horizon.ItemStatus{}}, Found: text.Found, Base: base}
	var rm horizon.Roadmap
	switch {
	case text.Problem != "":
		v.Error = text.Problem // too large, a directory, not text
	case text.Found:
		if rm, err = horizon.ParseRoadmap(path, text.Text); err != nil {
			v.Error = err.Error()
		}
	}
	var records horizon.ItemRecords
	var q horizon.Queue
	if sup != nil {
		records, q, v.Tip = sup.Items, sup.Queue, sup.Tip
	}
	v.Items = horizon.RoadmapStatus(rm, records, q)
	return v, nil
}

// Roadmap reads the roadmap of the repository at root, from its running
// supervisor's base when one runs, else from base.
func (s Supervisors) Roadmap(ctx context.Context, root, base, path string) (*RoadmapView, error) {
	sup, err := s.Supervisor(ctx, horizon.SupervisorID(root))
	if err != nil {
		sup = nil
	}
	return RoadmapOf(ctx, root, base, path, sup)
}
