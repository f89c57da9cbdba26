package horizon

import (
	"fmt"
	"strings"
	"time"
)

// HandoffInput is everything the final handoff reports on. It is plain
// data gathered by the caller (plan from the workflow state, receipt
// verdicts and decisions from the run's files), so the rendering stays
// pure and golden-testable.
type HandoffInput struct {
	RunID  string
	Status Status
	Reason string // why the run ended, if not completed
	// Branch is the integration branch; empty means IntegrationBranch(RunID).
	Branch    string
	Plan      Plan
	Decisions []Decision
	// ReceiptVerdicts maps receipt IDs to the verdict recorded in the run's
	// receipts.jsonl. When set, it is the authority: a feature is verified
	// only if the receipt of its passing attempt is in it with verdict
	// pass, and the verdicts shown come from it. When nil, the gate
	// summaries stored on the attempts (built from receipts by the
	// workflow, never by a model) are used.
	ReceiptVerdicts map[string]string
	// Baseline is the gate run on the base commit, before any change.
	Baseline *GateRun
	// Integration is the final gate run on the integration branch's tip,
	// after every feature was accepted; nil when none ran (a single-feature
	// run, or a run that ended before).
	Integration *GateRun
	// SkippedChecks are checks that were wanted but not run (a lint
	// command not configured, a check not permitted), in words.
	SkippedChecks []string
	// Usage is the run's total; zero means the sum of the plan's attempts.
	Usage Usage
}

// verification is what the receipts say about one feature.
type verification struct {
	ok      bool
	attempt Attempt // the verified attempt when ok
	verdict string  // that attempt's receipt verdict when ok
	why     string  // why not, when not ok
}

// verify applies the rule that decides what the handoff may claim: a
// feature is verified only by an attempt whose gate passed, with a receipt
// (confirmed by the ledger when one is given), and whose independent audit
// accepted. The feature's status is not evidence.
func (in HandoffInput) verify(f Feature) verification {
	why := "no attempt was recorded"
	if len(f.Attempts) > 0 {
		why = "no attempt passed the gate"
	}
	found := false
	for i := len(f.Attempts) - 1; i >= 0; i-- {
		a := f.Attempts[i]
		if !a.Gate.Passed() {
			continue
		}
		verdict := a.Gate.Verdict
		var reason string
		switch id := a.Gate.ReceiptID; {
		case id == "":
			reason = fmt.Sprintf("attempt %d's passing gate has no receipt", a.N)
		case in.ReceiptVerdicts != nil:
			v, ok := in.ReceiptVerdicts[id]
			verdict = v
			switch {
			case !ok:
				reason = fmt.Sprintf("receipt `%s` of attempt %d is not in the receipt ledger", id, a.N)
			case v != "pass":
				reason = fmt.Sprintf("receipt `%s` of attempt %d records verdict %s", id, a.N, v)
			}
		}
		if reason == "" && !a.Audit.Accepted() {
			reason = fmt.Sprintf("the auditor did not accept attempt %d", a.N)
			if a.Audit == nil {
				reason = fmt.Sprintf("attempt %d was not audited", a.N)
			}
		}
		if reason == "" {
			return verification{ok: true, attempt: a, verdict: verdict}
		}
		if !found { // report the latest candidate's reason
			why, found = reason, true
		}
	}
	return verification{why: why}
}

// handoffItem is a feature with what the receipts say about it.
type handoffItem struct {
	f Feature
	v verification
}

// lastGate returns the feature's last attempt that ran the gate.
func lastGate(f Feature) (Attempt, bool) {
	for i := len(f.Attempts) - 1; i >= 0; i-- {
		if f.Attempts[i].Gate != nil {
			return f.Attempts[i], true
		}
	}
	return Attempt{}, false
}

// handoffView is a run sorted for the handoff: its features grouped by what
// the receipts say about them, and the branch they landed on.
type handoffView struct {
	branch                                        string
	completed, unverified, skipped, blocked, open []handoffItem
}

