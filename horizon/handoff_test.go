package horizon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// blockedRun is samplePlan driven as far as it goes: everything runnable
// is accepted; f3 stays blocked and f4 waits on it.
func blockedRun(t *testing.T) HandoffInput {
	t.Helper()
	p := samplePlan(t)
	require.NoError(t, p.RecordAttempt("f2.2", passAttempt(2, "r-0203"), 2))
	require.NoError(t, p.Accept("f2.2", "9a8b7c6"))
	require.Equal(t, "f6", nextID(p))
	require.NoError(t, p.Start("f6"))
	a := passAttempt(1, "r-0601")
	a.Gate.Note = "gate script edited by the worker was restored"
	require.NoError(t, p.RecordAttempt("f6", a, 2))
	require.NoError(t, p.Accept("f6", "0f0e0d0"))
	_, _, ok := p.Next()
	require.False(t, ok)

	d1, err := NewDecision(at(5), "", "Assume ISO 8601 dates in UTC", "the repository's tests use only UTC timestamps", "internal/date/date_test.go")
	require.NoError(t, err)
	d2, err := NewDecision(at(70), "f2", "Decompose f2 into f2.1 and f2.2", "six attempts across all four strategies left date.TestParse failing", "r-016")
	require.NoError(t, err)
	return HandoffInput{
		RunID:           "r20260301-0900",
		Status:          StatusBlocked,
		Reason:          "only blocked work is left",
		Plan:            p,
		Decisions:       []Decision{d1, d2},
		Baseline:        &GateRun{Verdict: "fail", ExitCode: 2, Command: ".horizon/verify.sh"},
		SkippedChecks:   []string{"lint: no lint command is configured"},
		ReceiptVerdicts: nil,
	}
}

func TestHandoffBlockedGolden(t *testing.T) {
	in := blockedRun(t)
	got := Handoff(in)
	goldenFile(t, "handoff_blocked.md", got)

	require.Contains(t, got, "- **f1** Parse ISO dates — commit `1a2b3c4`; gate pass (receipt `r-0002`, attempt 2); audit accept")
	require.Contains(t, got, "`missing_credential`: CALENDAR_API_KEY is not set")
	require.Contains(t, got, "waits on f3 (blocked)")
	require.Contains(t, got, "[concern] internal/date/dur.go:12")
	require.NotContains(t, got, "[nit]", "nits are not residual risks")
	require.Contains(t, got, "`horizon unblock r20260301-0900 f3 --note \"...\"`")
	require.Contains(t, got, "`horizon resume r20260301-0900`")
	require.Contains(t, got, "`git merge horizon/r20260301-0900`")
	require.NotContains(t, got, "## Not verified")
}

func TestHandoffCompletedGolden(t *testing.T) {
	p, err := PlanFromBlock("Rename the config loader", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "Rename", Features: []PlanBlockFeature{
		{ID: "f1", Title: "Rename Load to Read", Kind: "mechanical", Acceptance: []string{"no caller uses Load"}, Paths: []string{"config/**"}},
	}}}})
	require.NoError(t, err)
	require.NoError(t, p.Start("f1"))
	require.NoError(t, p.RecordAttempt("f1", passAttempt(1, "r-1"), 2))
	require.NoError(t, p.Accept("f1", "abcdef1"))
	require.True(t, p.Done())
	got := Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Branch: "horizon/r1", Plan: p,
		ReceiptVerdicts: map[string]string{"r-1": "pass", "r-int": "pass"}, Baseline: &GateRun{Verdict: "pass"},
		Integration: gate("pass", "r-int"),
		Usage:       Usage{Input: 1200, Output: 300, Reasoning: 50, CacheRead: 400, Cost: 0.0421}})
	goldenFile(t, "handoff_completed.md", got)
	require.Contains(t, section(got, "## Integration gate"), "- **Verdict:** pass (exit 0) on the tip of `horizon/r1`")
	require.NotContains(t, got, "horizon resume", "a completed run has nothing to resume")
	require.Contains(t, got, "- Tokens: 1550 ")
	require.Contains(t, got, "- Cost: $0.0421")
}

