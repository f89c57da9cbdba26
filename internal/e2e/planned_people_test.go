package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// unblockNote is the person's note on f1's blocker; the worker rule of
// f1's next attempt matches only a brief that carries it.
const unblockNote = "UPPER-TOKEN-NOW-SET: the locale token is in the daemon's environment"

// approveNote is kept with the approval of milestone m2.
const approveNote = "measure and repeat can go ahead"

// lengthBroken is f3's tool as its worker keeps writing it: it counts the
// newline too, so its test (which wants 4 for abcd) fails the gate.
const lengthBroken = "#!/bin/sh\n# length.sh S prints the number of bytes in S.\nprintf '%s\\n' \"$1\" | wc -c | tr -d ' '\n"

// lengthTestEmpty is f3.2's test: f3.1's, plus the empty string.
const lengthTestEmpty = "#!/bin/sh\nset -e\n[ \"$(sh lib/length.sh abcd)\" = 4 ]\n[ \"$(sh lib/length.sh '')\" = 0 ]\n"

// f3Parts is the lead's decomposition of f3: the tool with its test, then
// the empty-string case.
func f3Parts(t *testing.T) string {
	type part struct {
		ID         string   `json:"id"`
		Title      string   `json:"title"`
		Acceptance []string `json:"acceptance"`
		Paths      []string `json:"paths"`
		Kind       string   `json:"kind"`
		DependsOn  []string `json:"depends_on,omitempty"`
	}
	plan := map[string]any{
		"milestones": []map[string]any{{"title": "parts of f3", "features": []part{
			{ID: "p1", Title: "lib/length.sh counts bytes without the newline", Kind: "bounded",
				Acceptance: []string{"sh lib/length.sh abcd prints 4"}, Paths: []string{"lib/length.sh", "tests/test_length.sh"}},
			{ID: "p2", Title: "tests/test_length.sh covers the empty string", Kind: "bounded", DependsOn: []string{"p1"},
				Acceptance: []string{"sh lib/length.sh '' prints 0 and the test checks it"}, Paths: []string{"tests/test_length.sh"}},
		}}},
		"ambiguity":   "LOW",
		"assumptions": []string{},
	}
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	return "The newline is counted; split the tool from its edge case.\n\n```horizon-plan\n" + string(b) + "\n```"
}

// peopleRules are the rules of TestPlannedRunPeopleInTheLoop, tried before
// toolsScript's: the lead plans m2's features after f1; f1's first worker reports a typed blocker and its next
// one (whose brief has unblockNote) writes the tool; f2 is accepted at
// once; f3's worker writes a broken tool every attempt, until the lead
// splits f3 into two parts that pass.
func peopleRules(t *testing.T) []fakemodel.Rule {
	upper, length := allTools()[0], allTools()[2]
	blocked := "The locale service refuses me.\n\n```horizon-report\n{\"status\": \"blocked\", \"summary\": \"need the locale token\", \"blocker\": {\"type\": \"missing_credential\", \"evidence\": \"curl: (22) 401 Unauthorized: LOCALE_TOKEN is not set in the environment\"}}\n```"
	return []fakemodel.Rule{
		{Name: "worker-f1-unblocked", When: []string{"# Task (attempt", "Feature f1:", unblockNote},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/upper.sh", upper.code), write("tests/test_upper.sh", upper.test)}},
				{Text: report("added lib/upper.sh and tests/test_upper.sh now that the token is set")},
			}},
		{Name: "worker-f1-blocked", When: []string{"# Task (attempt 1)", "Feature f1:"}, Times: 1,
			Replies: []fakemodel.Reply{{Text: blocked}}},
		{Name: "auditor-f1-unblocked", When: []string{"# Audit (attempt", "Feature f1:"}, Unless: []string{"# Audit (attempt 1)"},
			Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		{Name: "auditor-f2-accept", When: []string{"# Audit (attempt 1)", "Feature f2:"},
			Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		{Name: "lead-decompose-f3", When: []string{"# Decompose a feature", "Feature f3:"},
			Replies: []fakemodel.Reply{{Text: f3Parts(t)}}},
		// m2's features depend on f1: a blocked feature holds back only
		// its dependents, and milestones are no barrier (Plan.Next), so
		// without this f3 and f4 would run while f1 is blocked. This rule
		// comes after the decomposition's, lest it take that prompt.
		{Name: "lead-f3-f4-after-f1", When: []string{"# Plan"}, Unless: []string{"# Decompose a feature"},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/.horizon/verify.sh"}}}},
				{Text: toolsLeadPlanWith(t, map[string][]string{"f3": {"f1"}, "f4": {"f1"}})},
			}},
		{Name: "worker-f3.1", When: []string{"# Task (attempt", "Feature f3.1:"},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/length.sh", length.code), write("tests/test_length.sh", length.test)}},
				{Text: report("lib/length.sh counts bytes without the newline")},
			}},
		{Name: "worker-f3.2", When: []string{"# Task (attempt", "Feature f3.2:"},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("tests/test_length.sh", lengthTestEmpty)}},
				{Text: report("tests/test_length.sh checks the empty string")},
			}},
		{Name: "auditor-f3-parts", When: []string{"# Audit (attempt", "Feature f3."},
			Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		// The third attempt is under the research strategy: a researcher
		// reads first (no network here: it fetches nothing).
		{Name: "researcher-f3", When: []string{"# Research before attempt", "Feature f3:"},
			Replies: []fakemodel.Reply{{Text: "length.sh counts bytes with wc -c; the test expects the empty string to print 0."}}},
		{Name: "worker-f3-broken", When: []string{"# Task (attempt", "Feature f3:"}, Unless: []string{"# Decompose a feature"},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/length.sh", lengthBroken), write("tests/test_length.sh", length.test)}},
				{Text: report("added lib/length.sh and tests/test_length.sh")},
			}},
	}
}