// view sorts the plan's features for the handoff.
func (in HandoffInput) view() handoffView {
	v := handoffView{branch: in.Branch}
	if v.branch == "" {
		v.branch = IntegrationBranch(in.RunID)
	}
	for _, f := range in.Plan.features() {
		it := handoffItem{f: f, v: in.verify(f)}
		switch f.Status {
		case FeatureDecomposed:
		case FeatureAccepted:
			if it.v.ok {
				v.completed = append(v.completed, it)
			} else {
				v.unverified = append(v.unverified, it)
			}
		case FeatureSkipped:
			v.skipped = append(v.skipped, it)
		case FeatureBlocked:
			v.blocked = append(v.blocked, it)
		default:
			v.open = append(v.open, it)
		}
	}
	return v
}

// handoffSection writes one section of the handoff; a section with nothing
// to say writes nothing (or says "None", where its absence would mislead).
type handoffSection func(b *strings.Builder, in HandoffInput, v handoffView)

// handoffSections are the handoff's sections, in order.
var handoffSections = []struct {
	name  string
	write handoffSection
}{
	{"header", handoffHeader},
	{"completed", handoffCompleted},
	{"unverified", handoffUnverified},
	{"skipped", handoffSkipped},
	{"deferred", handoffDeferred},
	{"blocked", handoffBlocked},
	{"open", handoffOpen},
	{"asked", handoffAsked},
	{"research", handoffResearch},
	{"integration", handoffIntegration},
	{"decisions", handoffDecisions},
	{"assumptions", handoffAssumptions},
	{"risks", handoffRisks},
	{"cost", handoffCost},
	{"resume", handoffResume},
}

// Handoff renders the final Markdown handoff of a run: what was completed
// (with commit, receipts and verdicts), skipped, blocked or left, the
// decisions and assumptions, the residual risks, the cost and how to go
// on. It claims nothing the receipts do not show: a feature marked
// accepted without a passing gate receipt and an accepting audit is listed
// as NOT verified, never as completed.
func Handoff(in HandoffInput) string {
	v := in.view()
	var b strings.Builder
	for _, s := range handoffSections {
		s.write(&b, in, v)
	}
	return Safe(b.String())
}

// handoffHeader: title, run, status, branch, plan counts and warnings.
func handoffHeader(b *strings.Builder, in HandoffInput, v handoffView) {
	p := in.Plan
	fmt.Fprintf(b, "# Horizon handoff: %s\n\n", dash(oneLine(p.Goal)))
	fmt.Fprintf(b, "- **Run:** `%s`\n", in.RunID)
	status := string(in.Status)
	if status == "" {
		status = "unknown"
	}
	if r := oneLine(in.Reason); r != "" {
		status += " — " + r
	}
	fmt.Fprintf(b, "- **Status:** %s\n", status)
	fmt.Fprintf(b, "- **Branch:** `%s`\n", v.branch)
	c := p.Counts()
	fmt.Fprintf(b, "- **Plan:** revision %d, ambiguity %s, %d feature(s): %d verified, %d not verified, %d skipped, %d blocked, %d not finished\n",
		p.Revision, dash(string(p.Ambiguity)), c.Work(), len(v.completed), len(v.unverified), len(v.skipped), len(v.blocked), len(v.open))
	if len(v.unverified) > 0 {
		fmt.Fprintf(b, "\n**Warning:** %d feature(s) marked accepted are NOT verified by the receipts; they are listed under \"Not verified\" and are not claimed as done.\n", len(v.unverified))
	}
	if _, _, ok := p.Next(); ok {
		b.WriteString("\n**Note:** runnable work remains; this handoff describes an unfinished run.\n")
	}
	b.WriteString("\nVerified means the repository's gate passed, with a receipt, and an independent read-only auditor accepted the change. Nothing here is claimed beyond those receipts and audits.\n")
}