// TestHandoffClaimsMatchReceipts: the status field of a feature is not
// evidence. A feature marked accepted without a receipt-backed pass and an
// accepting audit is rendered as NOT verified, never among the completed.
func TestHandoffClaimsMatchReceipts(t *testing.T) {
	base, err := PlanFromBlock("g", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "M", Features: []PlanBlockFeature{
		{ID: "f1", Title: "Claimed", Kind: "bounded", Acceptance: []string{"x"}},
	}}}})
	require.NoError(t, err)
	noReceipt := passAttempt(2, "")
	rejected := passAttempt(3, "r-3")
	rejected.Audit = &Audit{Verdict: "reject"}
	unaudited := passAttempt(4, "r-4")
	unaudited.Audit = nil
	tests := []struct {
		name     string
		attempts []Attempt
		ledger   map[string]string
		why      string
	}{
		{name: "no attempts", why: "no attempt was recorded"},
		{name: "gate never passed", attempts: []Attempt{failAttempt(1, "r-1")}, why: "no attempt passed the gate"},
		{name: "worker said satisfied, gate failed", attempts: []Attempt{{N: 1, Report: &Report{Status: "satisfied"}, Gate: gate("fail", "r-1"), Audit: &Audit{Verdict: "accept"}}}, why: "no attempt passed the gate"},
		{name: "pass without receipt", attempts: []Attempt{noReceipt}, why: "attempt 2's passing gate has no receipt"},
		{name: "auditor rejected", attempts: []Attempt{rejected}, why: "the auditor did not accept attempt 3"},
		{name: "not audited", attempts: []Attempt{unaudited}, why: "attempt 4 was not audited"},
		{name: "receipt not in ledger", attempts: []Attempt{passAttempt(5, "r-5")}, ledger: map[string]string{"r-1": "pass"}, why: "receipt `r-5` of attempt 5 is not in the receipt ledger"},
		{name: "ledger disagrees", attempts: []Attempt{passAttempt(5, "r-5")}, ledger: map[string]string{"r-5": "fail"}, why: "receipt `r-5` of attempt 5 records verdict fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := clonePlan(t, base)
			f, _ := p.Feature("f1")
			f.Attempts = tt.attempts
			f.Status = FeatureAccepted // as a buggy or forged state would say
			f.Commit = "deadbee"
			p.Refresh()
			got := Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Plan: p, ReceiptVerdicts: tt.ledger})
			completed := section(got, "## Completed (verified)")
			require.Equal(t, "- None.", completed)
			require.Contains(t, got, "## Not verified")
			require.Contains(t, section(got, "## Not verified"), "- **f1** Claimed — marked accepted, but NOT verified: "+tt.why+"; commit `deadbee` is unverified")
			require.Contains(t, got, "**Warning:** 1 feature(s) marked accepted are NOT verified")
			require.Contains(t, got, "0 verified, 1 not verified")
			require.Contains(t, got, "Nothing verified to merge")
			require.NotContains(t, got, "git merge")
		})
	}

	// And the same feature with a real receipt-backed pass is completed.
	p := clonePlan(t, base)
	f, _ := p.Feature("f1")
	f.Attempts = []Attempt{failAttempt(1, "r-1"), passAttempt(2, "r-2")}
	f.Status, f.Commit = FeatureAccepted, "c0ffee1"
	got := Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Plan: p, ReceiptVerdicts: map[string]string{"r-1": "fail", "r-2": "pass"}})
	require.Contains(t, section(got, "## Completed (verified)"), "- **f1** Claimed — commit `c0ffee1`; gate pass (receipt `r-2`, attempt 2); audit accept")
	require.NotContains(t, got, "NOT verified")
}

// section returns the body of a Markdown section, trimmed.
func section(md, heading string) string {
	_, rest, ok := strings.Cut(md, heading+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

func TestHandoffFlattensModelText(t *testing.T) {
	p, err := PlanFromBlock("g", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "M", Features: []PlanBlockFeature{
		{ID: "f1", Title: "two\nlines", Kind: "open", Acceptance: []string{"x"}},
	}}}})
	require.NoError(t, err)
	require.NoError(t, p.Block("f1", Blocker{Type: "platform_limit", Evidence: "line one of the error\n## injected heading\nline three"}))
	got := Handoff(HandoffInput{RunID: "r1", Status: StatusBlocked, Plan: p})
	require.Contains(t, got, "- **f1** two lines — `platform_limit`: line one of the error ## injected heading line three (after 0 attempts)")
	require.NotContains(t, got, "\n## injected")
}

