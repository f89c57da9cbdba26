package horizon

import "errors"

// Sentinel errors of the supervisor's domain (roadmap, queue), checked
// with errors.Is by the supervisor workflow and the CLI.
var (
	// ErrRoadmapSyntax wraps every *RoadmapError: the roadmap cannot be
	// read without guessing, and the supervisor waits for a fix.
	ErrRoadmapSyntax = errors.New("roadmap syntax")
	// ErrUnknownEntry: no queue entry has the ID.
	ErrUnknownEntry = errors.New("unknown queue entry")
	// ErrInvalidEntry: a queue entry is missing what it needs (a goal, a
	// plan for a plan entry) or has a value out of range.
	ErrInvalidEntry = errors.New("invalid queue entry")
	// ErrItemStage: a roadmap item's record cannot change that way (it
	// would be decomposed or run a second time, or the stage is unknown).
	ErrItemStage = errors.New("roadmap item stage does not allow this")
)