// handoffCompleted: the verified features with commit, receipts and audit.
func handoffCompleted(b *strings.Builder, _ HandoffInput, v handoffView) {
	b.WriteString("\n## Completed (verified)\n\n")
	if len(v.completed) == 0 {
		b.WriteString("- None.\n")
	}
	for _, it := range v.completed {
		f, a := it.f, it.v.attempt
		commit := "no commit recorded"
		if f.Commit != "" {
			commit = fmt.Sprintf("commit `%s`", f.Commit)
		}
		fmt.Fprintf(b, "- **%s** %s%s — %s; gate %s (receipt `%s`, attempt %d); audit %s\n", f.ID, f.Title, partOf(f), commit, it.v.verdict, a.Gate.ReceiptID, a.N, a.Audit.Verdict)
		if len(f.ReceiptIDs) > 0 {
			fmt.Fprintf(b, "  - receipts: %s\n", codeList(f.ReceiptIDs))
		}
		rated := map[int]CriterionRating{}
		for _, r := range a.Criteria {
			rated[r.Criterion] = r
		}
		for i, ac := range f.Acceptance {
			fmt.Fprintf(b, "  - acceptance: %s", oneLine(ac))
			if r, ok := rated[i+1]; ok {
				fmt.Fprintf(b, " — %s", r.Status)
				if r.Evidence != "" {
					fmt.Fprintf(b, " (%s)", oneLine(r.Evidence))
				}
			}
			b.WriteString("\n")
		}
	}
}

// handoffUnverified: features marked accepted that the receipts do not back.
func handoffUnverified(b *strings.Builder, _ HandoffInput, v handoffView) {
	if len(v.unverified) == 0 {
		return
	}
	b.WriteString("\n## Not verified\n\n")
	for _, it := range v.unverified {
		fmt.Fprintf(b, "- **%s** %s%s — marked accepted, but NOT verified: %s", it.f.ID, it.f.Title, partOf(it.f), it.v.why)
		if it.f.Commit != "" {
			fmt.Fprintf(b, "; commit `%s` is unverified", it.f.Commit)
		}
		b.WriteString("\n")
		if len(it.f.ReceiptIDs) > 0 {
			fmt.Fprintf(b, "  - receipts: %s\n", codeList(it.f.ReceiptIDs))
		}
	}
}

// handoffSkipped: features skipped, with why.
func handoffSkipped(b *strings.Builder, _ HandoffInput, v handoffView) {
	if len(v.skipped) == 0 {
		return
	}
	b.WriteString("\n## Skipped\n\n")
	for _, it := range v.skipped {
		fmt.Fprintf(b, "- **%s** %s%s — %s\n", it.f.ID, it.f.Title, partOf(it.f), dash(oneLine(it.f.Note)))
		if a := it.f.LastAudited(); a != nil {
			for _, r := range Unmet(a.Criteria) {
				fmt.Fprintf(b, "  - left unmet: criterion %d, %s — %s\n", r.Criterion, oneLine(r.Text), r.Status)
			}
		}
	}
}

// handoffDeferred: findings decided as deferred (an accepted audit's
// among them), kept for later work, once each.
func handoffDeferred(b *strings.Builder, in HandoffInput, _ handoffView) {
	ds := Deferred(in.Plan)
	if len(ds) == 0 {
		return
	}
	b.WriteString("\n## Deferred findings\n\nRight, but not needed for the change they were found on; kept here so they are not lost.\n\n")
	for _, d := range ds {
		fmt.Fprintf(b, "- **%s** %s — %s\n", d.Feature, oneLine(d.Subject), oneLine(d.Rationale))
	}
}

// DeferredFinding is a deferred finding with the feature it was found on.
type DeferredFinding struct {
	Feature string
	Disposition
}

// Deferred lists the plan's deferred findings, in plan order, each once
// (the same finding deferred on several attempts is one).
func Deferred(p Plan) []DeferredFinding {
	var out []DeferredFinding
	seen := map[string]bool{}
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			for _, a := range f.Attempts {
				for _, d := range a.Dispositions {
					if d.Kind != DispositionDefer || seen[f.ID+"\x00"+d.Subject] {
						continue
					}
					seen[f.ID+"\x00"+d.Subject] = true
					out = append(out, DeferredFinding{Feature: f.ID, Disposition: d})
				}
			}
		}
	}
	return out
}

