package horizon

import (
	"fmt"
	"strings"
)

// Autonomy is how often a run stops for a human at product checkpoints.
// It never bypasses the agent platform's own permission checks, nor does
// it turn failures into stops: at every level a failing attempt is
// followed by another attempt, and only a typed blocker pauses a feature.
type Autonomy string

// Autonomy levels, from fewest to most checkpoints. Each level waits at
// every checkpoint the level before it waits at.
const (
	// AutonomyFull never waits at a product checkpoint: the run goes on
	// until the plan is done or only blocked work is left.
	AutonomyFull Autonomy = "full"
	// AutonomySemi waits to approve a HIGH-ambiguity plan and at each
	// milestone boundary.
	AutonomySemi Autonomy = "semi"
	// AutonomySupervised also waits to approve each feature's plan before
	// its first attempt.
	AutonomySupervised Autonomy = "supervised"
)

// DefaultAutonomy is the level when none is configured: horizon exists to
// run unattended.
const DefaultAutonomy = AutonomyFull

// ParseAutonomy reads a configured level (case and spaces forgiven; empty
// is DefaultAutonomy).
func ParseAutonomy(s string) (Autonomy, error) {
	switch a := Autonomy(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return DefaultAutonomy, nil
	case AutonomyFull, AutonomySemi, AutonomySupervised:
		return a, nil
	}
	return "", fmt.Errorf("autonomy %q is not one of full|semi|supervised", s)
}

// Valid reports whether a is one of the levels.
func (a Autonomy) Valid() bool {
	return a == AutonomyFull || a == AutonomySemi || a == AutonomySupervised
}

// CheckpointKind is a point where a run may wait for a human's approval.
type CheckpointKind string

// Product checkpoints.
const (
	// CheckpointPlan: the plan is made, before any feature runs. Only a
	// HIGH-ambiguity plan is a reason to wait.
	CheckpointPlan CheckpointKind = "plan"
	// CheckpointMilestone: before a milestone other than the first starts.
	// That is normally once the one before is finished; when what is left
	// of it is blocked, independent features of the next may start early,
	// and this checkpoint is where a person agrees to that.
	CheckpointMilestone CheckpointKind = "milestone"
	// CheckpointFeature: a feature is about to get its first attempt.
	CheckpointFeature CheckpointKind = "feature"
)

// NeedsApproval reports whether the run waits for approval at point:
//
//	checkpoint                 full  semi  supervised
//	plan (HIGH ambiguity)      no    yes   yes
//	plan (LOW or MEDIUM)       no    no    no
//	milestone boundary         no    yes   yes
//	feature plan               no    no    yes
//
// An unknown level is treated as supervised and an unknown checkpoint as
// one to wait at (except in full autonomy): a misconfiguration should
// stop for a human, not skip a review. Configuration that auto-approves
// milestones is applied by the caller.
func (a Autonomy) NeedsApproval(point CheckpointKind, plan Plan) bool {
	if a == AutonomyFull {
		return false
	}
	supervised := a != AutonomySemi // supervised, or unknown
	switch point {
	case CheckpointPlan:
		return plan.Ambiguity == AmbiguityHigh
	case CheckpointMilestone:
		return true
	case CheckpointFeature:
		return supervised
	}
	return true
}
