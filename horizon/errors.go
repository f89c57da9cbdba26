package horizon

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the plan domain. Callers branch on them with
// errors.Is: a workflow retries the planner on ErrInvalidPlan, and tells a
// worker why its blocker was refused on ErrVagueEvidence or
// ErrUntrustedBlocker.
var (
	// ErrInvalidPlan wraps every *PlanError.
	ErrInvalidPlan = errors.New("invalid plan")
	// ErrUnknownFeature: no feature of the plan has the ID.
	ErrUnknownFeature = errors.New("unknown feature")
	// ErrFeatureState: the feature's status does not allow the change
	// (decomposing an accepted feature, unblocking a pending one, ...).
	ErrFeatureState = errors.New("feature status does not allow this")
	// ErrNotVerified: a feature cannot be accepted without an attempt whose
	// gate passed (with a receipt) and whose auditor accepted.
	ErrNotVerified = errors.New("no receipt-backed verification")
	// ErrUnknownBlockerType: not one of the typed blockers.
	ErrUnknownBlockerType = errors.New("unknown blocker type")
	// ErrVagueEvidence: a blocker without concrete evidence.
	ErrVagueEvidence = errors.New("blocker evidence is missing or too vague")
	// ErrUntrustedBlocker: a worker claimed a blocker only trusted events
	// (the supervisor) may record, such as a denied permission.
	ErrUntrustedBlocker = errors.New("blocker type may only be recorded by the supervisor")
	// ErrNotBlocked: a worker's report does not claim a blocker.
	ErrNotBlocked = errors.New("report does not claim a blocker")
	// ErrInvalidValue wraps every *ValueError.
	ErrInvalidValue = errors.New("value is not one of the accepted values")
)

// ValueError is a value outside its enumeration (a report status, a
// feature kind, a role, ...), from a model's block or a user's flag. It
// names the field, quotes the value as given and lists every accepted
// value, so the model's next attempt or the user can fix it.
type ValueError struct {
	Field   string   // e.g. "status", "kind"
	Value   string   // as given
	Allowed []string // every accepted value, in order
}

func (e *ValueError) Error() string {
	allowed := strings.Join(e.Allowed, "|")
	if strings.TrimSpace(e.Value) == "" {
		return fmt.Sprintf("%s is missing (one of %s)", e.Field, allowed)
	}
	return fmt.Sprintf("%s %q is not one of %s", e.Field, e.Value, allowed)
}

// Unwrap makes errors.Is(err, ErrInvalidValue) hold.
func (e *ValueError) Unwrap() error { return ErrInvalidValue }

// PlanError lists everything wrong with a plan, each problem naming the
// milestone or feature it is about, so one planner retry can fix them all.
type PlanError struct {
	Problems []string
}

func (e *PlanError) Error() string {
	return "invalid plan: " + strings.Join(e.Problems, "; ")
}

// Unwrap makes errors.Is(err, ErrInvalidPlan) hold.
func (e *PlanError) Unwrap() error { return ErrInvalidPlan }
