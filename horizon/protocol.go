package horizon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/horizon/horizon/horizon/vocab"
)

// The agent report protocol (ARCHITECTURE.md, "How it works", Agents
// and the report protocol), declared once for every layer: internal/agent decodes the
// fenced blocks of a model's final message straight into these types, the
// activities hand them to the workflows, and the workflows keep them in the
// run's state (Temporal history) and show them. Their JSON is the wire
// format of the blocks and of recorded histories, so field names and
// string values never change; new fields are optional.
//
// Each enumeration has one parser (ParseReportStatus, ParseFeatureKind,
// ...), which forgives case and surrounding spaces and otherwise fails
// with a *ValueError naming the accepted values. Decoding JSON does not
// validate (a recorded history must always decode); the block parsers and
// the CLI call the Parse functions.

// BlockKind is the info string of a fenced protocol block.
type BlockKind string

// Block kinds, one per role that answers in a block.
const (
	BlockPlan   BlockKind = "horizon-plan"   // the lead's plan
	BlockReport BlockKind = "horizon-report" // the worker's claim
	BlockAudit  BlockKind = "horizon-audit"  // the auditor's verdict
	BlockAdvice BlockKind = "horizon-advice" // an advisor's review notes
	// BlockDispositions is the lead's decision on audit findings the
	// deterministic rule left open (Rule).
	BlockDispositions BlockKind = "horizon-dispositions"
	// BlockSpecialist is the lead's draft of a specialist manifest
	// (`horizon specialist generate`): the manifest itself, frontmatter
	// and prompt, not JSON.
	BlockSpecialist BlockKind = "horizon-specialist"
)

// ReportStatus is what a worker claims about its feature. It is a claim,
// never a verdict: the gate and the auditor decide.
type ReportStatus string

// Report statuses.
const (
	ReportSatisfied ReportStatus = "satisfied" // the worker believes the feature is done
	ReportContinue  ReportStatus = "continue"  // progress was made, more work is needed
	ReportBlocked   ReportStatus = "blocked"   // cannot proceed without a human or an outside change
)

// AuditVerdict is the auditor's decision on a change.
type AuditVerdict string

// Audit verdicts.
const (
	VerdictAccept AuditVerdict = "accept"
	VerdictReject AuditVerdict = "reject"
)

// Severity grades an auditor's finding or an advisor's note.
type Severity string

// Severities, from least to most serious.
const (
	SeverityNit     Severity = "nit"
	SeverityConcern Severity = "concern"
	SeverityBlocker Severity = "blocker"
)

// FeatureKind tells the routing ladder how much model a feature is likely
// to need (vocab.FeatureKind).
type FeatureKind = vocab.FeatureKind

// Feature kinds (spelled as in the horizon-plan block).
const (
	KindMechanical = vocab.KindMechanical
	KindBounded    = vocab.KindBounded
	KindOpen       = vocab.KindOpen
)

// Ambiguity is the lead's classification of how much of the goal had to be
// assumed. HIGH makes semi and supervised runs wait for plan approval.
type Ambiguity string

// Ambiguity levels (spelled as in the horizon-plan block).
const (
	AmbiguityLow    Ambiguity = "LOW"
	AmbiguityMedium Ambiguity = "MEDIUM"
	AmbiguityHigh   Ambiguity = "HIGH"
)

var (
	reportStatuses = []ReportStatus{ReportSatisfied, ReportContinue, ReportBlocked}
	auditVerdicts  = []AuditVerdict{VerdictAccept, VerdictReject}
	severities     = []Severity{SeverityNit, SeverityConcern, SeverityBlocker}
	featureKinds   = []FeatureKind{KindMechanical, KindBounded, KindOpen}
	ambiguities    = []Ambiguity{AmbiguityLow, AmbiguityMedium, AmbiguityHigh}
)

// ParseReportStatus reads a report status (case and spaces forgiven).
func ParseReportStatus(s string) (ReportStatus, error) {
	return parseEnum("status", s, strings.ToLower, reportStatuses)
}

// ParseAuditVerdict reads an audit verdict (case and spaces forgiven).
func ParseAuditVerdict(s string) (AuditVerdict, error) {
	return parseEnum("verdict", s, strings.ToLower, auditVerdicts)
}

// ParseSeverity reads a finding's or note's severity (case and spaces
// forgiven).
func ParseSeverity(s string) (Severity, error) {
	return parseEnum("severity", s, strings.ToLower, severities)
}

// ParseFeatureKind reads a feature kind (case and spaces forgiven), from a
// plan block or the CLI's --kind.
func ParseFeatureKind(s string) (FeatureKind, error) {
	return parseEnum("kind", s, strings.ToLower, featureKinds)
}

// ParseAmbiguity reads an ambiguity level (case and spaces forgiven).
func ParseAmbiguity(s string) (Ambiguity, error) {
	return parseEnum("ambiguity", s, strings.ToUpper, ambiguities)
}

// parseEnum is the one parser behind the Parse functions: s trimmed and
// folded must be one of allowed. The error quotes s as given.
func parseEnum[T ~string](field, s string, fold func(string) string, allowed []T) (T, error) {
	v := T(fold(strings.TrimSpace(s)))
	if slices.Contains(allowed, v) {
		return v, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", &ValueError{Field: field, Value: s, Allowed: names}
}

// The enumerations decode from JSON strings through wireString, so a
// model that sends a number where a status belongs is told "of type
// string" (the wire's type) rather than a Go type name it cannot know.

// UnmarshalJSON decodes a JSON string.
func (s *ReportStatus) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(s)) }

