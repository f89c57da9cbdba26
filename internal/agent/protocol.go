package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The agent report protocol (DESIGN.md, "Contracts: Agent report protocol").
// Each role ends its final message with one fenced block whose info string
// names the kind; the block holds one JSON object. Prose around the block is
// ignored, and prose is never parsed for completion. When a message holds
// several blocks of a kind (a model quoting its instructions, then answering)
// the last one counts.
//
// The parser accepts more fields than it knows (they stay in Raw), and
// normalises the case of enumerated values ("Satisfied" → "satisfied",
// "low" → "LOW"); everything else that does not fit is a *ProtocolError.

// Block kinds: the info string of the fenced block.
const (
	KindPlan   = "horizon-plan"
	KindReport = "horizon-report"
	KindAudit  = "horizon-audit"
)

// Report statuses.
const (
	StatusSatisfied = "satisfied" // the worker believes the feature is done (the gate and auditor decide)
	StatusContinue  = "continue"  // progress was made, more work is needed
	StatusBlocked   = "blocked"   // cannot proceed without a human or an outside change
)

// Audit verdicts.
const (
	VerdictAccept = "accept"
	VerdictReject = "reject"
)

// Finding severities.
const (
	SeverityNit     = "nit"
	SeverityConcern = "concern"
	SeverityBlocker = "blocker"
)

// Feature kinds in a plan.
const (
	FeatureMechanical = "mechanical"
	FeatureBounded    = "bounded"
	FeatureOpen       = "open"
)

// Plan ambiguity levels.
const (
	AmbiguityLow    = "LOW"
	AmbiguityMedium = "MEDIUM"
	AmbiguityHigh   = "HIGH"
)

var (
	reportStatuses = []string{StatusSatisfied, StatusContinue, StatusBlocked}
	auditVerdicts  = []string{VerdictAccept, VerdictReject}
	severities     = []string{SeverityNit, SeverityConcern, SeverityBlocker}
	featureKinds   = []string{FeatureMechanical, FeatureBounded, FeatureOpen}
	ambiguities    = []string{AmbiguityLow, AmbiguityMedium, AmbiguityHigh}
)

// Report is the worker's horizon-report.
type Report struct {
	Status  string   `json:"status"`
	Summary string   `json:"summary,omitempty"`
	Blocker *Blocker `json:"blocker,omitempty"`

	Raw      json.RawMessage `json:"-"` // the block's JSON, extra fields included
	Warnings []string        `json:"-"` // valid but odd (e.g. a blocker on a satisfied report)
}

// Blocker is a typed reason the worker cannot go on, with evidence.
type Blocker struct {
	Type     string `json:"type"`
	Evidence string `json:"evidence"`
}

// Audit is the auditor's horizon-audit.
type Audit struct {
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`

	Raw      json.RawMessage `json:"-"`
	Warnings []string        `json:"-"` // e.g. a reject without findings
}

// Finding is one auditor remark.
type Finding struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity"`
	Note     string `json:"note"`
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
	f.Line = 0
	raw := strings.Trim(strings.TrimSpace(string(aux.Line)), `"`)
	if raw == "" || raw == "null" {
		return nil
	}
	n, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return fmt.Errorf("finding line %s is not a number", aux.Line)
	}
	if n > 0 && n < 1<<31 {
		f.Line = int(n)
	}
	return nil
}

// Plan is the lead's horizon-plan.
type Plan struct {
	Milestones  []Milestone `json:"milestones"`
	Ambiguity   string      `json:"ambiguity"`
	Assumptions []string    `json:"assumptions,omitempty"`

	Raw      json.RawMessage `json:"-"`
	Warnings []string        `json:"-"`
}

// Milestone groups features that land together.
type Milestone struct {
	Title    string        `json:"title"`
	Features []PlanFeature `json:"features"`
}

// PlanFeature is one atomic feature as the lead planned it.
type PlanFeature struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Acceptance []string `json:"acceptance,omitempty"`
	Paths      []string `json:"paths,omitempty"`
	Kind       string   `json:"kind"`
}

