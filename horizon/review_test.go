package horizon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRule(t *testing.T) {
	rejected := &Audit{Verdict: VerdictReject, Findings: []Finding{
		{File: "calc.py", Line: 2, Severity: SeverityBlocker, Note: "adds instead of multiplying", Confirmed: true},
		{File: "calc.py", Line: 9, Severity: SeverityBlocker, Note: "a line the file does not have"},
		{File: "docs/calc.md", Line: 1, Severity: SeverityConcern, Note: "the docs say add"},
		{Severity: SeverityNit, Note: "a name could be clearer"},
		{File: "calc.py", Line: 4, Severity: SeverityConcern, Note: "no test for negatives"},
	}}
	tests := []struct {
		name      string
		in        RuleInput
		want      []DispositionKind
		undecided []int
	}{
		{
			name: "a rejection: confirmed blocker now, unconfirmed and concerns to the lead, out of paths rejected, nit deferred",
			in:   RuleInput{Audit: rejected, Paths: []string{"calc.py"}, Outside: []string{"docs/calc.md"}},
			want: []DispositionKind{DispositionAcceptNow, DispositionOutOfScope, DispositionDefer}, undecided: []int{2, 5},
		},
		{
			name: "an accepted audit's findings are all deferred",
			in:   RuleInput{Audit: &Audit{Verdict: VerdictAccept, Findings: rejected.Findings}},
			want: []DispositionKind{DispositionDefer, DispositionDefer, DispositionDefer, DispositionDefer, DispositionDefer},
		},
		{
			name: "an unmet criterion is work now",
			in: RuleInput{Audit: &Audit{Verdict: VerdictAccept}, Receipt: []CriterionRating{
				{Criterion: 1, Status: CriterionMet, Text: "adds"}, {Criterion: 2, Status: CriterionUnmet, Text: "multiplies", Evidence: "calc.py:2 adds"}}},
			want: []DispositionKind{DispositionAcceptNow},
		},
		{name: "no audit, nothing", in: RuleInput{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, undecided := Rule(tc.in)
			var kinds []DispositionKind
			for _, d := range got {
				kinds = append(kinds, d.Kind)
				require.Equal(t, DecidedByRule, d.By)
				require.NotEmpty(t, d.Rationale)
				require.NotEmpty(t, d.Subject)
				if d.Kind == DispositionAcceptNow {
					require.NotEmpty(t, d.Instructions, "work now comes with instructions")
				}
			}
			require.Equal(t, tc.want, kinds)
			require.Equal(t, tc.undecided, undecided)
		})
	}
}

func TestMergeKeepsOnlyWhatWasAsked(t *testing.T) {
	au := &Audit{Verdict: VerdictReject, Findings: []Finding{
		{File: "a.go", Line: 1, Severity: SeverityConcern, Note: "one"},
		{File: "b.go", Line: 2, Severity: SeverityConcern, Note: "two"},
		{File: "c.go", Line: 3, Severity: SeverityConcern, Note: "three"},
	}}
	lead := []Disposition{
		{Finding: 2, Kind: DispositionDefer, Rationale: "later"},
		{Finding: 2, Kind: DispositionAcceptNow, Rationale: "a second answer for the same finding is ignored"},
		{Finding: 1, Kind: DispositionNeedsPerson, Rationale: "a product call", Instructions: "keep the old API?", Subject: "the lead's own words are not the subject"},
		{Finding: 9, Kind: DispositionDefer, Rationale: "not asked"},
	}
	got := Merge(au, []int{1, 2, 3}, lead)
	require.Len(t, got, 3)
	require.Equal(t, DispositionDefer, got[0].Kind)
	require.Equal(t, DecidedByLead, got[0].By)
	require.Equal(t, DispositionNeedsPerson, got[1].Kind)
	require.Equal(t, "[concern] a.go:1: one", got[1].Subject)
	require.Equal(t, 3, got[2].Finding, "left out by the lead: worked on, as before dispositions")
	require.Equal(t, DispositionAcceptNow, got[2].Kind)
	require.Equal(t, DecidedByRule, got[2].By)

	b, ok := NeedsPerson(got)
	require.True(t, ok)
	require.Equal(t, BlockerNeedsDecision, b.Type)
	require.Contains(t, b.Evidence, "keep the old API?")
}

func TestReceipt(t *testing.T) {
	criteria := []string{"adds", "multiplies", "divides"}
	require.Nil(t, Receipt(nil, &Audit{}))
	old := Receipt(criteria, &Audit{Verdict: VerdictAccept})
	require.Equal(t, CriterionNotRated, old[0].Status, "an audit of the older protocol rates nothing")
	require.Empty(t, Unmet(old), "and its verdict stands alone")

	r := Receipt(criteria, &Audit{Verdict: VerdictAccept, Criteria: []CriterionRating{
		{Criterion: 1, Status: CriterionMet, Evidence: "calc.py:1"},
		{Criterion: 2, Status: CriterionUnmet, Evidence: "calc.py:2 adds"},
		{Criterion: 7, Status: CriterionMet},
	}})
	require.Equal(t, []CriterionStatus{CriterionMet, CriterionUnmet, CriterionUnverifiable}, []CriterionStatus{r[0].Status, r[1].Status, r[2].Status})
	require.Equal(t, "multiplies", r[1].Text, "the words are the plan's")
	require.Len(t, Unmet(r), 2, "unmet and unrated both keep the change out")
	require.Equal(t, "1/3 met, 1 unmet, 1 unverifiable", ReceiptLine(r))
}