// UnmarshalJSON decodes a JSON string.
func (v *AuditVerdict) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(v)) }

// UnmarshalJSON decodes a JSON string.
func (s *Severity) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(s)) }

// UnmarshalJSON decodes a JSON string.
func (a *Ambiguity) UnmarshalJSON(b []byte) error { return wireString(b, (*string)(a)) }

// wireString decodes a JSON string into dst (vocab.DecodeString).
func wireString(b []byte, dst *string) error { return vocab.DecodeString(b, dst) }

// Report is the worker's horizon-report block: a claim, never a verdict.
type Report struct {
	Status  ReportStatus `json:"status"`
	Summary string       `json:"summary,omitempty"`
	Blocker *Blocker     `json:"blocker,omitempty"`
}

// Blocker is a typed reason the work cannot go on, with evidence. Its type
// is one of the Blocker* constants once checked (NewBlocker); a worker's
// report may carry any spelling until then.
type Blocker struct {
	Type     BlockerType `json:"type"`
	Evidence string      `json:"evidence"`
}

// Audit is the auditor's horizon-audit block.
type Audit struct {
	Verdict  AuditVerdict `json:"verdict"`
	Findings []Finding    `json:"findings,omitempty"`
	// Criteria rate the feature's acceptance criteria, one per criterion
	// (Receipt reads them against the plan).
	Criteria []CriterionRating `json:"criteria,omitempty"`
}

// Dispositions is the lead's horizon-dispositions block.
type Dispositions struct {
	Dispositions []Disposition `json:"dispositions"`
}

// Accepted reports an accept verdict.
func (a *Audit) Accepted() bool { return a != nil && a.Verdict == VerdictAccept }

// Finding is one auditor remark.
type Finding struct {
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Severity Severity `json:"severity"`
	Note     string   `json:"note"`
	// Confirmed is horizon's, never the auditor's: the file exists in the
	// lane and holds the line (set by the audit's activity; the rule
	// trusts a blocker only with it).
	Confirmed bool `json:"confirmed,omitempty"`
}

// UnmarshalJSON accepts a line given as a number, a numeric string or null,
// since models are loose about it and the line is only a pointer for humans.
func (f *Finding) UnmarshalJSON(b []byte) error {
	type plain Finding
	var aux struct {
		plain
		Line json.RawMessage `json:"line"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*f = Finding(aux.plain)
	line, err := looseLine("finding", aux.Line)
	f.Line = line
	return err
}

// looseLine reads the line of a finding or evidence (what), given as a
// number, a numeric string or null; a value out of range is no line (0).
func looseLine(what string, raw json.RawMessage) (int, error) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || s == "null" {
		return 0, nil
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s line %s is not a number", what, raw)
	}
	if n > 0 && n < 1<<31 {
		return int(n), nil
	}
	return 0, nil
}

// PlanBlock is the lead's horizon-plan block. PlanFromBlock validates it
// into a Plan. Besides the fields every plan carries it reads the
// optional milestone id and feature depends_on.
type PlanBlock struct {
	Milestones  []PlanBlockMilestone `json:"milestones"`
	Ambiguity   Ambiguity            `json:"ambiguity"`
	Assumptions []string             `json:"assumptions,omitempty"`
}

// PlanBlockMilestone is one milestone of a horizon-plan block.
type PlanBlockMilestone struct {
	ID       string             `json:"id,omitempty"`
	Title    string             `json:"title"`
	Features []PlanBlockFeature `json:"features"`
}

// PlanBlockFeature is one atomic feature as the lead planned it.
type PlanBlockFeature struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	Acceptance []string    `json:"acceptance,omitempty"`
	Paths      []string    `json:"paths,omitempty"`
	Kind       FeatureKind `json:"kind"`
	DependsOn  []string    `json:"depends_on,omitempty"`
}

// Advice is an advisor's horizon-advice block: review notes on work in
// progress, each graded by severity and, where the advisor checked a fact,
// backed by evidence. Advice informs; it never decides an attempt.
type Advice struct {
	Notes []AdviceNote `json:"notes"`
}

// AdviceNote is one remark of an advisor.
type AdviceNote struct {
	Severity Severity `json:"severity"`
	Note     string   `json:"note"`
	// Evidence is what the advisor observed in the code; nil when the note
	// rests on no checked fact.
	Evidence       *AdviceEvidence `json:"evidence"`
	SuggestedPatch string          `json:"suggested_patch,omitempty"`
}

// AdviceEvidence is a fact an advisor observed at a place in the code.
type AdviceEvidence struct {
	File         string `json:"file,omitempty"`
	Line         int    `json:"line,omitempty"`
	ObservedFact string `json:"observed_fact"`
}

// UnmarshalJSON accepts a line given as a number, a numeric string or null,
// as Finding does.
func (e *AdviceEvidence) UnmarshalJSON(b []byte) error {
	type plain AdviceEvidence
	var aux struct {
		plain
		Line json.RawMessage `json:"line"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*e = AdviceEvidence(aux.plain)
	line, err := looseLine("evidence", aux.Line)
	e.Line = line
	return err
}