// A planned run under semi autonomy with the people in the loop (m2's
// features depend on f1): f1's worker reports a typed blocker while the
// independent f2 is accepted; the run reads blocked until `horizon unblock` with a note, which f1's next
// brief carries, and f1 is accepted. The run then waits before milestone
// m2: an approval of m1 is refused (exit 2), one of m2 lets it go on. In
// m2, f3's gate fails three times (one attempt per strategy), the lead
// decomposes it into f3.1 and f3.2, which are accepted, as is f4. Every
// accepted feature lands once; decisions.jsonl records the blocker, the
// unblock, the approval and the decomposition.
func TestPlannedRunPeopleInTheLoop(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, toolsScript(t, peopleRules(t)...), "HORIZON_RUN_RECOVERY_ESCALATION_INTERVAL=1")
	repo, head := toolsRepo(t)
	ctx := context.Background()
	started := time.Now()

	out, code := w.stdout("start", "--detach", "--autonomy", "semi", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	// 1. f1 is blocked, f2 is accepted meanwhile, and the run reads blocked.
	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() || s.Status == horizon.StatusBlocked })
	require.Equal(t, horizon.StatusBlocked, s.Status, s.Reason)
	fs := planFeatures(s.Plan)
	require.Equal(t, horizon.FeatureBlocked, fs["f1"].Status)
	require.Equal(t, horizon.FeatureAccepted, fs["f2"].Status, "the independent feature was accepted while f1 was blocked")
	require.Equal(t, horizon.FeaturePending, fs["f3"].Status, "f3 depends on f1")
	require.Equal(t, horizon.FeaturePending, fs["f4"].Status, "f4 depends on f1")
	require.Contains(t, s.Reason, "horizon unblock")
	require.Equal(t, map[string]int{"f2": 1}, trailers(repo, id))
	t.Logf("blocked after %s", time.Since(started).Round(time.Second))

	o, code := w.run(ctx, "unblock", id, "f1", "--note", unblockNote)
	require.Equal(t, 0, code, o)

	// 2. f1 is accepted, then the run waits before milestone m2.
	// The checkpoint is set, its notification sent, then the phase
	// turns: a status read in between shows the checkpoint first.
	s = w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool {
		return s.Status.Terminal() || s.Waiting != nil && s.Phase == horizon.PhaseApproval
	})
	require.NotNil(t, s.Waiting, "%s: %s", s.Status, s.Reason)
	require.Equal(t, horizon.CheckpointMilestone, s.Waiting.Kind)
	require.Equal(t, "m2", s.Waiting.Subject)
	require.Equal(t, horizon.PhaseApproval, s.Phase)
	require.Equal(t, "waiting for approval", string(s.Phase))
	fs = planFeatures(s.Plan)
	require.Equal(t, horizon.FeatureAccepted, fs["f1"].Status)
	require.Equal(t, horizon.FeaturePending, fs["f3"].Status, "nothing of m2 runs before the approval")
	require.Equal(t, horizon.FeaturePending, fs["f4"].Status, "nothing of m2 runs before the approval")
	t.Logf("waiting at m2 after %s", time.Since(started).Round(time.Second))

	o, code = w.run(ctx, "approve", id, "--subject", "m1")
	require.Equal(t, 2, code, "approving another checkpoint is refused: %s", o)
	require.Equal(t, "m2", w.status(id).Waiting.Subject, "the refused approval let nothing go on")
	o, code = w.run(ctx, "approve", id, "--subject", "m2", "--note", approveNote)
	require.Equal(t, 0, code, o)

	// 3. f3 fails three times and is decomposed; its parts and f4 are accepted.
	final := w.waitStatus(id, 6*time.Minute, endedWithHandoff)
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	t.Logf("planned run with people in the loop took %s", time.Since(started).Round(time.Second))

	fs = planFeatures(final.Plan)
	f3 := fs["f3"]
	require.Equal(t, horizon.FeatureDecomposed, f3.Status)
	require.Len(t, f3.Attempts, 3, "%+v", f3.Attempts)
	var strategies []horizon.Strategy
	for _, a := range f3.Attempts {
		require.NotEqual(t, horizon.OutcomeAccepted, a.Outcome)
		strategies = append(strategies, a.Strategy)
	}
	require.Equal(t, []horizon.Strategy{horizon.StrategyFocusedCorrection, horizon.StrategyReplan, horizon.StrategyResearch}, strategies)
	require.Empty(t, f3.Commit)
	require.Equal(t, []string{"f1"}, fs["f3.1"].DependsOn, "a part inherits its parent's dependencies")
	require.ElementsMatch(t, []string{"f1", "f3.1"}, fs["f3.2"].DependsOn, "and keeps the order of the parts")
	require.Equal(t, "f3", fs["f3.1"].Parent)
	for _, f := range []string{"f1", "f2", "f3.1", "f3.2", "f4"} {
		require.Equal(t, horizon.FeatureAccepted, fs[f].Status, f)
		require.NotEmpty(t, fs[f].Commit, f)
	}
	f1 := fs["f1"]
	require.Len(t, f1.Attempts, 2, "%+v", f1.Attempts)
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[1].Outcome)
	require.True(t, final.Integration.Passed(), "integration gate: %+v", final.Integration)

	// f1's brief after the unblock carried the note (its rule matches only
	// then; the transcript shows it).
	brief, err := os.ReadFile(filepath.Join(w.home, "runs", id, "transcripts", fmt.Sprintf("f1-attempt-%d-worker.md", f1.Attempts[1].N)))
	require.NoError(t, err)
	require.Contains(t, string(brief), unblockNote)

	// The commits: each accepted feature once, f3's parts in order, none
	// for f3 itself; the tools and their tests as the parts left them.
	require.Equal(t, map[string]int{"f1": 1, "f2": 1, "f3.1": 1, "f3.2": 1, "f4": 1}, trailers(repo, id))
	commits, features := featureCommits(t, repo, id)
	require.Len(t, commits, 5)
	require.Equal(t, "f2", features[0], "f2 landed while f1 was blocked")
	require.Equal(t, "f1", features[1])
	require.Less(t, slices.Index(features, "f3.1"), slices.Index(features, "f3.2"))
	require.Equal(t, lengthTestEmpty, git(t, repo, "show", "horizon/"+id+":tests/test_length.sh")+"\n")
	require.Equal(t, allTools()[2].code, git(t, repo, "show", "horizon/"+id+":lib/length.sh")+"\n")
	require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the user's branch moved")
	require.Empty(t, git(t, repo, "status", "--porcelain"), "the user's work tree changed")

	// The model's conversations: what the script makes, and no more.
	rules := map[string]int{}
	for _, r := range w.model.Requests() {
		if r.Step == 0 && !r.Title {
			rules[r.Rule]++
		}
	}
	require.Equal(t, map[string]int{
		"lead-f3-f4-after-f1": 1,
		"worker-f1-blocked":   1, "worker-f1-unblocked": 1, "auditor-f1-unblocked": 1,
		"worker-f2-1": 1, "auditor-f2-accept": 1,
		"worker-f3-broken": 3, "researcher-f3": 1, "lead-decompose-f3": 1,
		"worker-f3.1": 1, "worker-f3.2": 1, "auditor-f3-parts": 2,
		"worker-f4-1": 1, "auditor-f4-1": 1,
	}, rules)

	// The decisions: the blocker, the unblock with its note, the approval
	// with its note, the decomposition.
	ds := readDecisions(t, w, id)
	require.True(t, hasDecision(ds, "paused f1 on a missing_credential blocker"), "decisions: %+v", ds)
	require.True(t, hasDecision(ds, "unblocked f1"), "decisions: %+v", ds)
	require.True(t, hasDecision(ds, "approved milestone m2"), "decisions: %+v", ds)
	require.True(t, hasDecision(ds, "decomposed f3 into f3.1, f3.2"), "decisions: %+v", ds)
	require.False(t, hasDecision(ds, "approved milestone m1"), "decisions: %+v", ds)
	for _, d := range ds {
		switch {
		case strings.HasPrefix(d.What, "unblocked f1"):
			require.Contains(t, d.Why, unblockNote)
		case strings.HasPrefix(d.What, "approved milestone m2"):
			require.Contains(t, d.Why, approveNote)
		}
	}
	require.Equal(t, final.Decisions, len(ds))
	// handoff.md lists the completed features in plan order.
	checkHandoff(t, final.Handoff, readReceipts(t, w, id), []string{"f1", "f2", "f3.1", "f3.2", "f4"})
}