func TestSmallBrief(t *testing.T) {
	small := Disposition{Kind: DispositionAcceptNow, Subject: "[blocker] calc.py:2: adds"}
	general := Disposition{Kind: DispositionAcceptNow, Subject: "[concern] (general): thin tests"}
	criterion := Disposition{Kind: DispositionAcceptNow, Criterion: 2, Subject: "criterion 2 (unmet): multiplies"}
	later := Disposition{Kind: DispositionDefer, Subject: "[nit] x.go:1: name"}
	for _, tc := range []struct {
		name string
		ds   []Disposition
		want bool
	}{
		{"one located fix", []Disposition{small, later}, true},
		{"three located fixes", []Disposition{small, small, small}, true},
		{"four are broad", []Disposition{small, small, small, small}, false},
		{"a general finding is broad", []Disposition{small, general}, false},
		{"a criterion is feature work", []Disposition{criterion}, false},
		{"nothing to do now", []Disposition{later}, false},
	} {
		require.Equal(t, tc.want, SmallBrief(tc.ds), tc.name)
	}
}

func TestDecisionBriefGolden(t *testing.T) {
	ds := []Disposition{
		{Finding: 1, Kind: DispositionAcceptNow, By: DecidedByRule, Subject: "[blocker] calc.py:2: adds instead of multiplying", Rationale: "a blocker whose evidence was confirmed in the lane", Instructions: "Fix: return a * b on line 2."},
		{Finding: 2, Kind: DispositionDefer, By: DecidedByLead, Subject: "[concern] calc.py:4: no test for negatives", Rationale: "right, but the feature does not ask for it"},
		{Finding: 3, Kind: DispositionOutOfScope, By: DecidedByRule, Subject: "[concern] docs/calc.md:1: the docs say add", Rationale: "docs/calc.md is outside the feature's paths (calc.py)"},
	}
	receipt := []CriterionRating{{Criterion: 1, Text: "mul(2, 3) is 6", Status: CriterionUnmet, Evidence: "calc.py:2 returns a + b"}}
	got := DecisionBrief("Feature f1: multiply\n\nmore", []string{"calc.py"}, receipt, ds)
	goldenFile(t, "decision_brief.md", got)

	brief := WorkerBrief("Feature f1: multiply", 2, 0, &Attempt{N: 1, Outcome: OutcomeRejected, Audit: &Audit{Verdict: VerdictReject}, Criteria: receipt, Dispositions: ds}, "")
	require.Contains(t, brief, "## Decision Brief")
	require.Contains(t, brief, "Fix: return a * b on line 2.")
	require.NotContains(t, brief, "- The auditor rejected the change:", "the findings are the brief's, not listed twice")
}

func TestDispositionsDecodeAndOldAuditsStill(t *testing.T) {
	var a Audit
	require.NoError(t, json.Unmarshal([]byte(`{"verdict":"reject","findings":[{"file":"a.go","line":"3","severity":"concern","note":"x"}]}`), &a))
	require.Empty(t, a.Criteria)
	require.False(t, a.Findings[0].Confirmed, "a model cannot confirm its own finding: only horizon sets it")

	var ds Dispositions
	require.NoError(t, json.Unmarshal([]byte(`{"dispositions":[{"finding":1,"disposition":"accept-now","rationale":"r","instructions":"i"}]}`), &ds))
	require.Equal(t, DispositionAcceptNow, ds.Dispositions[0].Kind)
	k, err := ParseDispositionKind(" Needs_User_Decision ")
	require.NoError(t, err)
	require.Equal(t, DispositionNeedsPerson, k)
	_, err = ParseDispositionKind("later")
	require.ErrorContains(t, err, "accept-now")
}

func TestMilestoneRule(t *testing.T) {
	landed := func(outcomes ...Outcome) Milestone {
		var as []Attempt
		for i, o := range outcomes {
			as = append(as, Attempt{N: i + 1, Outcome: o})
		}
		return Milestone{ID: "m1", Status: MilestoneDone, Features: []Feature{{ID: "f1", Status: FeatureAccepted, Attempts: as}}}
	}
	low := Plan{Ambiguity: AmbiguityLow}
	on := MilestoneRule{Auto: true, Threshold: 0.5}
	for _, tc := range []struct {
		name     string
		rule     MilestoneRule
		autonomy Autonomy
		plan     Plan
		prev     Milestone
		want     bool
		why      string
	}{
		{"first try, low ambiguity", on, AutonomySemi, low, landed(OutcomeAccepted), true, "confidence 1.00"},
		{"a gate failure lowers confidence", on, AutonomySemi, low, landed(OutcomeGateFailed, OutcomeAccepted), true, "confidence 0.50"},
		{"below the threshold", MilestoneRule{Auto: true, Threshold: 0.8}, AutonomySemi, low, landed(OutcomeGateFailed, OutcomeAccepted), false, "below"},
		{"a rejection", on, AutonomySemi, low, landed(OutcomeRejected, OutcomeAccepted), false, "1 rejected attempt"},
		{"medium ambiguity", on, AutonomySemi, Plan{Ambiguity: AmbiguityMedium}, landed(OutcomeAccepted), false, "MEDIUM"},
		{"supervised asks a person", on, AutonomySupervised, low, landed(OutcomeAccepted), false, "supervised"},
		{"off", MilestoneRule{}, AutonomySemi, low, landed(OutcomeAccepted), false, "off"},
		{"not landed", on, AutonomySemi, low, Milestone{ID: "m1", Status: MilestoneBlocked}, false, "has not landed"},
	} {
		ok, why := tc.rule.Passes(tc.autonomy, tc.plan, tc.prev)
		require.Equal(t, tc.want, ok, tc.name)
		require.True(t, strings.Contains(why, tc.why), "%s: %s", tc.name, why)
	}
}