// TestHandoffIntegrationGate: the final gate on the integration branch is
// reported from its receipt; a failing one, or one the receipts do not
// back, is a residual risk.
func TestHandoffIntegrationGate(t *testing.T) {
	p, err := PlanFromBlock("g", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "M", Features: []PlanBlockFeature{
		{ID: "f1", Title: "One", Kind: "bounded", Acceptance: []string{"x"}},
	}}}})
	require.NoError(t, err)
	require.NoError(t, p.Start("f1"))
	require.NoError(t, p.RecordAttempt("f1", passAttempt(1, "r-1"), 2))
	require.NoError(t, p.Accept("f1", "abcdef1"))
	unread := gate("fail", "r-int")
	unread.FailingKnown, unread.Failing = false, nil
	tests := []struct {
		name    string
		gate    *GateRun
		ledger  map[string]string
		verdict string // the section's verdict line; "" for no section
		risk    string // "" for no integration risk
	}{
		{name: "none ran"},
		{name: "pass", gate: gate("pass", "r-int"), ledger: map[string]string{"r-int": "pass"},
			verdict: "- **Verdict:** pass (exit 0) on the tip of `horizon/r1`"},
		{name: "pass without a ledger", gate: gate("pass", "r-int"),
			verdict: "- **Verdict:** pass (exit 0) on the tip of `horizon/r1`"},
		{name: "fail", gate: gate("fail", "r-int"), ledger: map[string]string{"r-int": "fail"},
			verdict: "- **Verdict:** fail (exit 1) on the tip of `horizon/r1`",
			risk:    "The integration gate on `horizon/r1` (receipt `r-int`) ended fail: the accepted features do not pass the gate together; failing: date.TestParse."},
		{name: "fail with an unreadable failing set", gate: unread,
			verdict: "- **Verdict:** fail (exit 1)",
			risk:    "ended fail: the accepted features do not pass the gate together; its failing set could not be read."},
		{name: "ledger disagrees", gate: gate("pass", "r-int"), ledger: map[string]string{"r-int": "timeout"},
			verdict: "- **Verdict:** timeout (exit 0)",
			risk:    "(receipt `r-int`) ended timeout"},
		{name: "not in the ledger", gate: gate("pass", "r-int"), ledger: map[string]string{"r-1": "pass"},
			verdict: "- **Verdict:** pass (exit 0) on the tip of `horizon/r1` — NOT backed by a receipt: receipt `r-int` is not in the receipt ledger",
			risk:    "The integration gate on `horizon/r1` is reported as pass, but receipt `r-int` is not in the receipt ledger."},
		{name: "no receipt", gate: gate("pass", ""),
			verdict: "— NOT backed by a receipt: the run recorded no receipt for it",
			risk:    "is reported as pass, but the run recorded no receipt for it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ledger := tt.ledger
			if ledger != nil {
				ledger["r-1"] = "pass"
			}
			got := Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Plan: p, Baseline: &GateRun{Verdict: "pass"},
				ReceiptVerdicts: ledger, Integration: tt.gate})
			sec := section(got, "## Integration gate")
			risks := section(got, "## Residual risks")
			if tt.verdict == "" {
				require.NotContains(t, got, "## Integration gate")
			} else {
				require.Contains(t, sec, tt.verdict)
				require.Contains(t, sec, "- **Receipt:** `"+dash(tt.gate.ReceiptID)+"`")
				require.Contains(t, sec, "- **Command:** `.horizon/verify.sh`")
			}
			if tt.risk == "" {
				require.NotContains(t, risks, "integration gate")
			} else {
				require.Contains(t, risks, tt.risk)
			}
			require.Contains(t, section(got, "## Completed (verified)"), "- **f1** One", "the features' own verdicts stand")
		})
	}
}

// unverifiedRun has a feature marked accepted without a receipt-backed
// pass, a skipped feature and one still open: the sections the other
// fixtures leave empty.
func unverifiedRun(t *testing.T) HandoffInput {
	t.Helper()
	p, err := PlanFromBlock("Tidy the CLI", PlanBlock{Ambiguity: "MEDIUM", Assumptions: []string{"flags keep their names"}, Milestones: []PlanBlockMilestone{{Title: "CLI", Features: []PlanBlockFeature{
		{ID: "f1", Title: "Claimed", Kind: "bounded", Acceptance: []string{"x"}},
		{ID: "f2", Title: "Not needed", Kind: "mechanical", Acceptance: []string{"y"}},
		{ID: "f3", Title: "Still going", Kind: "open", Acceptance: []string{"z"}},
	}}}})
	require.NoError(t, err)
	f, _ := p.Feature("f1")
	f.Attempts = []Attempt{passAttempt(1, "")}
	f.Status, f.Commit = FeatureAccepted, "deadbee"
	p.Refresh()
	require.NoError(t, p.Skip("f2", "already done upstream"))
	require.NoError(t, p.Start("f3"))
	require.NoError(t, p.RecordAttempt("f3", failAttempt(1, "r-31"), 2))
	return HandoffInput{RunID: "r2", Status: StatusRunning, Plan: p, Baseline: &GateRun{Verdict: "pass"}}
}

// Each section writer under its own golden file, for fixtures that between
// them fill every section; together the sections are the whole handoff.
func TestHandoffSectionsGolden(t *testing.T) {
	completed := func(t *testing.T) HandoffInput {
		p, err := PlanFromBlock("Rename the config loader", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "Rename", Features: []PlanBlockFeature{
			{ID: "f1", Title: "Rename Load to Read", Kind: "mechanical", Acceptance: []string{"no caller uses Load"}, Paths: []string{"config/**"}},
		}}}})
		require.NoError(t, err)
		require.NoError(t, p.Start("f1"))
		require.NoError(t, p.RecordAttempt("f1", passAttempt(1, "r-1"), 2))
		require.NoError(t, p.Accept("f1", "abcdef1"))
		return HandoffInput{RunID: "r1", Status: StatusCompleted, Branch: "horizon/r1", Plan: p,
			ReceiptVerdicts: map[string]string{"r-1": "pass", "r-int": "pass"}, Baseline: &GateRun{Verdict: "pass"},
			Integration: gate("pass", "r-int")}
	}
	fixtures := []struct {
		name string
		in   func(t *testing.T) HandoffInput
	}{
		{"blocked", blockedRun},
		{"completed", completed},
		{"unverified", unverifiedRun},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			in := fx.in(t)
			v := in.view()
			var all strings.Builder
			for _, s := range handoffSections {
				var b strings.Builder
				s.write(&b, in, v)
				goldenFile(t, "handoff/"+fx.name+"/"+s.name+".md", b.String())
				all.WriteString(b.String())
			}
			require.Equal(t, Handoff(in), all.String())
		})
	}
}