// ParseReport extracts and validates the last horizon-report block of text.
func ParseReport(text string) (Report, error) {
	var r Report
	raw, err := decodeBlock(text, KindReport, &r)
	if err != nil {
		return Report{}, err
	}
	r.Raw = raw
	r.Status = strings.ToLower(strings.TrimSpace(r.Status))
	if err := checkEnum(KindReport, "status", r.Status, reportStatuses); err != nil {
		return Report{}, err
	}
	if r.Blocker != nil {
		r.Blocker.Type = strings.TrimSpace(r.Blocker.Type)
		r.Blocker.Evidence = strings.TrimSpace(r.Blocker.Evidence)
		if r.Blocker.Type == "" && r.Blocker.Evidence == "" {
			r.Blocker = nil // models often send an empty placeholder
		}
	}
	switch {
	case r.Status == StatusBlocked && (r.Blocker == nil || r.Blocker.Type == "" || r.Blocker.Evidence == ""):
		return Report{}, protoErr(KindReport, `status "blocked" needs a blocker with a non-empty type and evidence`)
	case r.Status != StatusBlocked && r.Blocker != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("blocker given with status %q; ignored by the status", r.Status))
	}
	if strings.TrimSpace(r.Summary) == "" {
		r.Warnings = append(r.Warnings, "empty summary")
	}
	return r, nil
}

// ParseAudit extracts and validates the last horizon-audit block of text.
func ParseAudit(text string) (Audit, error) {
	var a Audit
	raw, err := decodeBlock(text, KindAudit, &a)
	if err != nil {
		return Audit{}, err
	}
	a.Raw = raw
	a.Verdict = strings.ToLower(strings.TrimSpace(a.Verdict))
	if err := checkEnum(KindAudit, "verdict", a.Verdict, auditVerdicts); err != nil {
		return Audit{}, err
	}
	blockers := 0
	for i := range a.Findings {
		f := &a.Findings[i]
		f.Severity = strings.ToLower(strings.TrimSpace(f.Severity))
		if err := checkEnum(KindAudit, fmt.Sprintf("finding %d severity", i+1), f.Severity, severities); err != nil {
			return Audit{}, err
		}
		if f.Severity == SeverityBlocker {
			blockers++
		}
		if strings.TrimSpace(f.Note) == "" {
			a.Warnings = append(a.Warnings, fmt.Sprintf("finding %d has no note", i+1))
		}
	}
	switch {
	case a.Verdict == VerdictReject && len(a.Findings) == 0:
		a.Warnings = append(a.Warnings, "reject without findings: the worker gets no guidance")
	case a.Verdict == VerdictAccept && blockers > 0:
		a.Warnings = append(a.Warnings, fmt.Sprintf("accept with %d blocker finding(s)", blockers))
	}
	return a, nil
}

// ParsePlan extracts and validates the last horizon-plan block of text.
func ParsePlan(text string) (Plan, error) {
	var p Plan
	raw, err := decodeBlock(text, KindPlan, &p)
	if err != nil {
		return Plan{}, err
	}
	p.Raw = raw
	if len(p.Milestones) == 0 {
		return Plan{}, protoErr(KindPlan, "plan has no milestones")
	}
	p.Ambiguity = strings.ToUpper(strings.TrimSpace(p.Ambiguity))
	if err := checkEnum(KindPlan, "ambiguity", p.Ambiguity, ambiguities); err != nil {
		return Plan{}, err
	}
	seen := map[string]string{}
	for mi := range p.Milestones {
		m := &p.Milestones[mi]
		m.Title = strings.TrimSpace(m.Title)
		if m.Title == "" {
			return Plan{}, protoErr(KindPlan, fmt.Sprintf("milestone %d has no title", mi+1))
		}
		if len(m.Features) == 0 {
			return Plan{}, protoErr(KindPlan, fmt.Sprintf("milestone %d (%q) has no features", mi+1, m.Title))
		}
		for fi := range m.Features {
			f := &m.Features[fi]
			where := fmt.Sprintf("milestone %d feature %d", mi+1, fi+1)
			f.ID = strings.TrimSpace(f.ID)
			if f.ID == "" {
				return Plan{}, protoErr(KindPlan, where+" has no id")
			}
			where += fmt.Sprintf(" (id %q)", f.ID)
			if prev, dup := seen[f.ID]; dup {
				return Plan{}, protoErr(KindPlan, fmt.Sprintf("%s: id is already used by %s", where, prev))
			}
			seen[f.ID] = where
			f.Title = strings.TrimSpace(f.Title)
			if f.Title == "" {
				return Plan{}, protoErr(KindPlan, where+" has no title")
			}
			f.Kind = strings.ToLower(strings.TrimSpace(f.Kind))
			if err := checkEnum(KindPlan, where+" kind", f.Kind, featureKinds); err != nil {
				return Plan{}, err
			}
			if len(f.Acceptance) == 0 {
				p.Warnings = append(p.Warnings, where+" has no acceptance criteria")
			}
		}
	}
	return p, nil
}

