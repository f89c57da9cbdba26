package advisor

import (
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// Rules are the advisor.* settings the judgement follows.
type Rules struct {
	MaxNotes        int  // advisor.max_notes_per_update
	ImmuneTurns     int  // advisor.immune_turns
	RequireEvidence bool // advisor.require_evidence
	// Delivery is advisor.delivery: per severity, wake (blockers only),
	// deliver or record. A severity it does not name: a blocker wakes,
	// the others are delivered.
	Delivery map[horizon.Severity]string
}

// Delivery modes (advisor.delivery.*).
const (
	Wake    = "wake"
	Deliver = "deliver"
	Record  = "record"
)

// mode is how a note delivered at sev reaches the worker.
func (r Rules) mode(sev horizon.Severity) string {
	if m := r.Delivery[sev]; m != "" {
		return m
	}
	if sev == horizon.SeverityBlocker {
		return Wake
	}
	return Deliver
}

// State is what the judgement remembers across the reviews of one worker
// session. It is small and JSON, so the activity heartbeats it: a resumed
// activity judges the next review as the lost one would have.
type State struct {
	Reviews int     `json:"reviews"`
	Seen    []Seen  `json:"seen,omitempty"`
	Breaker Breaker `json:"breaker"`
}

// NoteID names note i (from 0) of review r; it is the note's delivery
// idempotency key within the attempt.
func NoteID(review, i int) string { return fmt.Sprintf("r%d.%d", review, i+1) }

// Judge decides every note of one review, in order: the guard
// (content-free, the fact check, duplicates, the quota), then the circuit
// breaker for what survives. The records say, per note, its verdict, the
// severity to deliver at and whether it wakes the session; delivering is
// the caller's. Judge advances s (review count, duplicates, breaker).
func (s *State) Judge(r Rules, adv horizon.Advice, files Files) []horizon.AdviceRecord {
	s.Reviews++
	review := s.Reviews
	recs := make([]horizon.AdviceRecord, 0, len(adv.Notes))
	passed := 0
	for i, n := range adv.Notes {
		rec := horizon.AdviceRecord{
			ID: NoteID(review, i), Review: review, Severity: n.Severity, Note: Normalize(n.Note),
			Evidence: n.Evidence, SuggestedPatch: strings.TrimSpace(n.SuggestedPatch),
		}
		sev := n.Severity
		var why []string
		suppress := func(v horizon.AdviceVerdict, reason string) {
			rec.Verdict, rec.Reason = v, reason
			recs = append(recs, rec)
		}
		if rank(sev) == 0 {
			suppress(horizon.AdviceSuppressed, fmt.Sprintf("unknown severity %q", sev))
			continue
		}
		if ContentFree(rec.Note) {
			suppress(horizon.AdviceSuppressed, "content-free")
			continue
		}
		if sev != horizon.SeverityNit {
			switch c, reason := CheckEvidence(n.Evidence, files); c {
			case Refuted:
				suppress(horizon.AdviceRefuted, reason)
				continue
			case NoEvidence:
				if sev == horizon.SeverityBlocker && r.RequireEvidence {
					sev = horizon.SeverityConcern
					why = append(why, "no evidence: "+reason)
				}
			case Uncertain:
				// Neither confirmed nor refuted: said, but as a nit.
				sev = horizon.SeverityNit
				why = append(why, "uncertain: "+reason)
			case Confirmed:
				rec.Reason, rec.Confirmed = reason, true
			}
		}
		k := key(rec.Note)
		if duplicate(s.Seen, k, sev) {
			suppress(horizon.AdviceSuppressed, "duplicate of an earlier note at the same or a graver severity")
			continue
		}
		if r.MaxNotes > 0 && passed >= r.MaxNotes {
			suppress(horizon.AdviceSuppressed, fmt.Sprintf("over advisor.max_notes_per_update (%d)", r.MaxNotes))
			continue
		}
		if r.mode(sev) == Record {
			suppress(horizon.AdviceRecorded, fmt.Sprintf("advisor.delivery.%s is record: kept in the run's record, not delivered", sev))
			continue
		}
		passed++
		s.Seen = remember(s.Seen, k, sev)
		var (
			deliver   = sev
			wake      bool
			downgrade string
		)
		if sev != horizon.SeverityBlocker || r.mode(sev) == Wake {
			deliver, wake, downgrade = s.Breaker.Route(sev, r.ImmuneTurns)
		}
		if downgrade != "" {
			why = append(why, downgrade)
		}
		if r.mode(deliver) == Record {
			// Downgraded onto a severity that is only recorded.
			why = append(why, fmt.Sprintf("advisor.delivery.%s is record", deliver))
			rec.Verdict, rec.Reason, rec.Delivered, rec.Woke = horizon.AdviceRecorded, strings.Join(why, "; "), "", false
			recs = append(recs, rec)
			continue
		}
		rec.Delivered, rec.Woke = deliver, wake
		rec.Verdict = horizon.AdviceDelivered
		if deliver != n.Severity {
			rec.Verdict = horizon.AdviceDowngraded
			rec.Reason = strings.Join(why, "; ")
		}
		recs = append(recs, rec)
	}
	return recs
}

// Failed is the record of a review that gave no notes (it timed out,
// failed, was rate-limited or answered no valid block): the worker went on
// without it.
func (s *State) Failed(why string) horizon.AdviceRecord {
	s.Reviews++
	return horizon.AdviceRecord{ID: fmt.Sprintf("r%d", s.Reviews), Review: s.Reviews, Verdict: horizon.AdviceFailed, Reason: why}
}
