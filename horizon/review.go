package horizon

import (
	"fmt"
	"slices"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// Review and decision: what a run does with an auditor's findings and its
// per-criterion receipt (the Horizon spec's "findings get dispositions").
//
// After each audit every finding gets a disposition with a rationale.
// A deterministic rule decides where one is enough (Rule); the lead
// decides the rest in a short read-only session (the horizon-dispositions
// block). accept-now findings become the next attempt's Decision Brief;
// defer findings are kept for the handoff; reject-out-of-scope findings
// are recorded and dropped; needs-user-decision blocks the feature.

// DispositionKind is what a run does with one finding.
type DispositionKind string

// Dispositions (spelled as in the horizon-dispositions block).
const (
	DispositionAcceptNow   DispositionKind = "accept-now"
	DispositionOutOfScope  DispositionKind = "reject-out-of-scope"
	DispositionDefer       DispositionKind = "defer"
	DispositionNeedsPerson DispositionKind = "needs-user-decision"
)

var dispositionKinds = []DispositionKind{DispositionAcceptNow, DispositionOutOfScope, DispositionDefer, DispositionNeedsPerson}

// ParseDispositionKind reads a disposition (case, spaces and underscores
// forgiven).
func ParseDispositionKind(s string) (DispositionKind, error) {
	return parseEnum("disposition", s, func(v string) string { return strings.ReplaceAll(strings.ToLower(v), "_", "-") }, dispositionKinds)
}

// UnmarshalJSON decodes a JSON string.
func (k *DispositionKind) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(k)) }

// Who decided a disposition.
const (
	DecidedByRule = "rule"
	DecidedByLead = "lead"
)

// Disposition is what the run decided about one finding of an audit, and
// why. Finding is the finding's 1-based index in the audit's findings; a
// finding made from an unmet acceptance criterion has Criterion set (its
// 1-based index) and no Finding.
type Disposition struct {
	Finding   int             `json:"finding,omitempty"`
	Criterion int             `json:"criterion,omitempty"`
	Kind      DispositionKind `json:"disposition"`
	Rationale string          `json:"rationale"`
	// Instructions are complete instructions for the next attempt
	// (accept-now), or the question a person must answer
	// (needs-user-decision).
	Instructions string `json:"instructions,omitempty"`
	By           string `json:"by"`
	// Subject is the finding or criterion in a line, so the record reads
	// on its own (the handoff, decisions.jsonl).
	Subject string `json:"subject"`
}

// CriterionStatus is the auditor's rating of one acceptance criterion.
type CriterionStatus string

// Criterion statuses.
const (
	CriterionMet          CriterionStatus = "met"
	CriterionUnmet        CriterionStatus = "unmet"
	CriterionUnverifiable CriterionStatus = "unverifiable"
	// CriterionNotRated is horizon's, never the auditor's: an audit that
	// rated no criterion at all (an auditor of the older protocol).
	CriterionNotRated CriterionStatus = "not rated"
)

var criterionStatuses = []CriterionStatus{CriterionMet, CriterionUnmet, CriterionUnverifiable}

// ParseCriterionStatus reads a criterion's status (case and spaces
// forgiven).
func ParseCriterionStatus(s string) (CriterionStatus, error) {
	return parseEnum("criterion status", s, strings.ToLower, criterionStatuses)
}

// UnmarshalJSON decodes a JSON string.
func (c *CriterionStatus) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(c)) }

// CriterionRating is one line of an audit's per-criterion receipt:
// criterion N (1-based, in the feature's acceptance order) is met, unmet
// or unverifiable, with evidence (a file and line, or a test name from
// the gate's receipt).
type CriterionRating struct {
	Criterion int             `json:"criterion"`
	Status    CriterionStatus `json:"status"`
	Evidence  string          `json:"evidence,omitempty"`
	// Text is the criterion's words, filled in by horizon from the plan.
	Text string `json:"text,omitempty"`
}

