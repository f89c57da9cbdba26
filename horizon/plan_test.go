package horizon

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestPlanFromBlockNormalises(t *testing.T) {
	p, err := PlanFromBlock("  Add date ranges  ", sampleBlock())
	require.NoError(t, err)
	require.Equal(t, "Add date ranges", p.Goal)
	require.Equal(t, AmbiguityMedium, p.Ambiguity)
	require.Equal(t, 1, p.Revision)
	require.Equal(t, []string{"Dates are ISO 8601 in UTC.", "The CLI keeps its flag names."}, p.Assumptions)
	require.Len(t, p.Milestones, 2)
	require.Equal(t, "m1", p.Milestones[0].ID)
	require.Equal(t, "m2", p.Milestones[1].ID)
	require.Equal(t, MilestonePending, p.Milestones[0].Status)
	f1 := p.Milestones[0].Features[0]
	require.Equal(t, KindMechanical, f1.Kind)
	require.Equal(t, FeaturePending, f1.Status)
	require.Empty(t, p.Warnings)
	require.Equal(t, PlanCounts{Total: 6, Pending: 6}, p.Counts())
}

func TestPlanFromBlockRejects(t *testing.T) {
	feat := func(id, title string, kind FeatureKind) PlanBlockFeature {
		return PlanBlockFeature{ID: id, Title: title, Kind: kind, Acceptance: []string{"it works"}}
	}
	one := func(fs ...PlanBlockFeature) PlanBlock {
		return PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "M", Features: fs}}}
	}
	tests := []struct {
		name  string
		goal  string
		block PlanBlock
		want  []string // each must appear in the error
	}{
		{name: "empty goal", goal: " ", block: one(feat("f1", "t", "bounded")), want: []string{"the goal is empty"}},
		{name: "no milestones", block: PlanBlock{Ambiguity: "LOW"}, want: []string{"no milestones"}},
		{name: "bad ambiguity", block: PlanBlock{Ambiguity: "very", Milestones: one(feat("f1", "t", "open")).Milestones}, want: []string{`ambiguity "very"`}},
		{name: "missing ambiguity", block: PlanBlock{Milestones: one(feat("f1", "t", "open")).Milestones}, want: []string{"ambiguity is missing"}},
		{name: "empty milestone", block: PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "M"}}}, want: []string{`milestone 1 (id "m1") has no features`}},
		{name: "untitled milestone", block: PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Features: []PlanBlockFeature{feat("f1", "t", "open")}}}}, want: []string{"has no title"}},
		{name: "duplicate id", block: PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{
			{Title: "A", Features: []PlanBlockFeature{feat("f1", "a", "open")}},
			{Title: "B", Features: []PlanBlockFeature{feat("f2", "b", "open"), feat("f1", "c", "open")}}}},
			want: []string{`feature "f1" (milestone 2): id is already used by milestone 1 feature 1`}},
		{name: "missing id", block: one(feat("", "t", "open")), want: []string{"milestone 1 feature 1 has no id"}},
		{name: "id unusable in a branch", block: one(feat("f 1", "t", "open"), feat("a..b", "t", "open"), feat("-x", "t", "open")),
			want: []string{`feature "f 1"`, `feature "a..b" (milestone 1): id is not usable`, `feature "-x" (milestone 1): id must start`}},
		{name: "missing title", block: one(feat("f1", " \n", "open")), want: []string{`feature "f1" (milestone 1) has no title`}},
		{name: "bad kind", block: one(feat("f1", "t", "huge")), want: []string{`feature "f1" (milestone 1): kind "huge"`}},
		{name: "missing kind", block: one(feat("f1", "t", "")), want: []string{`feature "f1" (milestone 1): kind is missing`}},
		{name: "path escapes", block: one(PlanBlockFeature{ID: "f1", Title: "t", Kind: "open", Paths: []string{"../etc/**", "/abs", "a/[b"}}),
			want: []string{`path "../etc/**"`, `path "/abs"`, `path "a/[b"`}},
		{name: "unknown dependency", block: one(PlanBlockFeature{ID: "f1", Title: "t", Kind: "open", DependsOn: []string{"f9"}}), want: []string{`feature "f1" depends on unknown feature "f9"`}},
		{name: "self dependency", block: one(PlanBlockFeature{ID: "f1", Title: "t", Kind: "open", DependsOn: []string{"f1"}}), want: []string{`feature "f1" depends on itself`}},
		{name: "cycle", block: one(
			PlanBlockFeature{ID: "f1", Title: "t", Kind: "open", DependsOn: []string{"f3"}},
			PlanBlockFeature{ID: "f2", Title: "t", Kind: "open", DependsOn: []string{"f1"}},
			PlanBlockFeature{ID: "f3", Title: "t", Kind: "open", DependsOn: []string{"f2"}}),
			want: []string{"dependency cycle: f1 → f3 → f2 → f1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goal := tt.goal
			if goal == "" {
				goal = "a goal"
			}
			_, err := PlanFromBlock(goal, tt.block)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalidPlan)
			var pe *PlanError
			require.ErrorAs(t, err, &pe)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestPlanFromBlockWarnsWithoutAcceptance(t *testing.T) {
	p, err := PlanFromBlock("g", PlanBlock{Ambiguity: "low", Milestones: []PlanBlockMilestone{{Title: "M", Features: []PlanBlockFeature{{ID: "f1", Title: "t", Kind: "open", Acceptance: []string{" "}}}}}})
	require.NoError(t, err)
	require.Equal(t, []string{`feature "f1" (milestone 1) has no acceptance criteria: the auditor can judge only its title`}, p.Warnings)
	require.Nil(t, p.Milestones[0].Features[0].Acceptance)
}

// TestPlanBlockReadsAgentJSON: the block decodes from the horizon-plan
// JSON the agent parser keeps in Raw, optional fields included.
func TestPlanBlockReadsAgentJSON(t *testing.T) {
	raw := `{"milestones":[{"title":"M","features":[{"id":"f1","title":"A","acceptance":["x"],"paths":["a/**"],"kind":"bounded"},{"id":"f2","title":"B","kind":"open","depends_on":["f1"]}]}],"ambiguity":"HIGH","assumptions":["y"]}`
	var b PlanBlock
	require.NoError(t, json.Unmarshal([]byte(raw), &b))
	p, err := PlanFromBlock("g", b)
	require.NoError(t, err)
	require.Equal(t, AmbiguityHigh, p.Ambiguity)
	require.Equal(t, []string{"f1"}, p.Milestones[0].Features[1].DependsOn)
}

func ids(p Plan, fn func(Feature) bool) []string {
	var out []string
	for _, f := range p.features() {
		if fn(f) {
			out = append(out, f.ID)
		}
	}
	return out
}

func nextID(p Plan) string {
	mi, fi, ok := p.Next()
	if !ok {
		return ""
	}
	return p.Milestones[mi].Features[fi].ID
}

func TestNextOrderAndBlockers(t *testing.T) {
	p, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	var order []string
	// Accept everything in the order Next gives, blocking f3 on the way.
	for range 20 {
		id := nextID(p)
		if id == "" {
			break
		}
		order = append(order, id)
		require.NoError(t, p.Start(id))
		if id == "f3" {
			require.NoError(t, p.Block(id, Blocker{Type: "unavailable_service", Evidence: "calendar.example:443 connection refused (3 tries)"}))
			continue
		}
		require.NoError(t, p.RecordAttempt(id, passAttempt(1, "r-"+id), 2))
		require.NoError(t, p.Accept(id, "c-"+id))
	}
	// f3 blocked does not stop f5 nor m2's f6; f4 depends on f3 and waits.
	require.Equal(t, []string{"f1", "f2", "f3", "f5", "f6"}, order)
	require.False(t, p.Done())
	require.Equal(t, PlanCounts{Total: 6, Pending: 1, Accepted: 4, Blocked: 1, Waiting: 1}, p.Counts())
	require.Equal(t, []string{"f3"}, p.HeldBy("f4"))
	require.Equal(t, MilestoneBlocked, p.Milestones[0].Status)
	require.Equal(t, MilestoneDone, p.Milestones[1].Status)

	// Unblocking puts f3 back in line; f4 follows it.
	require.NoError(t, p.Unblock("f3", "key added to the vault"))
	require.Equal(t, "f3", nextID(p))
	require.Equal(t, MilestoneRunning, p.Milestones[0].Status)
	require.NoError(t, p.Start("f3"))
	require.NoError(t, p.RecordAttempt("f3", passAttempt(2, "r-f3"), 2))
	require.NoError(t, p.Accept("f3", "c-f3"))
	require.Equal(t, "f4", nextID(p))
	require.NoError(t, p.Start("f4"))
	require.NoError(t, p.RecordAttempt("f4", passAttempt(1, "r-f4"), 2))
	require.NoError(t, p.Accept("f4", "c-f4"))
	_, _, ok := p.Next()
	require.False(t, ok)
	require.True(t, p.Done())
	require.Equal(t, MilestoneDone, p.Milestones[0].Status)
}

func TestNextPrefersRunningAndWaitsForLaterDependency(t *testing.T) {
	p, err := PlanFromBlock("g", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{
		{Title: "A", Features: []PlanBlockFeature{{ID: "a1", Title: "t", Kind: "open", DependsOn: []string{"b1"}}, {ID: "a2", Title: "t", Kind: "open"}}},
		{Title: "B", Features: []PlanBlockFeature{{ID: "b1", Title: "t", Kind: "open"}}},
	}})
	require.NoError(t, err)
	require.Equal(t, "a2", nextID(p), "a1 waits for b1, a later feature")
	require.NoError(t, p.Start("b1"))
	require.Equal(t, "b1", nextID(p), "the running feature is resumed first")
	require.Equal(t, MilestonePending, p.Milestones[0].Status)
	require.NoError(t, p.Skip("b1", "not needed"))
	require.Equal(t, "a2", nextID(p))
	require.Equal(t, []string{"b1"}, p.HeldBy("a1"), "a skipped dependency holds its dependents")
}

