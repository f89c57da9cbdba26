package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// reviewTiers are a local and a metered rung, each with a quick model
// beside its build model.
var reviewTiers = ladder.Availability{
	ladder.T0: {Reason: "no ast-grep"},
	ladder.T1: {Available: true, Applier: activities.ApplierOpenCode, Model: "local/build", Quick: "local/quick"},
	ladder.T2: {Reason: "no reader configured"},
	ladder.T3: {Available: true, Applier: activities.ApplierOpenCode, Model: "cloud/build", Quick: "cloud/quick"},
	ladder.T4: {Reason: "none"},
}

// A rejected audit's three findings get three different dispositions: the
// confirmed blocker is work now by rule, the lead defers one and sends one
// to a person. The person's question blocks f1 alone (f2 lands
// meanwhile); once unblocked, the accept-now fix reaches f1's next attempt
// as a Decision Brief on the quick model, and the deferred finding is in
// the handoff. Every disposition is a decision.
func TestRejectedAuditFindingsGetDispositions(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	w.pre = &activities.PreflightOutput{
		Gate: ".horizon/verify.sh", Models: map[horizon.Role]string{horizon.RoleWorker: "local/build", horizon.RoleAuditor: "fake/auditor"},
		Tiers: reviewTiers,
	}
	w.fullAudits["f1"] = []*horizon.Audit{{Verdict: horizon.VerdictReject, Findings: []horizon.Finding{
		{File: "calc.py", Line: 2, Severity: horizon.SeverityBlocker, Note: "mul adds instead of multiplying", Confirmed: true},
		{File: "calc.py", Line: 5, Severity: horizon.SeverityConcern, Note: "no test for negative numbers"},
		{File: "calc.py", Line: 1, Severity: horizon.SeverityConcern, Note: "should mul(0.1, 3) round?"},
	}}}
	w.dispositions["f1"] = [][]horizon.Disposition{{
		{Finding: 2, Kind: horizon.DispositionDefer, Rationale: "right, but the feature does not ask for negatives"},
		{Finding: 3, Kind: horizon.DispositionNeedsPerson, Rationale: "rounding is a product decision", Instructions: "Round floats to 2 places or keep full precision?"},
	}}
	e := w.env()
	var waiting horizon.RunState
	cb := &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Errorf("unblock refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		waiting = query(t, e)
		e.UpdateWorkflow(UpdateUnblock, "ok", cb, Unblock{Feature: "f1", Note: "keep full precision"})
	}, time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)

	// The person's question blocked f1 alone.
	require.Equal(t, horizon.FeatureBlocked, statuses(waiting.Plan)["f1"])
	require.Equal(t, horizon.FeatureAccepted, statuses(waiting.Plan)["f2"], "independent work went on")
	f1w, _ := waiting.Plan.Feature("f1")
	require.Equal(t, horizon.BlockerNeedsDecision, f1w.Blocker.Type)
	require.Contains(t, f1w.Blocker.Evidence, "Round floats to 2 places or keep full precision?")

	// Three findings, three dispositions, each decided by whom it says.
	f1, _ := s.Plan.Feature("f1")
	ds := f1.Attempts[0].Dispositions
	require.Len(t, ds, 3)
	by := map[horizon.DispositionKind]string{}
	for _, d := range ds {
		by[d.Kind] = d.By
	}
	require.Equal(t, map[horizon.DispositionKind]string{
		horizon.DispositionAcceptNow: horizon.DecidedByRule, horizon.DispositionDefer: horizon.DecidedByLead, horizon.DispositionNeedsPerson: horizon.DecidedByLead,
	}, by)
	require.Len(t, w.briefs["lead f1"], 1, "one lead session decided the two findings the rule left open")
	require.Contains(t, w.briefs["lead f1"][0], "2. [concern] calc.py:5: no test for negative numbers")
	require.NotContains(t, w.briefs["lead f1"][0], "1. [blocker]", "the rule's finding is not asked again")

	// The next attempt: a Decision Brief on the quick model.
	require.Len(t, w.briefs["f1"], 2)
	next := w.briefs["f1"][1]
	require.Contains(t, next, "## Decision Brief")
	require.Contains(t, next, "Fix: mul adds instead of multiplying")
	require.Contains(t, next, "keep full precision", "the person's answer")
	require.Contains(t, next, "no test for negative numbers (defer:", "the deferred finding is named as not to do")
	require.Equal(t, []string{"local/build", "local/quick"}, w.models["f1"])
	require.Contains(t, f1.Attempts[1].Route, "the quick role's model")

	// The deferred finding is kept for the handoff; every disposition is a decision.
	handoff := horizon.Handoff(horizon.HandoffInput{RunID: s.RunID, Status: s.Status, Plan: *s.Plan})
	require.Contains(t, handoff, "## Deferred findings")
	require.Contains(t, handoff, "**f1** [concern] calc.py:5: no test for negative numbers")
	require.True(t, w.decided("accept-now: [blocker] calc.py:2"))
	require.True(t, w.decided("defer: [concern] calc.py:5"))
	require.True(t, w.decided("needs-user-decision: [concern] calc.py:1"))
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []string{"f2", "f1"}, w.commits)
}

