package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// The agent report protocol (ARCHITECTURE.md, "How it works", Agents
// and the report protocol). Each role ends its final message with one fenced block whose
// info string names the kind; the block holds one JSON object, decoded
// straight into the protocol types of package horizon (declared once for
// every layer). Prose around the block is ignored, and prose is never
// parsed for completion. When a message holds several blocks of a kind (a
// model quoting its instructions, then answering) the last one counts.
//
// The parser accepts more fields than it knows, and normalises enumerated
// values with their one parser in package horizon ("Satisfied" →
// "satisfied", "low" → "LOW"); everything else that does not fit is a
// *ProtocolError. A valid block may still be odd (a blocker on a satisfied
// report, a reject without findings): each parser returns such remarks as
// warnings beside the value.

// ParseReport extracts and validates the last horizon-report block of
// text.
func ParseReport(text string) (horizon.Report, []string, error) {
	const kind = horizon.BlockReport
	var r horizon.Report
	if err := decodeBlock(text, kind, &r); err != nil {
		return horizon.Report{}, nil, err
	}
	st, err := horizon.ParseReportStatus(string(r.Status))
	if err != nil {
		return horizon.Report{}, nil, protoErr(kind, err.Error())
	}
	r.Status = st
	if r.Blocker != nil {
		r.Blocker.Type = horizon.BlockerType(strings.TrimSpace(string(r.Blocker.Type)))
		r.Blocker.Evidence = strings.TrimSpace(r.Blocker.Evidence)
		if r.Blocker.Type == "" && r.Blocker.Evidence == "" {
			r.Blocker = nil // models often send an empty placeholder
		}
	}
	var warnings []string
	switch {
	case r.Status == horizon.ReportBlocked && (r.Blocker == nil || r.Blocker.Type == "" || r.Blocker.Evidence == ""):
		return horizon.Report{}, nil, protoErr(kind, fmt.Sprintf("status %q needs a blocker with a non-empty type and evidence", horizon.ReportBlocked))
	case r.Status != horizon.ReportBlocked && r.Blocker != nil:
		warnings = append(warnings, fmt.Sprintf("blocker given with status %q; ignored by the status", r.Status))
	}
	if strings.TrimSpace(r.Summary) == "" {
		warnings = append(warnings, "empty summary")
	}
	return r, warnings, nil
}

// ParseAudit extracts and validates the last horizon-audit block of text.
func ParseAudit(text string) (horizon.Audit, []string, error) {
	const kind = horizon.BlockAudit
	var a horizon.Audit
	if err := decodeBlock(text, kind, &a); err != nil {
		return horizon.Audit{}, nil, err
	}
	v, err := horizon.ParseAuditVerdict(string(a.Verdict))
	if err != nil {
		return horizon.Audit{}, nil, protoErr(kind, err.Error())
	}
	a.Verdict = v
	var warnings []string
	blockers := 0
	for i := range a.Findings {
		f := &a.Findings[i]
		sev, err := horizon.ParseSeverity(string(f.Severity))
		if err != nil {
			return horizon.Audit{}, nil, protoErr(kind, fmt.Sprintf("finding %d %v", i+1, err))
		}
		f.Severity = sev
		if sev == horizon.SeverityBlocker {
			blockers++
		}
		if strings.TrimSpace(f.Note) == "" {
			warnings = append(warnings, fmt.Sprintf("finding %d has no note", i+1))
		}
	}
	for i := range a.Criteria {
		c := &a.Criteria[i]
		st, err := horizon.ParseCriterionStatus(string(c.Status))
		if err != nil {
			return horizon.Audit{}, nil, protoErr(kind, fmt.Sprintf("criterion rating %d %v", i+1, err))
		}
		c.Status, c.Text = st, "" // the criterion's words are the plan's
		if c.Criterion < 1 {
			return horizon.Audit{}, nil, protoErr(kind, fmt.Sprintf("criterion rating %d has no criterion number (1 for the first acceptance criterion)", i+1))
		}
	}
	switch {
	case a.Verdict == horizon.VerdictReject && len(a.Findings) == 0:
		warnings = append(warnings, "reject without findings: the worker gets no guidance")
	case a.Verdict == horizon.VerdictAccept && blockers > 0:
		warnings = append(warnings, fmt.Sprintf("accept with %d blocker finding(s)", blockers))
	}
	return a, warnings, nil
}

// ParseDispositions extracts and validates the last horizon-dispositions
// block of text: each disposition names a finding by its number and has
// a known kind. horizon.Merge then keeps only the findings that were asked.
func ParseDispositions(text string) ([]horizon.Disposition, error) {
	const kind = horizon.BlockDispositions
	var d horizon.Dispositions
	if err := decodeBlock(text, kind, &d); err != nil {
		return nil, err
	}
	for i := range d.Dispositions {
		x := &d.Dispositions[i]
		k, err := horizon.ParseDispositionKind(string(x.Kind))
		if err != nil {
			return nil, protoErr(kind, fmt.Sprintf("disposition %d %v", i+1, err))
		}
		x.Kind = k
		if x.Finding < 1 {
			return nil, protoErr(kind, fmt.Sprintf("disposition %d names no finding (its number in the list)", i+1))
		}
	}
	return d.Dispositions, nil
}

