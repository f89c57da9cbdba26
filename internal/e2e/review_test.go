package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// unmetAudit accepts f1 while it rates its second criterion unmet, on
// every attempt: the verdict alone cannot accept a feature whose own
// receipt says a criterion is missing.
const unmetAudit = "upper.sh works, but its test checks nothing new.\n\n```horizon-audit\n" +
	`{"verdict": "accept", "findings": [], "criteria": [{"criterion": 1, "status": "met", "evidence": "lib/upper.sh:3"}, {"criterion": 2, "status": "unmet", "evidence": "tests/test_upper.sh never runs through the gate's mixed input"}]}` +
	"\n```"

// A feature whose auditor rates a criterion unmet is not accepted,
// however its verdict reads: its next attempt gets the criterion as a
// Decision Brief, `horizon status` shows the receipt, and it keeps going.
// `horizon skip` (a note required) stops it and the run finishes without
// it, with the feature and its unmet criterion under "Skipped" in the
// handoff and the skip in decisions.jsonl.
func TestUnmetCriterionThenSkip(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, toolsScript(t,
		fakemodel.Rule{Name: "auditor-f1-unmet", When: []string{"# Audit (attempt", "Feature f1:"}, Replies: []fakemodel.Reply{{Text: unmetAudit}}},
		fakemodel.Rule{Name: "worker-f1-brief", When: []string{"Feature f1:", "## Decision Brief", "Meet acceptance criterion 2"}, Replies: []fakemodel.Reply{{Text: report("the test is as it should be")}}},
	))
	repo, head := toolsRepo(t)
	out, code := w.stdout("start", "--detach", "--autonomy", "full", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool {
		if s.Status.Terminal() || s.Plan == nil {
			return s.Status.Terminal()
		}
		f, _ := s.Plan.Feature("f1")
		return f.AttemptCount() >= 2 && f.Attempts[1].Outcome == horizon.OutcomeRejected
	})
	require.Equal(t, horizon.StatusRunning, s.Status, s.Reason)
	f1, _ := s.Plan.Feature("f1")
	for _, a := range f1.Attempts[:2] {
		require.Equal(t, horizon.OutcomeRejected, a.Outcome, "accept with an unmet criterion is not accepted")
		require.Equal(t, "1/2 met, 1 unmet", horizon.ReceiptLine(a.Criteria))
	}
	briefed := false
	for _, r := range w.model.Requests() {
		briefed = briefed || r.Rule == "worker-f1-brief"
	}
	require.True(t, briefed, "the second attempt's brief is a Decision Brief naming the unmet criterion")
	st, code := w.run(t.Context(), "status", id)
	require.Equal(t, 0, code, st)
	require.Contains(t, st, "criteria: 1/2 met, 1 unmet; 2 unmet: tests/test_upper.sh checks it")
	require.Contains(t, st, "accept-now (rule): criterion 2 (unmet)")

	// The dashboard's run page shows the same review under the feature.
	srv := startWeb(t, w)
	bctx := browser(t)
	tctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"#token="+srv.Token),
		chromedp.Navigate(srv.URL+"#run="+id),
		visible(`[data-review="f1"]`)))
	review := text(t, tctx, `[data-review="f1"]`)
	require.Contains(t, review, "criteria: 1/2 met; 2 unmet")
	require.Contains(t, review, "accept-now (rule): criterion 2 (unmet)")

	o, code := w.run(t.Context(), "skip", id, "f1")
	require.Equal(t, 2, code, o, "the note is required")
	o, code = w.run(t.Context(), "skip", id, "f9", "--note", "x")
	require.NotEqual(t, 0, code, o)
	require.Contains(t, o, `no feature "f9"`)
	o, code = w.run(t.Context(), "skip", id, "f1", "--note", "upper-case tests wait for the locale work")
	require.Equal(t, 0, code, o)
	require.Contains(t, o, "f1")

	s = w.waitStatus(id, 5*time.Minute, endedWithHandoff)
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	f1, _ = s.Plan.Feature("f1")
	require.Equal(t, horizon.FeatureSkipped, f1.Status)
	for _, id := range []string{"f2", "f3", "f4"} {
		f, _ := s.Plan.Feature(id)
		require.Equal(t, horizon.FeatureAccepted, f.Status, id)
	}
	log := git(t, repo, "log", "--format=%s", head+".."+s.Branch)
	require.NotContains(t, log, "upper", "the skipped feature landed nothing")
	require.Contains(t, log, "lower")

	handoff, err := os.ReadFile(s.Handoff)
	require.NoError(t, err)
	require.Contains(t, string(handoff), "## Skipped")
	require.Contains(t, string(handoff), "**f1** Add lib/upper.sh — upper-case tests wait for the locale work")
	require.Contains(t, string(handoff), "left unmet: criterion 2, tests/test_upper.sh checks it and the gate runs it — unmet")
	decisions, err := os.ReadFile(filepath.Join(filepath.Dir(s.Handoff), "decisions.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(decisions), `"what":"skipped f1"`)
	require.Contains(t, string(decisions), "accept-now: criterion 2 (unmet)")
	recordHistory(t, w, id, "planned-run-skip-unmet-criterion.json")
	recordHistory(t, w, id+".f1.1", "feature-skipped-unmet-criterion.json")
}