// Receipt is an audit's per-criterion receipt against the feature's
// acceptance criteria: one rating per criterion, in order. A criterion
// the auditor left out of a rating list is unverifiable; an audit that
// rated none at all rates every criterion "not rated" and its verdict
// stands alone (the protocol before criteria).
func Receipt(criteria []string, a *Audit) []CriterionRating {
	if len(criteria) == 0 || a == nil {
		return nil
	}
	out := make([]CriterionRating, len(criteria))
	for i, c := range criteria {
		out[i] = CriterionRating{Criterion: i + 1, Status: CriterionNotRated, Text: c}
	}
	if len(a.Criteria) == 0 {
		return out
	}
	for i := range out {
		out[i].Status, out[i].Evidence = CriterionUnverifiable, "the auditor did not rate it"
	}
	for _, r := range a.Criteria {
		if r.Criterion < 1 || r.Criterion > len(out) {
			continue
		}
		o := &out[r.Criterion-1]
		o.Status, o.Evidence = r.Status, strings.TrimSpace(r.Evidence)
	}
	return out
}

// Unmet returns the ratings that keep a change from being accepted:
// unmet and unverifiable ones.
func Unmet(rs []CriterionRating) []CriterionRating {
	var out []CriterionRating
	for _, r := range rs {
		if r.Status == CriterionUnmet || r.Status == CriterionUnverifiable {
			out = append(out, r)
		}
	}
	return out
}

// ReceiptLine is a receipt in one line: "3/4 met; 2 unmet (…)".
func ReceiptLine(rs []CriterionRating) string {
	if len(rs) == 0 {
		return ""
	}
	counts := map[CriterionStatus]int{}
	for _, r := range rs {
		counts[r.Status]++
	}
	parts := []string{fmt.Sprintf("%d/%d met", counts[CriterionMet], len(rs))}
	for _, s := range []CriterionStatus{CriterionUnmet, CriterionUnverifiable, CriterionNotRated} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// RuleInput is what the deterministic rule weighs: the audit, the
// feature's allow-list and its criteria's receipt.
type RuleInput struct {
	Audit *Audit
	// Paths is the feature's allow-list, Outside the findings' files
	// that fall outside it (ladder.OutsideAllowList: one matcher).
	Paths   []string
	Outside []string
	Receipt []CriterionRating
}

// Rule is the deterministic part of the dispositions: the findings (and
// unmet criteria) it decides, and the indexes of findings left for the
// lead. It decides:
//   - every finding of an accepted audit: defer (kept, not lost);
//   - an unmet or unverifiable criterion: accept-now (it is what the
//     feature is for);
//   - a blocker-severity finding whose file and line the activity
//     confirmed in the lane: accept-now;
//   - a finding on a file outside the feature's allow-list:
//     reject-out-of-scope;
//   - a nit: defer (a nit never holds a change back).
func Rule(in RuleInput) (decided []Disposition, undecided []int) {
	a := in.Audit
	if a == nil {
		return nil, nil
	}
	accepted := a.Accepted()
	for i, f := range a.Findings {
		d := Disposition{Finding: i + 1, By: DecidedByRule, Subject: f.Subject()}
		switch {
		case accepted:
			d.Kind, d.Rationale = DispositionDefer, "the audit accepted the change; the finding is kept for later, not lost"
		case f.Severity == SeverityBlocker && f.Confirmed:
			d.Kind, d.Rationale = DispositionAcceptNow, "a blocker whose evidence was confirmed in the lane"
			d.Instructions = "Fix: " + f.Note
		case f.File != "" && slices.Contains(in.Outside, f.File):
			d.Kind, d.Rationale = DispositionOutOfScope, fmt.Sprintf("%s is outside the feature's paths (%s)", f.File, strings.Join(in.Paths, ", "))
		case f.Severity == SeverityNit:
			d.Kind, d.Rationale = DispositionDefer, "a nit never holds a change back"
		default:
			undecided = append(undecided, i+1)
			continue
		}
		decided = append(decided, d)
	}
	for _, r := range Unmet(in.Receipt) {
		decided = append(decided, Disposition{
			Criterion: r.Criterion, Kind: DispositionAcceptNow, By: DecidedByRule,
			Subject:      fmt.Sprintf("criterion %d (%s): %s", r.Criterion, r.Status, r.Text),
			Rationale:    "an acceptance criterion that is not met keeps the feature from being accepted",
			Instructions: fmt.Sprintf("Meet acceptance criterion %d: %s. The auditor: %s", r.Criterion, r.Text, orNone(r.Evidence)),
		})
	}
	return decided, undecided
}

// Fallback decides the findings the lead did not: accept-now, as every
// finding of a rejection was before dispositions, so nothing is dropped
// when the lead gave no valid answer (why).
func Fallback(a *Audit, undecided []int, why string) []Disposition {
	var out []Disposition
	for _, i := range undecided {
		f := a.Findings[i-1]
		out = append(out, Disposition{Finding: i, Kind: DispositionAcceptNow, By: DecidedByRule, Subject: f.Subject(),
			Rationale: "the lead gave no disposition (" + why + "); a finding of a rejection is worked on", Instructions: "Fix: " + f.Note})
	}
	return out
}

// Merge completes the lead's dispositions: the lead may decide only the
// undecided findings, once each; any it left out fall back to accept-now.
// Subjects come from the audit, not from the lead.
func Merge(a *Audit, undecided []int, lead []Disposition) []Disposition {
	var out []Disposition
	done := map[int]bool{}
	for _, d := range lead {
		if !slices.Contains(undecided, d.Finding) || done[d.Finding] {
			continue
		}
		done[d.Finding] = true
		f := a.Findings[d.Finding-1]
		d.By, d.Subject, d.Criterion = DecidedByLead, f.Subject(), 0
		d.Rationale = strings.TrimSpace(d.Rationale)
		if d.Rationale == "" {
			d.Rationale = "the lead gave no rationale"
		}
		if d.Kind == DispositionAcceptNow && strings.TrimSpace(d.Instructions) == "" {
			d.Instructions = "Fix: " + f.Note
		}
		out = append(out, d)
	}
	var left []int
	for _, i := range undecided {
		if !done[i] {
			left = append(left, i)
		}
	}
	return append(out, Fallback(a, left, "it left this finding out")...)
}

// Subject is a finding in a line: "[concern] tests/t.sh:3: the test is thin".
func (f Finding) Subject() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	if loc == "" {
		loc = "(general)"
	}
	return fmt.Sprintf("[%s] %s: %s", f.Severity, loc, strings.TrimSpace(f.Note))
}