// ParsePlan extracts the last horizon-plan block of text and checks what
// makes it a plan at all (milestones with titles and features, features
// with unique IDs, titles and kinds, an ambiguity). horizon.PlanFromBlock
// then validates it as a plan of the goal.
func ParsePlan(text string) (horizon.PlanBlock, []string, error) {
	const kind = horizon.BlockPlan
	var p horizon.PlanBlock
	if err := decodeBlock(text, kind, &p); err != nil {
		return horizon.PlanBlock{}, nil, err
	}
	if len(p.Milestones) == 0 {
		return horizon.PlanBlock{}, nil, protoErr(kind, "plan has no milestones")
	}
	amb, err := horizon.ParseAmbiguity(string(p.Ambiguity))
	if err != nil {
		return horizon.PlanBlock{}, nil, protoErr(kind, err.Error())
	}
	p.Ambiguity = amb
	var warnings []string
	seen := map[string]string{}
	for mi := range p.Milestones {
		m := &p.Milestones[mi]
		m.Title = strings.TrimSpace(m.Title)
		if m.Title == "" {
			return horizon.PlanBlock{}, nil, protoErr(kind, fmt.Sprintf("milestone %d has no title", mi+1))
		}
		if len(m.Features) == 0 {
			return horizon.PlanBlock{}, nil, protoErr(kind, fmt.Sprintf("milestone %d (%q) has no features", mi+1, m.Title))
		}
		for fi := range m.Features {
			f := &m.Features[fi]
			where := fmt.Sprintf("milestone %d feature %d", mi+1, fi+1)
			f.ID = strings.TrimSpace(f.ID)
			if f.ID == "" {
				return horizon.PlanBlock{}, nil, protoErr(kind, where+" has no id")
			}
			where += fmt.Sprintf(" (id %q)", f.ID)
			if prev, dup := seen[f.ID]; dup {
				return horizon.PlanBlock{}, nil, protoErr(kind, fmt.Sprintf("%s: id is already used by %s", where, prev))
			}
			seen[f.ID] = where
			f.Title = strings.TrimSpace(f.Title)
			if f.Title == "" {
				return horizon.PlanBlock{}, nil, protoErr(kind, where+" has no title")
			}
			k, err := horizon.ParseFeatureKind(string(f.Kind))
			if err != nil {
				return horizon.PlanBlock{}, nil, protoErr(kind, where+" "+err.Error())
			}
			f.Kind = k
			if len(f.Acceptance) == 0 {
				warnings = append(warnings, where+" has no acceptance criteria")
			}
		}
	}
	return p, warnings, nil
}

// ParseAdvice extracts and validates the last horizon-advice block of
// text. An advice without notes is valid (the advisor found nothing to
// say); every note needs a known severity.
func ParseAdvice(text string) (horizon.Advice, []string, error) {
	const kind = horizon.BlockAdvice
	var a horizon.Advice
	if err := decodeBlock(text, kind, &a); err != nil {
		return horizon.Advice{}, nil, err
	}
	var warnings []string
	for i := range a.Notes {
		n := &a.Notes[i]
		sev, err := horizon.ParseSeverity(string(n.Severity))
		if err != nil {
			return horizon.Advice{}, nil, protoErr(kind, fmt.Sprintf("note %d %v", i+1, err))
		}
		n.Severity = sev
		if strings.TrimSpace(n.Note) == "" {
			warnings = append(warnings, fmt.Sprintf("note %d is empty", i+1))
		}
		if e := n.Evidence; e != nil && strings.TrimSpace(e.ObservedFact) == "" {
			warnings = append(warnings, fmt.Sprintf("note %d has evidence without an observed fact", i+1))
		}
	}
	return a, warnings, nil
}

func protoErr(kind horizon.BlockKind, reason string) *ProtocolError {
	return &ProtocolError{Kind: kind, Reason: reason}
}

// decodeBlock finds the last fenced block of kind in text and decodes its
// JSON object into v.
func decodeBlock(text string, kind horizon.BlockKind, v any) error {
	body, ok := lastBlock(text, string(kind))
	if !ok {
		return protoErr(kind, fmt.Sprintf("no ```%s block in the final message", kind))
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return protoErr(kind, fmt.Sprintf("empty %s block", kind))
	}
	if body[0] != '{' {
		return protoErr(kind, fmt.Sprintf("invalid JSON in %s block: want one JSON object, got %q", kind, textio.Head(body, 40)))
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return protoErr(kind, fmt.Sprintf("invalid JSON in %s block: %v", kind, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return protoErr(kind, fmt.Sprintf("invalid JSON in %s block: unexpected data after the object", kind))
	}
	return nil
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
