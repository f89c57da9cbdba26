package horizon

import (
	"errors"
	"strings"
	"time"
)

// Decision is one material decision of a run (an assumption taken instead
// of asking, a strategy switch, a skip, a decomposition) with why it was
// taken and what it rests on. Decisions are appended to decisions.jsonl
// and listed in the handoff, so a human can review what was decided in
// their absence. At is passed in (workflow time), never read from a clock.
type Decision struct {
	// Seq numbers a run's decisions from 1, so writing them is idempotent.
	Seq      int       `json:"seq,omitempty"`
	At       time.Time `json:"at"`
	Feature  string    `json:"feature,omitempty"` // the feature it concerns, if any
	What     string    `json:"what"`
	Why      string    `json:"why"`
	Evidence []string  `json:"evidence,omitempty"` // receipt IDs, files, findings it rests on
	// Earlier counts evidence left out: a decision names at most the last
	// MaxDecisionEvidence items, so a feature's hundredth decision is as
	// small as its first and decisions.jsonl and the handoff grow
	// linearly with attempts (the receipts are all in receipts.jsonl).
	Earlier int `json:"earlier_evidence,omitempty"`
}

// MaxDecisionEvidence is the most evidence items one decision names.
const MaxDecisionEvidence = 5

// NewDecision builds a decision, trimming its text; it refuses one without
// a time, a what or a why, since an unexplained decision cannot be
// reviewed.
func NewDecision(at time.Time, feature, what, why string, evidence ...string) (Decision, error) {
	d := Decision{At: at.UTC(), Feature: strings.TrimSpace(feature), What: strings.TrimSpace(what), Why: strings.TrimSpace(why), Evidence: cleanList(evidence)}
	if n := len(d.Evidence); n > MaxDecisionEvidence {
		d.Evidence, d.Earlier = d.Evidence[n-MaxDecisionEvidence:], n-MaxDecisionEvidence
	}
	return d, d.Validate()
}

// Validate reports a decision without a time, a what or a why.
func (d Decision) Validate() error {
	var errs []error
	if d.At.IsZero() {
		errs = append(errs, errors.New("decision has no time"))
	}
	if strings.TrimSpace(d.What) == "" {
		errs = append(errs, errors.New("decision does not say what was decided"))
	}
	if strings.TrimSpace(d.Why) == "" {
		errs = append(errs, errors.New("decision does not say why"))
	}
	return errors.Join(errs...)
}