// Of returns the dispositions of one kind.
func Of(ds []Disposition, k DispositionKind) []Disposition {
	var out []Disposition
	for _, d := range ds {
		if d.Kind == k {
			out = append(out, d)
		}
	}
	return out
}

// SmallBrief reports whether a Decision Brief holds only small, explicit
// fixes, for the quick role's model: at most three accept-now findings,
// each pointing at a file and line, and no unmet criterion (meeting a
// criterion is feature work, for the build role).
func SmallBrief(ds []Disposition) bool {
	now := Of(ds, DispositionAcceptNow)
	if len(now) == 0 || len(now) > 3 {
		return false
	}
	for _, d := range now {
		if d.Criterion > 0 || !strings.Contains(d.Subject, ":") || strings.Contains(d.Subject, "(general)") {
			return false
		}
	}
	return true
}

// DecisionBrief is the work list an attempt hands the next one when its
// audit's findings were disposed: the objective, the constraints, the
// acceptance criteria with their last ratings, and complete instructions
// for each accept-now finding. Deferred and out-of-scope findings are
// named as not to be done now.
func DecisionBrief(objective string, paths []string, receipt []CriterionRating, ds []Disposition) string {
	var b strings.Builder
	b.WriteString("## Decision Brief\n\n")
	fmt.Fprintf(&b, "**Objective.** %s\n\n", firstLine(objective))
	b.WriteString("**Constraints.** Keep the gate green and unrelated behaviour intact")
	if len(paths) > 0 {
		fmt.Fprintf(&b, "; change only %s", strings.Join(paths, ", "))
	}
	b.WriteString(".\n\n")
	if len(receipt) > 0 {
		b.WriteString("**Acceptance criteria** (the auditor's last ratings):\n\n")
		for _, r := range receipt {
			fmt.Fprintf(&b, "%d. %s — %s", r.Criterion, r.Text, r.Status)
			if r.Evidence != "" {
				fmt.Fprintf(&b, " (%s)", r.Evidence)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	now := Of(ds, DispositionAcceptNow)
	if len(now) > 0 {
		b.WriteString("**Do now**, each completely:\n\n")
		for i, d := range now {
			fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, d.Subject, strings.TrimSpace(d.Instructions))
		}
		b.WriteString("\n")
	}
	if later := append(Of(ds, DispositionDefer), Of(ds, DispositionOutOfScope)...); len(later) > 0 {
		b.WriteString("**Not now** (decided; do not work on these):\n\n")
		for _, d := range later {
			fmt.Fprintf(&b, "- %s (%s: %s)\n", d.Subject, d.Kind, d.Rationale)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// DispositionBrief asks the lead (read-only) to decide the findings the
// rule left open.
func DispositionBrief(task string, a *Audit, undecided []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Dispositions\n\nAn independent auditor rejected a worker's change for the task below. Decide what happens with each finding listed. Read the repository as needed; you cannot edit or run anything.\n\n## Task\n\n%s\n\n## Findings to decide\n\n", strings.TrimSpace(task))
	for _, i := range undecided {
		fmt.Fprintf(&b, "%d. %s\n", i, a.Findings[i-1].Subject())
	}
	b.WriteString("\nFor each finding choose one disposition:\n\n")
	b.WriteString("- `accept-now`: the next attempt must fix it; give complete instructions.\n")
	b.WriteString("- `reject-out-of-scope`: it is not this task's business.\n")
	b.WriteString("- `defer`: right but not needed now; it is kept for later.\n")
	b.WriteString("- `needs-user-decision`: only a person can decide; give the question in instructions. This pauses the feature.\n\n")
	b.WriteString("Give a one-sentence rationale each. End your final message with exactly one fenced block:\n\n")
	b.WriteString("```horizon-dispositions\n{\"dispositions\": [{\"finding\": 1, \"disposition\": \"accept-now\", \"rationale\": \"...\", \"instructions\": \"...\"}]}\n```\n")
	return b.String()
}

// NeedsPerson is the typed blocker of needs-user-decision dispositions
// (ok false: none).
func NeedsPerson(ds []Disposition) (Blocker, bool) {
	asks := Of(ds, DispositionNeedsPerson)
	if len(asks) == 0 {
		return Blocker{}, false
	}
	var qs []string
	for _, d := range asks {
		q := strings.TrimSpace(d.Instructions)
		if q == "" {
			q = d.Rationale
		}
		qs = append(qs, fmt.Sprintf("%s: %s", d.Subject, q))
	}
	b, err := NewBlocker(vocab.BlockerNeedsDecision, "a person must decide: "+strings.Join(qs, "; "))
	return b, err == nil
}

// MilestoneRule is run.auto_approve_milestones with
// run.decision_confidence_threshold.
type MilestoneRule struct {
	Auto      bool    `json:",omitempty"`
	Threshold float64 `json:",omitempty"`
}

// Passes says whether a milestone checkpoint passes without a person,
// and why (or why not): the rule is on, the run is semi-autonomous, the
// plan's ambiguity is LOW, the previous milestone landed (done) without
// a rejection, and its confidence reaches the threshold.
func (r MilestoneRule) Passes(autonomy Autonomy, plan Plan, prev Milestone) (bool, string) {
	conf, rejections := MilestoneConfidence(prev)
	switch {
	case !r.Auto:
		return false, "run.auto_approve_milestones is off"
	case autonomy != AutonomySemi:
		return false, fmt.Sprintf("autonomy %s: milestones pass by rule only under semi", autonomy)
	case plan.Ambiguity != AmbiguityLow:
		return false, fmt.Sprintf("the plan's ambiguity is %s, not LOW", plan.Ambiguity)
	case prev.Status != MilestoneDone:
		return false, fmt.Sprintf("milestone %s has not landed (%s)", prev.ID, prev.Status)
	case rejections > 0:
		return false, fmt.Sprintf("milestone %s had %s", prev.ID, Plural(rejections, "rejected attempt"))
	case conf < r.Threshold:
		return false, fmt.Sprintf("milestone %s's confidence %.2f is below run.decision_confidence_threshold %.2f", prev.ID, conf, r.Threshold)
	}
	return true, fmt.Sprintf("the plan's ambiguity is LOW and milestone %s landed without rejections, confidence %.2f ≥ %.2f (run.auto_approve_milestones)", prev.ID, conf, r.Threshold)
}

// MilestoneConfidence is how sure a run may be that a milestone can start
// without a person: the share of the previous milestone's attempts that
// were accepted (1 when every feature landed on its first attempt), and
// whether any was rejected by its auditor.
func MilestoneConfidence(prev Milestone) (confidence float64, rejections int) {
	attempts, accepted := 0, 0
	for _, f := range prev.Features {
		for _, a := range f.Attempts {
			if a.Action != "" {
				continue
			}
			attempts++
			switch a.Outcome {
			case OutcomeAccepted:
				accepted++
			case OutcomeRejected:
				rejections++
			}
		}
	}
	if attempts == 0 {
		return 0, rejections
	}
	return float64(accepted) / float64(attempts), rejections
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no evidence given)"
	}
	return s
}
