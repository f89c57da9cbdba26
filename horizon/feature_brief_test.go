package horizon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFeatureTaskNamesFeatureCriteriaPathsAndGoal(t *testing.T) {
	f := Feature{ID: "f2", Title: "Parse dates", Acceptance: []string{"ISO dates parse", "bad dates error"}, Paths: []string{"date/**"}}
	got := FeatureTask("Support dates end to end", f)
	for _, want := range []string{"Feature f2: Parse dates", "- ISO dates parse", "- bad dates error", "Change only files matching: date/**", "Support dates end to end"} {
		require.Contains(t, got, want)
	}
	require.NotContains(t, FeatureTask("g", Feature{ID: "f1", Title: "t"}), "Change only files", "no allow-list, no line about it")
}

func TestDecomposeBriefCarriesEvidence(t *testing.T) {
	f := Feature{ID: "f1", Title: "Big", Attempts: []Attempt{{N: 1}, {N: 2}, {N: 3, Action: "retrieve"}}}
	last := &Attempt{N: 2, Outcome: OutcomeGateFailed, Gate: &GateRun{Verdict: "fail", ExitCode: 1, Command: "make test", Failing: []string{"TestBig"}}}
	got := DecomposeBrief("goal", f, last)
	require.Contains(t, got, "resisted 2 attempts", "retrieval steps are not attempts")
	require.Contains(t, got, "Failing: TestBig")
	require.Contains(t, got, "```horizon-plan")
}

func TestPartsOfRenamesAndKeepsInternalOrder(t *testing.T) {
	parent := Feature{ID: "f3", Kind: KindOpen, DependsOn: []string{"f1"}}
	p := Plan{Milestones: []Milestone{
		{ID: "m1", Features: []Feature{{ID: "p1", Title: "a", Kind: KindBounded}, {ID: "p2", Title: "b", Kind: KindBounded, DependsOn: []string{"p1", "f9"}}}},
		{ID: "m2", Features: []Feature{{ID: "p3", Title: "c", DependsOn: []string{"p2"}}}},
	}}
	parts := PartsOf(parent, p)
	require.Len(t, parts, 3)
	require.Equal(t, []string{"f3.1", "f3.2", "f3.3"}, []string{parts[0].ID, parts[1].ID, parts[2].ID})
	require.Nil(t, parts[0].DependsOn)
	require.Equal(t, []string{"f3.1"}, parts[1].DependsOn, "a dependency outside the parts is dropped")
	require.Equal(t, []string{"f3.2"}, parts[2].DependsOn)

	// The parts go into the plan as Decompose expects them.
	plan := Plan{Goal: "g", Milestones: []Milestone{{ID: "m1", Title: "m", Features: []Feature{{ID: "f1", Title: "x", Kind: KindBounded, Status: FeatureAccepted}, parent}}}}
	plan.Milestones[0].Features[1].Title = "y"
	require.NoError(t, plan.Decompose("f3", parts))
	p3, ok := plan.Feature("f3.3")
	require.True(t, ok)
	require.ElementsMatch(t, []string{"f1", "f3.2"}, p3.DependsOn, "the parent's dependencies are inherited")
}

func TestBudgetExceeded(t *testing.T) {
	start := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	b := &Budget{Time: 72 * time.Hour, Spend: 5, Deadline: start.Add(72 * time.Hour)}
	cases := []struct {
		name  string
		b     *Budget
		now   time.Time
		spent float64
		want  string
	}{
		{"none", nil, start.Add(1000 * time.Hour), 1e6, ""},
		{"within", b, start.Add(time.Hour), 4.99, ""},
		{"time", b, start.Add(72 * time.Hour), 0, "time limit 72h0m0s reached"},
		{"spend", b, start.Add(time.Hour), 5, "spend limit $5.0000 reached ($5.0000 spent)"},
		{"spend only", &Budget{Spend: 1}, start.Add(1000 * time.Hour), 0.5, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why, over := c.b.Exceeded(c.now, c.spent)
			require.Equal(t, c.want != "", over)
			if c.want != "" {
				require.Contains(t, why, c.want)
			}
		})
	}
}

func TestWorkerBriefOfUncappedFeature(t *testing.T) {
	got := WorkerBrief(FeatureTask("goal", Feature{ID: "f1", Title: "t"}), 4, 0, nil, "")
	require.Contains(t, got, "# Task (attempt 4)\n")
	require.NotContains(t, got, " of 0")
}