// handoffBlocked: blocked features with their typed blocker and evidence.
func handoffBlocked(b *strings.Builder, _ HandoffInput, v handoffView) {
	if len(v.blocked) == 0 {
		return
	}
	b.WriteString("\n## Blocked\n\n")
	for _, it := range v.blocked {
		typ, ev := "untyped", "no evidence recorded"
		if bl := it.f.Blocker; bl != nil {
			typ, ev = dash(string(bl.Type)), dash(oneLine(bl.Evidence))
		}
		fmt.Fprintf(b, "- **%s** %s%s — `%s`: %s (after %s)\n", it.f.ID, it.f.Title, partOf(it.f), typ, ev, Plural(it.f.AttemptCount(), "attempt"))
	}
}

// handoffOpen: features not finished, with what they wait on.
func handoffOpen(b *strings.Builder, in HandoffInput, v handoffView) {
	if len(v.open) == 0 {
		return
	}
	p := in.Plan
	b.WriteString("\n## Not finished\n\n")
	for _, it := range v.open {
		f := it.f
		st := string(f.Status)
		if st == "" {
			st = string(FeaturePending)
		}
		fmt.Fprintf(b, "- **%s** %s%s — %s, %s", f.ID, f.Title, partOf(f), st, Plural(f.AttemptCount(), "attempt"))
		if f.Strategy != "" {
			fmt.Fprintf(b, ", next strategy: %s", f.Strategy.Title())
		}
		if held := p.HeldBy(f.ID); len(held) > 0 {
			for i, id := range held {
				h, _ := p.Feature(id)
				held[i] = fmt.Sprintf("%s (%s)", id, h.Status)
			}
			fmt.Fprintf(b, "; waits on %s", strings.Join(held, ", "))
		}
		if it.v.ok {
			b.WriteString("; an attempt passed the gate and the audit but the feature was not accepted")
		}
		b.WriteString("\n")
	}
}

// handoffAsked: what the workers asked a person for and were refused,
// per feature and attempt.
func handoffAsked(b *strings.Builder, in HandoffInput, _ handoffView) {
	var asks strings.Builder
	for _, f := range in.Plan.features() {
		asks.WriteString(asksMarkdown(f.ID, f.Attempts))
	}
	if asks.Len() == 0 {
		return
	}
	b.WriteString("\n## " + asksHeading + "\n\n" + asks.String())
}

// handoffResearch: per feature that had one, its latest research (the
// notes' file and how many sources were fetched).
func handoffResearch(b *strings.Builder, in HandoffInput, _ handoffView) {
	if r := researchMarkdown(in.Plan.features()); r != "" {
		b.WriteString("\n## Research\n\n" + r)
	}
}