func TestAcceptNeedsReceiptBackedVerification(t *testing.T) {
	p, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	require.NoError(t, p.Start("f1"))
	require.ErrorIs(t, p.Accept("f1", "c"), ErrNotVerified)

	noReceipt := passAttempt(1, "")
	require.NoError(t, p.RecordAttempt("f1", noReceipt, 2))
	require.ErrorIs(t, p.Accept("f1", "c"), ErrNotVerified, "a pass without a receipt is not evidence")

	rejected := passAttempt(2, "r-2")
	rejected.Audit = &Audit{Verdict: "reject"}
	require.NoError(t, p.RecordAttempt("f1", rejected, 2))
	require.ErrorIs(t, p.Accept("f1", "c"), ErrNotVerified)

	require.NoError(t, p.RecordAttempt("f1", passAttempt(3, "r-3"), 2))
	require.NoError(t, p.Accept("f1", "c"))
	f, _ := p.Feature("f1")
	require.Equal(t, []string{"r-2", "r-3"}, f.ReceiptIDs)
	require.Equal(t, FeatureAccepted, f.Status)
	require.Empty(t, f.Strategy, "an accepted feature has no next attempt")

	require.ErrorIs(t, p.Accept("nope", "c"), ErrUnknownFeature)
	require.ErrorIs(t, p.Block("f1", Blocker{Type: "platform_limit", Evidence: "a concrete enough reason"}), ErrFeatureState)
	require.ErrorIs(t, p.Unblock("f2", ""), ErrFeatureState)
	require.ErrorIs(t, p.Block("f2", Blocker{Type: "platform_limit", Evidence: "blocked"}), ErrVagueEvidence)
}