// An auditor that accepts while it rates a criterion unmet has not
// accepted: the unmet criterion is the next attempt's work, by rule (no
// lead session). An accepted audit's findings are deferred, not lost.
func TestUnmetCriterionKeepsAFeatureOut(t *testing.T) {
	w := newWorld(t, block(ms("core", horizon.PlanBlockFeature{ID: "f1", Title: "mul", Acceptance: []string{"mul(2, 3) is 6", "mul has a test"}, Kind: "bounded"})))
	w.fullAudits["f1"] = []*horizon.Audit{
		{Verdict: horizon.VerdictAccept, Criteria: []horizon.CriterionRating{
			{Criterion: 1, Status: horizon.CriterionMet, Evidence: "calc.py:2"}, {Criterion: 2, Status: horizon.CriterionUnmet, Evidence: "no test names mul"}}},
		{Verdict: horizon.VerdictAccept, Findings: []horizon.Finding{{File: "calc.py", Line: 3, Severity: horizon.SeverityNit, Note: "a docstring would help"}},
			Criteria: []horizon.CriterionRating{{Criterion: 1, Status: horizon.CriterionMet, Evidence: "calc.py:2"}, {Criterion: 2, Status: horizon.CriterionMet, Evidence: "test_mul"}}},
	}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, horizon.OutcomeRejected, f1.Attempts[0].Outcome, "accept with an unmet criterion is not accepted")
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[1].Outcome)
	require.Contains(t, w.briefs["auditor f1"][0], "2. mul has a test", "the auditor is asked to rate each criterion")
	require.Contains(t, w.briefs["f1"][1], "Meet acceptance criterion 2: mul has a test. The auditor: no test names mul")
	require.Empty(t, w.briefs["lead f1"], "the rule decided: no lead session")
	require.Equal(t, horizon.DispositionDefer, f1.Attempts[1].Dispositions[0].Kind)
	require.Equal(t, "2/2 met", horizon.ReceiptLine(f1.Attempts[1].Criteria))
	handoff := horizon.Handoff(horizon.HandoffInput{RunID: s.RunID, Status: s.Status, Plan: *s.Plan})
	require.Contains(t, handoff, "acceptance: mul has a test — met (test_mul)")
	require.Contains(t, handoff, "a docstring would help")
}

// A person skips a feature whose criterion stays unmet while it runs: the
// feature is cancelled, marked skipped with the note, and the run
// finishes; a feature that depends on it would have waited.
func TestSkipARunningFeature(t *testing.T) {
	w := newWorld(t, block(ms("core", horizon.PlanBlockFeature{ID: "f1", Title: "mul", Acceptance: []string{"mul(2, 3) is 6"}, Kind: "bounded"}, ft("f2"))))
	unmet := &horizon.Audit{Verdict: horizon.VerdictAccept, Criteria: []horizon.CriterionRating{{Criterion: 1, Status: horizon.CriterionUnmet, Evidence: "calc.py:2 adds"}}}
	for range 50 {
		w.fullAudits["f1"] = append(w.fullAudits["f1"], unmet)
	}
	e := w.env()
	var refused []error
	cb := &testsuite.TestUpdateCallback{OnReject: func(err error) { refused = append(refused, err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		e.UpdateWorkflow(UpdateSkip, "no note", cb, Skip{Feature: "f1"})
		e.UpdateWorkflow(UpdateSkip, "unknown", cb, Skip{Feature: "f9", Note: "x"})
		e.UpdateWorkflow(UpdateSkip, "ok", cb, Skip{Feature: "f1", Note: "mul waits for the new number type"})
	}, 10*time.Minute)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Len(t, refused, 2)
	require.ErrorContains(t, refused[0], "note")
	require.ErrorContains(t, refused[1], `no feature "f9"`)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, horizon.FeatureSkipped, f1.Status)
	require.Equal(t, "mul waits for the new number type", f1.Note)
	require.NotContains(t, w.commits, "f1")
	require.True(t, w.decided("skipped f1"))
	handoff := horizon.Handoff(horizon.HandoffInput{RunID: s.RunID, Status: s.Status, Plan: *s.Plan})
	require.Contains(t, handoff, "## Skipped")
	require.Contains(t, handoff, "left unmet: criterion 1, mul(2, 3) is 6 — unmet")
}

// Under semi autonomy with run.auto_approve_milestones, a milestone whose
// predecessor landed on first attempts passes by rule, as a decision.
func TestMilestonePassesByRule(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1")), ms("docs", ft("f2"))))
	e := w.env()
	in := plannedInput()
	in.Autonomy = horizon.AutonomySemi
	in.Milestones = horizon.MilestoneRule{Auto: true, Threshold: 0.8}
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status, "nobody approved, yet the run finished")
	require.True(t, w.decided("approved milestone m2 by rule"))
}