// handoffIntegration: the final gate on the integration branch, if it ran.
func handoffIntegration(b *strings.Builder, in HandoffInput, v handoffView) {
	g := in.Integration
	if g == nil {
		return
	}
	verdict, why := in.integrationVerdict()
	b.WriteString("\n## Integration gate\n\n")
	fmt.Fprintf(b, "- **Verdict:** %s (exit %d) on the tip of `%s`", dash(verdict), g.ExitCode, v.branch)
	if note := g.failedPartsNote(); note != "" {
		fmt.Fprintf(b, "; %s", note)
	}
	if why != "" {
		fmt.Fprintf(b, " — NOT backed by a receipt: %s", why)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- **Receipt:** `%s`\n", dash(g.ReceiptID))
	fmt.Fprintf(b, "- **Command:** `%s`\n", dash(oneLine(g.Command)))
}

// handoffDecisions: the run's decisions with their evidence.
func handoffDecisions(b *strings.Builder, in HandoffInput, _ handoffView) {
	b.WriteString("\n## Decisions\n\n")
	if len(in.Decisions) == 0 {
		b.WriteString("- None recorded.\n")
	}
	for _, d := range in.Decisions {
		fmt.Fprintf(b, "- %s", d.At.UTC().Format(time.RFC3339))
		if d.Feature != "" {
			fmt.Fprintf(b, " · %s", d.Feature)
		}
		fmt.Fprintf(b, " · %s — %s", dash(oneLine(d.What)), dash(oneLine(d.Why)))
		if len(d.Evidence) > 0 {
			earlier := ""
			if d.Earlier > 0 {
				earlier = fmt.Sprintf(" and %d earlier", d.Earlier)
			}
			fmt.Fprintf(b, " (evidence: %s%s)", oneLine(strings.Join(d.Evidence, ", ")), earlier)
		}
		b.WriteString("\n")
	}
}

// handoffAssumptions: the plan's assumptions.
func handoffAssumptions(b *strings.Builder, in HandoffInput, _ handoffView) {
	b.WriteString("\n## Assumptions\n\n")
	if len(in.Plan.Assumptions) == 0 {
		b.WriteString("- None recorded.\n")
	}
	for _, a := range in.Plan.Assumptions {
		fmt.Fprintf(b, "- %s\n", oneLine(a))
	}
}

// handoffRisks: what the receipts and audits leave open.
func handoffRisks(b *strings.Builder, in HandoffInput, v handoffView) {
	b.WriteString("\n## Residual risks\n\n")
	risks := in.risks(v.branch, v.completed, v.open, v.blocked)
	if len(risks) == 0 {
		b.WriteString("- None recorded in the receipts and audits (not a guarantee beyond what the gate checks).\n")
	}
	for _, r := range risks {
		fmt.Fprintf(b, "- %s\n", r)
	}
}

// handoffCost: tokens and cost, the run's total or the attempts' sum.
func handoffCost(b *strings.Builder, in HandoffInput, _ handoffView) {
	u := in.Usage
	if u == (Usage{}) {
		for _, f := range in.Plan.features() {
			for _, a := range f.Attempts {
				u = u.Add(a.Usage)
			}
		}
	}
	b.WriteString("\n## Cost\n\n")
	fmt.Fprintf(b, "- Tokens: %d (input %d, output %d, reasoning %d; cache read %d, cache write %d)\n", u.Tokens(), u.Input, u.Output, u.Reasoning, u.CacheRead, u.CacheWrite)
	fmt.Fprintf(b, "- Cost: $%.4f\n", u.Cost)
	handoffAdvice(b, in)
}

// handoffAdvice: what the advisor's watchdog said, per feature that had
// advice (advisor sessions are in the cost above).
func handoffAdvice(b *strings.Builder, in HandoffInput) {
	for _, f := range in.Plan.features() {
		var recs []AdviceRecord
		for _, a := range f.Attempts {
			recs = append(recs, a.Advice...)
		}
		if sum := AdviceSummary(recs); sum != "" {
			fmt.Fprintf(b, "- Advisor on **%s**: %s\n", f.ID, strings.TrimPrefix(sum, "advice: "))
		}
	}
}

// handoffResume: the commands that go on from here.
func handoffResume(b *strings.Builder, in HandoffInput, v handoffView) {
	b.WriteString("\n## How to resume\n\n")
	fmt.Fprintf(b, "- `horizon status %s` — the plan, attempts, receipts and spend\n", in.RunID)
	if in.Status != StatusCompleted || len(v.open) > 0 {
		fmt.Fprintf(b, "- `horizon resume %s` — continue from the saved state after a crash, a reboot or a pause\n", in.RunID)
	}
	for _, it := range v.blocked {
		fmt.Fprintf(b, "- `horizon unblock %s %s --note \"...\"` — once the blocker of %s is resolved, say what changed\n", in.RunID, it.f.ID, it.f.ID)
	}
	if len(v.completed) > 0 {
		fmt.Fprintf(b, "- `git merge %s` — bring the verified features into your branch (review them first)\n", v.branch)
	} else {
		fmt.Fprintf(b, "- Nothing verified to merge from `%s` yet.\n", v.branch)
	}
}

// integrationVerdict is the final gate's verdict, taken from the receipt
// ledger when one is given, and why it is not backed by a receipt, if not.
func (in HandoffInput) integrationVerdict() (verdict, why string) {
	g := in.Integration
	switch {
	case g.ReceiptID == "":
		return g.Verdict, "the run recorded no receipt for it"
	case in.ReceiptVerdicts != nil:
		v, ok := in.ReceiptVerdicts[g.ReceiptID]
		if !ok {
			return g.Verdict, fmt.Sprintf("receipt `%s` is not in the receipt ledger", g.ReceiptID)
		}
		return v, ""
	}
	return g.Verdict, ""
}

// risks lists what the receipts and audits leave open.
func (in HandoffInput) risks(branch string, completed, open, blocked []handoffItem) []string {
	var out []string
	if in.Baseline == nil {
		out = append(out, "No baseline gate run on the base commit was recorded, so pre-existing failures cannot be told apart from regressions.")
	}
	if g := in.Baseline; g != nil && !g.Passed() {
		r := fmt.Sprintf("The baseline gate on the base commit ended %s before any change", g.Verdict)
		if note := g.failedPartsNote(); note != "" {
			r += " (" + note + ")"
		}
		switch {
		case !g.FailingKnown:
			r += "; its failing set could not be read, so regressions cannot be told apart from pre-existing failures"
		case len(g.Failing) > 0:
			r += "; pre-existing failures: " + strings.Join(g.Failing, ", ")
		}
		out = append(out, r+".")
	}
	if g := in.Integration; g != nil {
		verdict, why := in.integrationVerdict()
		switch {
		case verdict != "pass":
			r := fmt.Sprintf("The integration gate on `%s` (receipt `%s`) ended %s: the accepted features do not pass the gate together", branch, dash(g.ReceiptID), dash(verdict))
			if note := g.failedPartsNote(); note != "" {
				r += " (" + note + ")"
			}
			switch {
			case !g.FailingKnown:
				r += "; its failing set could not be read"
			case len(g.Failing) > 0:
				r += "; failing: " + strings.Join(g.Failing, ", ")
			}
			out = append(out, r+".")
		case why != "":
			out = append(out, fmt.Sprintf("The integration gate on `%s` is reported as %s, but %s.", branch, verdict, why))
		}
	}
	for _, it := range completed {
		a := it.v.attempt
		for _, fd := range a.Audit.Findings {
			if fd.Severity != SeverityConcern && fd.Severity != SeverityBlocker {
				continue
			}
			loc := fd.File
			if fd.Line > 0 {
				loc = fmt.Sprintf("%s:%d", fd.File, fd.Line)
			}
			if loc == "" {
				loc = "(general)"
			}
			out = append(out, fmt.Sprintf("**%s** was accepted with an audit finding [%s] %s: %s", it.f.ID, fd.Severity, loc, oneLine(fd.Note)))
		}
		if n := oneLine(a.Gate.Note); n != "" {
			out = append(out, fmt.Sprintf("**%s** gate note on receipt `%s`: %s", it.f.ID, a.Gate.ReceiptID, n))
		}
		if len(it.f.Acceptance) == 0 {
			out = append(out, fmt.Sprintf("**%s** had no acceptance criteria; the auditor judged it against its title only", it.f.ID))
		}
	}
	for _, group := range [][]handoffItem{open, blocked} {
		for _, it := range group {
			a, ok := lastGate(it.f)
			if !ok || a.Gate.Passed() {
				continue
			}
			switch {
			case a.Gate.Verdict == "skipped" || a.Gate.Verdict == "unknown":
				out = append(out, fmt.Sprintf("**%s**: the last gate check (receipt `%s`) was %s, not run to a verdict", it.f.ID, dash(a.Gate.ReceiptID), a.Gate.Verdict))
			case !a.Gate.FailingKnown:
				r := fmt.Sprintf("**%s**: the last gate run (receipt `%s`, %s) had a failing set that could not be read", it.f.ID, dash(a.Gate.ReceiptID), a.Gate.Verdict)
				if note := a.Gate.failedPartsNote(); note != "" {
					r += " (" + note + ")"
				}
				out = append(out, r)
			case a.Gate.failedPartsNote() != "":
				out = append(out, fmt.Sprintf("**%s**: the last gate run (receipt `%s`, %s) — %s", it.f.ID, dash(a.Gate.ReceiptID), a.Gate.Verdict, a.Gate.failedPartsNote()))
			}
		}
	}
	for _, s := range in.SkippedChecks {
		if s = oneLine(s); s != "" {
			out = append(out, "Skipped check: "+s)
		}
	}
	return out
}

// partOf names the decomposed feature a sub-feature belongs to.
func partOf(f Feature) string {
	if f.Parent == "" {
		return ""
	}
	return " (part of " + f.Parent + ")"
}

// codeList renders IDs as inline code, comma-separated.
func codeList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "`" + id + "`"
	}
	return strings.Join(q, ", ")
}