func TestRecordAttemptIsIdempotentPerN(t *testing.T) {
	p, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	require.NoError(t, p.RecordAttempt("f1", failAttempt(1, "r-1"), 2))
	require.NoError(t, p.RecordAttempt("f1", failAttempt(1, "r-1"), 2)) // a retried activity records the same attempt
	require.NoError(t, p.RecordAttempt("f1", Attempt{N: 1, Action: "retrieve", Outcome: OutcomeRetrieved}, 2))
	f, _ := p.Feature("f1")
	require.Len(t, f.Attempts, 2)
	require.Equal(t, 1, f.AttemptCount(), "retrieval steps do not count")
	require.Equal(t, []string{"r-1"}, f.ReceiptIDs)
	require.Equal(t, StrategyFocusedCorrection, f.Strategy)
	require.NoError(t, p.RecordAttempt("f1", failAttempt(2, "r-2"), 2))
	f, _ = p.Feature("f1")
	require.Equal(t, StrategyReplan, f.Strategy)
}

func TestDecompose(t *testing.T) {
	p, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	require.NoError(t, p.Start("f2"))
	require.NoError(t, p.RecordAttempt("f2", failAttempt(1, "r-1"), 2))
	require.NoError(t, p.Decompose("f2", []Feature{
		{Title: "Units", Acceptance: []string{"3d"}},
		{ID: "neg", Title: "Negatives", Kind: KindMechanical, Paths: []string{"internal/date/neg.go"}, DependsOn: []string{"f2.1"}},
		{Title: "Docs"},
	}))
	require.Equal(t, 2, p.Revision)
	require.Equal(t, []string{"f1", "f2", "f2.1", "neg", "f2.3", "f3", "f4", "f5"}, ids(Plan{Milestones: p.Milestones[:1]}, func(Feature) bool { return true }))
	parent, _ := p.Feature("f2")
	require.Equal(t, FeatureDecomposed, parent.Status)
	require.Len(t, parent.Attempts, 1, "the parent keeps the evidence that led to the split")
	s1, _ := p.Feature("f2.1")
	require.Equal(t, KindBounded, s1.Kind)
	require.Equal(t, []string{"internal/date/*.go"}, s1.Paths)
	require.Equal(t, "f2", s1.Parent)
	require.Equal(t, FeaturePending, s1.Status)
	require.Empty(t, s1.Attempts)
	require.Empty(t, s1.Strategy)
	neg, _ := p.Feature("neg")
	require.Equal(t, KindMechanical, neg.Kind)
	require.Equal(t, []string{"internal/date/neg.go"}, neg.Paths)
	require.Contains(t, p.Warnings, `sub-feature 3 (id "f2.3") of "f2" has no acceptance criteria: the auditor can judge only its title`)
	require.Equal(t, "f1", nextID(p))
	require.NoError(t, p.Start("f1"))
	require.NoError(t, p.RecordAttempt("f1", passAttempt(1, "r-f1"), 2))
	require.NoError(t, p.Accept("f1", "c"))
	require.Equal(t, "f2.1", nextID(p), "the parts take the parent's place in line")

	// f6 depended on f2: it now waits for all of f2's parts.
	for _, id := range []string{"f2.1", "neg", "f3", "f4", "f5"} {
		require.NoError(t, p.Start(id))
		require.NoError(t, p.RecordAttempt(id, passAttempt(1, "r-"+id), 2))
		require.NoError(t, p.Accept(id, "c"))
	}
	require.Equal(t, "f2.3", nextID(p))
	require.NoError(t, p.Start("f2.3"))
	require.NoError(t, p.RecordAttempt("f2.3", passAttempt(1, "r-x"), 2))
	require.NoError(t, p.Accept("f2.3", "c"))
	require.Equal(t, "f6", nextID(p))
	require.Equal(t, PlanCounts{Total: 9, Pending: 1, Accepted: 7, Decomposed: 1}, p.Counts())
	require.Equal(t, 8, p.Counts().Work())
}