func protoErr(kind, reason string) *ProtocolError {
	return &ProtocolError{Kind: kind, Reason: reason}
}

func checkEnum(kind, field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	if v == "" {
		return protoErr(kind, fmt.Sprintf("%s is missing (one of %s)", field, strings.Join(allowed, "|")))
	}
	return protoErr(kind, fmt.Sprintf("%s %q is not one of %s", field, v, strings.Join(allowed, "|")))
}

// decodeBlock finds the last fenced block of kind in text and decodes its
// JSON object into v. It returns the block's JSON.
func decodeBlock(text, kind string, v any) (json.RawMessage, error) {
	body, ok := lastBlock(text, kind)
	if !ok {
		return nil, protoErr(kind, fmt.Sprintf("no ```%s block in the final message", kind))
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, protoErr(kind, fmt.Sprintf("empty %s block", kind))
	}
	if body[0] != '{' {
		return nil, protoErr(kind, fmt.Sprintf("invalid JSON in %s block: want one JSON object, got %q", kind, clip(body, 40)))
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return nil, protoErr(kind, fmt.Sprintf("invalid JSON in %s block: %v", kind, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, protoErr(kind, fmt.Sprintf("invalid JSON in %s block: unexpected data after the object", kind))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(body)); err != nil {
		return nil, protoErr(kind, fmt.Sprintf("invalid JSON in %s block: %v", kind, err))
	}
	return json.RawMessage(compact.Bytes()), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// fencedBlock is one fenced code block of a Markdown text.
type fencedBlock struct {
	Info string
	Body string
}

// lastBlock returns the body of the last fenced block whose info string is
// exactly kind.
func lastBlock(text, kind string) (string, bool) {
	blocks := fencedBlocks(text)
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Info == kind {
			return blocks[i].Body, true
		}
	}
	return "", false
}

// fencedBlocks lists the fenced code blocks of a Markdown text, roughly as
// CommonMark does: a fence is a line of three or more backticks or tildes
// (any indentation is tolerated, since models indent blocks inside lists);
// the block ends at a line of the same character, at least as long, with
// nothing after it, or at the end of the text. Lines inside a block are
// never fences, so a block quoted inside a longer fence is not a block.
func fencedBlocks(text string) []fencedBlock {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var (
		blocks []fencedBlock
		in     bool
		ch     byte
		n      int
		info   string
		body   []string
	)
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		c, cnt := fenceRun(t)
		if !in {
			if cnt < 3 {
				continue
			}
			rest := t[cnt:]
			if c == '`' && strings.ContainsRune(rest, '`') {
				continue // inline code such as ```x``` is not a fence
			}
			in, ch, n, info, body = true, c, cnt, strings.TrimSpace(rest), nil
			continue
		}
		if c == ch && cnt >= n && strings.TrimSpace(t[cnt:]) == "" {
			blocks = append(blocks, fencedBlock{Info: info, Body: strings.Join(body, "\n")})
			in = false
			continue
		}
		body = append(body, line)
	}
	if in {
		blocks = append(blocks, fencedBlock{Info: info, Body: strings.Join(body, "\n")})
	}
	return blocks
}

// fenceRun returns the fence character at the start of s and how many times
// it repeats, or 0 when s does not start with ` or ~.
func fenceRun(s string) (byte, int) {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0
	}
	c := s[0]
	i := 0
	for i < len(s) && s[i] == c {
		i++
	}
	return c, i
}
