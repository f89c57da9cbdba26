package horizon

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// plannedRun is samplePlan inside a run's state: f2.2 is being worked on
// under semi autonomy, with a time and a spend budget.
func plannedRun(t *testing.T) *RunState {
	t.Helper()
	p := samplePlan(t)
	s := &RunState{
		RunID: "r20260301-0900", Goal: p.Goal, Repo: "/src/app", Branch: IntegrationBranch("r20260301-0900"),
		Status: StatusRunning, Phase: PhaseFeatures, Autonomy: AutonomySemi, Plan: &p,
		Budget:    &Budget{Time: 72 * time.Hour, Spend: 5, Deadline: t0.Add(72 * time.Hour)},
		Planning:  Usage{Input: 3000, Output: 400, Cost: 0.03},
		StartedAt: t0, UpdatedAt: at(120), Attempts: []Attempt{},
	}
	u := s.Planning
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			for _, a := range f.Attempts {
				u = u.Add(a.Usage)
			}
		}
	}
	s.Usage = u
	return s
}

// waitingRun: f2.2 is accepted, so milestone m1 has nothing runnable left
// (f3 blocked, f4 waits on it) and the run waits to start m2.
func waitingRun(t *testing.T) *RunState {
	t.Helper()
	s := plannedRun(t)
	require.NoError(t, s.Plan.RecordAttempt("f2.2", passAttempt(2, "r-0203"), 2))
	require.NoError(t, s.Plan.Accept("f2.2", "9a8b7c6d5e4f3a2b1c0d"))
	s.Phase = PhaseApproval
	s.Waiting = &Checkpoint{Kind: CheckpointMilestone, Subject: "m2", Summary: "m1 Parsing is done except f3 (blocked) and f4 (waits on f3); next: m2 CLI", Since: at(130)}
	return s
}

func TestPlanTreeGolden(t *testing.T) {
	s := plannedRun(t)
	got := s.PlanTreeAt(at(150))
	goldenFile(t, "plan_tree_running.txt", got)
	require.Contains(t, got, "m1 Parsing [running]")
	require.Contains(t, got, "\n    f2.1 ", "a decomposed feature's parts sit under it")
	require.Contains(t, got, "blocked: missing_credential: CALENDAR_API_KEY is not set")
	require.Contains(t, got, `unblock: horizon unblock r20260301-0900 f3 --note "..."`)
	require.Contains(t, got, "waits on f3 (blocked)")
	require.Contains(t, got, "2 attempts · T1 · receipt r-0002 pass · $0.0150 · commit 1a2b3c4")
	require.Contains(t, got, "69h30m left")
	require.NotContains(t, got, "approve")

	// An ended run's deadline counts nothing down.
	done := plannedRun(t)
	done.Status = StatusCompleted
	got = done.PlanTreeAt(at(150))
	require.Contains(t, got, "until 2026-03-04 09:00 UTC ·")
	require.NotContains(t, got, "h30m left")

	w := waitingRun(t)
	got = w.PlanTreeAt(at(150))
	goldenFile(t, "plan_tree_waiting.txt", got)
	require.Contains(t, got, "status   running · waiting for approval")
	require.Contains(t, got, "approve: horizon approve r20260301-0900 --subject m2")
	require.Contains(t, got, "milestone m2 since 2026-03-01 11:10 UTC (20m)")

	require.Equal(t, w.PlanTreeAt(time.Time{}), w.PlanTree(), "without a clock, no time left")
	require.Contains(t, w.PlanTree(), "until 2026-03-04 09:00 UTC · spend")
}

func TestPlanMarkdownGolden(t *testing.T) {
	s := plannedRun(t)
	got := s.PlanMarkdown()
	goldenFile(t, "plan_running.md", got)
	require.Contains(t, got, "| milestone | feature | status | attempts | tier | last receipt | cost |")
	require.Contains(t, got, "| m1 Parsing (running) | f1 Parse ISO dates | accepted | 2 | T1 | `r-0002` pass | $0.0150 |")
	require.Contains(t, got, "| ↳ f2.2 ")
	require.Contains(t, got, "`horizon unblock r20260301-0900 f3 --note \"...\"`")

	w := waitingRun(t)
	got = w.PlanMarkdown()
	goldenFile(t, "plan_waiting.md", got)
	require.True(t, strings.HasPrefix(got, "**running** · waiting for approval · $"), got)
	require.Contains(t, got, "**Waiting for approval** of milestone m2")
	require.Contains(t, got, "`horizon approve r20260301-0900 --subject m2`")
}

// A run whose lead has not planned yet shows its header, and a title with a
// pipe cannot break the table.
func TestPlanViewEdges(t *testing.T) {
	s := &RunState{RunID: "r1", Goal: "g", Status: StatusRunning, Phase: PhasePlanning}
	require.Equal(t, "**running** · planning · $0.0000 spent\n\nThe lead is planning the goal.\n", s.PlanMarkdown())
	require.Contains(t, s.PlanTree(), "budget   none (spent $0.0000)")
	require.Zero(t, s.TotalAttempts())

	p, err := PlanFromBlock("g", PlanBlock{Ambiguity: "LOW", Milestones: []PlanBlockMilestone{{Title: "a | b", Features: []PlanBlockFeature{
		{ID: "f1", Title: "x | y", Kind: "bounded"},
	}}}})
	require.NoError(t, err)
	s.Plan, s.Phase = &p, PhaseFeatures
	md := s.PlanMarkdown()
	require.Contains(t, md, `| m1 a \| b (pending) | f1 x \| y | pending | 0 | – | – | – |`)
	require.Equal(t, 0, s.TotalAttempts())
	require.Empty(t, s.ApproveCommand())
}

func TestTotalAttempts(t *testing.T) {
	s := plannedRun(t)
	// f1: 2, f2: 6, f2.1: 1, f2.2: 1, f3: 1.
	require.Equal(t, 11, s.TotalAttempts())
	single := &RunState{Attempts: []Attempt{{N: 1}, {N: 2}}}
	require.Equal(t, 2, single.TotalAttempts())
}

func TestViewDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		72 * time.Hour: "72h", 70*time.Hour + 20*time.Minute: "70h20m", 45 * time.Minute: "45m", 30 * time.Second: "30s",
	} {
		require.Equal(t, want, viewDuration(d))
	}
}