func TestDecomposeRejects(t *testing.T) {
	base, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	tests := []struct {
		name string
		id   string
		subs []Feature
		is   error
		want string
	}{
		{name: "unknown", id: "f9", subs: []Feature{{Title: "x"}}, is: ErrUnknownFeature},
		{name: "no parts", id: "f2", is: ErrInvalidPlan, want: "no sub-features"},
		{name: "duplicate id", id: "f2", subs: []Feature{{ID: "f1", Title: "x"}}, is: ErrInvalidPlan, want: `sub-feature 1 (id "f1") of "f2": id is already used`},
		{name: "generated id clash", id: "f2", subs: []Feature{{ID: "f2.2", Title: "x"}, {Title: "y"}}, is: ErrInvalidPlan, want: `id "f2.2") of "f2": id is already used`},
		{name: "no title", id: "f2", subs: []Feature{{}}, is: ErrInvalidPlan, want: "has no title"},
		{name: "bad kind", id: "f2", subs: []Feature{{Title: "x", Kind: "weird"}}, is: ErrInvalidPlan, want: `kind "weird"`},
		{name: "depends on parent", id: "f2", subs: []Feature{{Title: "x", DependsOn: []string{"f2"}}}, is: ErrInvalidPlan, want: "the feature it is a part of"},
		{name: "cycle through a dependent", id: "f3", subs: []Feature{{Title: "x", DependsOn: []string{"f4"}}}, is: ErrInvalidPlan, want: "dependency cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := clonePlan(t, base)
			err := p.Decompose(tt.id, tt.subs)
			require.ErrorIs(t, err, tt.is)
			if tt.want != "" {
				require.Contains(t, err.Error(), tt.want)
			}
			require.Equal(t, base, p, "a refused decomposition changes nothing")
		})
	}
	p := clonePlan(t, base)
	require.NoError(t, p.Skip("f2", "no"))
	require.ErrorIs(t, p.Decompose("f2", []Feature{{Title: "x"}}), ErrFeatureState)
}

