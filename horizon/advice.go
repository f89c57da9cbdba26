package horizon

import (
	"fmt"
	"strings"
)

// AdviceVerdict is what became of an advisor's note.
type AdviceVerdict string

// Advice verdicts.
const (
	// AdviceDelivered: the note reached the worker's session at the
	// severity the advisor gave it.
	AdviceDelivered AdviceVerdict = "delivered"
	// AdviceDowngraded: the note reached the session at a lower severity
	// (no evidence, the circuit breaker, the immune turns after a wake).
	AdviceDowngraded AdviceVerdict = "downgraded"
	// AdviceRefuted: horizon checked the note's evidence against the lane
	// and it did not hold; the session never saw the note.
	AdviceRefuted AdviceVerdict = "refuted"
	// AdviceSuppressed: content-free, a duplicate or over the review's
	// quota; the session never saw it.
	AdviceSuppressed AdviceVerdict = "suppressed"
	// AdviceFailed: the review (or the note's delivery) failed; the worker
	// went on without it.
	AdviceFailed AdviceVerdict = "failed"
	// AdviceRecorded: the note passed, but advisor.delivery keeps notes of
	// its severity in the run's record only; the session never saw it.
	AdviceRecorded AdviceVerdict = "recorded"
)

// AdviceRecord is one advisor note on an attempt with its verdict, or a
// failed review (no note, Verdict AdviceFailed).
type AdviceRecord struct {
	// ID names the note within its attempt ("r2.1": review 2, note 1; "r3"
	// for a failed review). It is also the delivery's idempotency key.
	ID     string `json:"id"`
	Review int    `json:"review"`
	// Severity is the advisor's; Delivered is the one the session saw
	// ("" when it saw none).
	Severity       Severity        `json:"severity,omitempty"`
	Delivered      Severity        `json:"delivered,omitempty"`
	Note           string          `json:"note,omitempty"`
	Evidence       *AdviceEvidence `json:"evidence,omitempty"`
	SuggestedPatch string          `json:"suggested_patch,omitempty"`
	Verdict        AdviceVerdict   `json:"verdict"`
	Reason         string          `json:"reason,omitempty"`
	// Woke is set when the note was delivered as a prompt that woke the
	// worker (a blocker the circuit breaker let through).
	Woke bool `json:"woke,omitempty"`
	// Message is the OpenCode message that carried the note.
	Message string `json:"message,omitempty"`
	// Confirmed says the fact check found the note's evidence in the lane.
	Confirmed bool `json:"confirmed,omitempty"`
}

// Reached reports whether the worker's session saw the note.
func (r AdviceRecord) Reached() bool {
	return r.Verdict == AdviceDelivered || r.Verdict == AdviceDowngraded
}

// AdviceSummary is one line about an attempt's advice for `horizon
// status` and the handoff: "advice: 2 delivered (1 woke), 1 downgraded,
// 1 refuted, 1 suppressed"; "" without advice.
func AdviceSummary(recs []AdviceRecord) string {
	if len(recs) == 0 {
		return ""
	}
	counts := map[AdviceVerdict]int{}
	woke := 0
	for _, r := range recs {
		counts[r.Verdict]++
		if r.Woke {
			woke++
		}
	}
	var parts []string
	for _, v := range []AdviceVerdict{AdviceDelivered, AdviceDowngraded, AdviceRecorded, AdviceRefuted, AdviceSuppressed, AdviceFailed} {
		if counts[v] == 0 {
			continue
		}
		p := fmt.Sprintf("%d %s", counts[v], v)
		if v == AdviceDelivered && woke > 0 {
			p += fmt.Sprintf(" (%d woke)", woke)
		}
		parts = append(parts, p)
	}
	return "advice: " + strings.Join(parts, ", ")
}

// AdviceCounts counts notes by verdict: how many reached the session
// (delivered, woke among them, downgraded) and how many did not.
type AdviceCounts struct {
	Delivered  int `json:"delivered"`
	Woke       int `json:"woke,omitempty"`
	Downgraded int `json:"downgraded,omitempty"`
	Recorded   int `json:"recorded,omitempty"`
	Refuted    int `json:"refuted,omitempty"`
	Suppressed int `json:"suppressed,omitempty"`
	// Failed counts failed reviews and failed deliveries.
	Failed int `json:"failed,omitempty"`
}

// CountAdvice counts recs by verdict.
func CountAdvice(recs []AdviceRecord) AdviceCounts {
	var c AdviceCounts
	for _, r := range recs {
		switch r.Verdict {
		case AdviceDelivered:
			c.Delivered++
		case AdviceDowngraded:
			c.Downgraded++
		case AdviceRecorded:
			c.Recorded++
		case AdviceRefuted:
			c.Refuted++
		case AdviceSuppressed:
			c.Suppressed++
		case AdviceFailed:
			c.Failed++
		}
		if r.Woke {
			c.Woke++
		}
	}
	return c
}

// AdviceForAuditor is the context an auditor is given from the advice the
// worker received: the concerns and blockers that reached the session,
// one per line; "" when there are none.
func AdviceForAuditor(recs []AdviceRecord) string {
	var b strings.Builder
	for _, r := range recs {
		if !r.Reached() || r.Delivered == SeverityNit {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s", r.Delivered, r.Note)
		if e := r.Evidence; e != nil && e.File != "" {
			fmt.Fprintf(&b, " (%s", e.File)
			if e.Line > 0 {
				fmt.Fprintf(&b, ":%d", e.Line)
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
	}
	return b.String()
}