func clonePlan(t *testing.T, p Plan) Plan {
	t.Helper()
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var out Plan
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// TestPlanJSONGolden: plan.json is stable (golden) and round-trips.
func TestPlanJSONGolden(t *testing.T) {
	p := samplePlan(t)
	b, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	goldenFile(t, "plan.golden.json", string(b)+"\n")

	var back Plan
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, p, back)
	b2, err := json.MarshalIndent(back, "", "  ")
	require.NoError(t, err)
	require.Equal(t, string(b), string(b2))
	require.Equal(t, "f2.2", nextID(back))
}

// genPlan draws a valid plan with dependencies only on earlier features
// (so no cycles) and statuses, blockers included, all over the place.
func genPlan(t *rapid.T) Plan {
	var b PlanBlock
	b.Ambiguity = rapid.SampledFrom([]Ambiguity{AmbiguityLow, AmbiguityMedium, AmbiguityHigh}).Draw(t, "ambiguity")
	var all []string
	nm := rapid.IntRange(1, 3).Draw(t, "milestones")
	for mi := range nm {
		m := PlanBlockMilestone{Title: fmt.Sprintf("M%d", mi)}
		nf := rapid.IntRange(1, 4).Draw(t, "features")
		for range nf {
			id := fmt.Sprintf("f%d", len(all)+1)
			f := PlanBlockFeature{ID: id, Title: id, Kind: "bounded", Acceptance: []string{"ok"}}
			if len(all) > 0 {
				f.DependsOn = rapid.SliceOfNDistinct(rapid.SampledFrom(all), 0, 2, func(s string) string { return s }).Draw(t, "deps")
			}
			all = append(all, id)
			m.Features = append(m.Features, f)
		}
		b.Milestones = append(b.Milestones, m)
	}
	p, err := PlanFromBlock("goal", b)
	if err != nil {
		t.Fatalf("generated plan invalid: %v", err)
	}
	for _, id := range all {
		switch rapid.IntRange(0, 4).Draw(t, "status") {
		case 1:
			_ = p.RecordAttempt(id, passAttempt(1, "r-"+id), 2)
			_ = p.Accept(id, "c")
		case 2:
			_ = p.Block(id, Blocker{Type: BlockerPlatformLimit, Evidence: "the platform cannot do this"})
		case 3:
			_ = p.Skip(id, "not needed")
		}
	}
	return p
}

// TestNextProperties: Next only returns runnable work, finds it whenever
// it exists, never stalls behind a blocked independent feature, and
// running the plan to the end leaves exactly the blocked ones and their
// dependents.
func TestNextProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genPlan(t)
		r := p.resolver()
		runnable := ids(p, func(f Feature) bool { return f.Status.pending() && r.ready(f) })
		mi, fi, ok := p.Next()
		if ok != (len(runnable) > 0) {
			t.Fatalf("Next ok=%v but runnable=%v", ok, runnable)
		}
		if ok {
			f := p.Milestones[mi].Features[fi]
			if f.ID != runnable[0] {
				t.Fatalf("Next = %s, want the first runnable %s", f.ID, runnable[0])
			}
		}
		if p.Done() && ok {
			t.Fatalf("Done plan has runnable work")
		}
		// Drive to the end: every step accepts what Next gives.
		for range 50 {
			mi, fi, ok := p.Next()
			if !ok {
				break
			}
			id := p.Milestones[mi].Features[fi].ID
			if err := p.Start(id); err != nil {
				t.Fatal(err)
			}
			if err := p.RecordAttempt(id, passAttempt(1, "r-"+id), 2); err != nil {
				t.Fatal(err)
			}
			if err := p.Accept(id, "c"); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, ok := p.Next(); ok {
			t.Fatalf("did not terminate")
		}
		r = p.resolver()
		for _, f := range p.features() {
			switch {
			case f.Status == FeatureAccepted, f.Status == FeatureSkipped, f.Status == FeatureBlocked:
			case f.Status.pending():
				if len(r.heldBy(f)) == 0 {
					t.Fatalf("%s left pending without a blocked or skipped dependency", f.ID)
				}
			default:
				t.Fatalf("%s left %s", f.ID, f.Status)
			}
		}
		c := p.Counts()
		if p.Done() != (c.Blocked == 0 && c.Pending == 0 && c.Running == 0) {
			t.Fatalf("Done=%v with counts %+v", p.Done(), c)
		}
		if c.Waiting != c.Pending {
			t.Fatalf("every pending feature left should be waiting: %+v", c)
		}
		for _, m := range p.Milestones {
			if m.Status == MilestoneRunning || m.Status == MilestonePending {
				t.Fatalf("milestone %s is %s at the end", m.ID, m.Status)
			}
		}
	})
}
