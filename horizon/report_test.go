package horizon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reportInput is a morning after: two repositories, one with a planned
// run part-way (two features landed, one blocked), a one-feature run that
// landed, a run paused at its ceiling, a run waiting for approval (and
// paused) and an old run outside the window; the other with an
// unreadable roadmap and a run failing the same test again and again.
// The planned run's lead deferred one of f2.1's findings and ruled the
// other out of scope.
func reportInput(t *testing.T) ReportInput {
	t.Helper()
	p := samplePlan(t)
	f21, ok := p.Feature("f2.1")
	require.True(t, ok)
	f21.Attempts[0].Dispositions = []Disposition{
		{Finding: 1, Kind: DispositionDefer, By: "lead", Subject: "weeks assume 7 days; no ISO week handling",
			Rationale: "ISO weeks are a feature of their own;\nthe CLI takes plain day counts today"},
		{Finding: 2, Kind: DispositionOutOfScope, By: "lead", Subject: "naming", Rationale: "a matter of taste"},
	}
	planned := RunState{RunID: "run-20260301-090000-ab12cd", Goal: p.Goal, Repo: "/src/app", Status: StatusRunning, Phase: PhaseFeatures,
		Plan: &p, Ceiling: 5, Budget: &Budget{Spend: 20}, StartedAt: at(0), UpdatedAt: at(100)}
	planned.Usage = Usage{Cost: 0.2}

	single := RunState{RunID: "run-single", Goal: "Fix the | pipe in titles", Status: StatusCompleted, Commit: "9f8e7d6", Branch: "horizon/run-single",
		StartedAt: at(55), UpdatedAt: at(76), Usage: Usage{Cost: 0.015}}
	single.Attempts = []Attempt{failing(1, 60, "r-s1", "ui.TestTitle"), passAttempt(2, "r-s2")}
	single.Attempts[1].StartedAt, single.Attempts[1].EndedAt = at(70), at(75)

	ceiling := RunState{RunID: "run-ceiling", Goal: "Translate the docs", Status: StatusRunning, Phase: PhasePaused, Ceiling: 1,
		StartedAt: at(190), UpdatedAt: at(210), Usage: Usage{Cost: 1.02}}
	ceiling.Attempts = []Attempt{failing(1, 200, "r-c1", "docs.TestLinks")}
	ceiling.Attempts[0].Usage.Cost = 1.02

	p2, err := PlanFromBlock("Localise the CLI", sampleBlock())
	require.NoError(t, err)
	approve := RunState{RunID: "run-approve", Goal: "Localise the CLI", Status: StatusRunning, Phase: PhaseApproval, Plan: &p2, Paused: true,
		Waiting:   &Checkpoint{Kind: CheckpointMilestone, Subject: "m2", Summary: "milestone m2 (CLI): 1 feature", Since: at(300)},
		StartedAt: at(250), UpdatedAt: at(300)}

	old := RunState{RunID: "run-old", Goal: "Old work", Status: StatusCompleted, StartedAt: t0.Add(-48 * time.Hour), UpdatedAt: t0.Add(-47 * time.Hour)}

	rm, err := ParseRoadmap(".horizon/roadmap.md", `# Roadmap
- [ ] Date ranges that skip holidays {#dates}
- [ ] Localise the CLI {#l10n}
- [ ] Export as CSV {#csv}
- [x] Dark mode
- [ ] Sync with the | calendar {#sync}
- [ ] Rate limits
`)
	require.NoError(t, err)
	var q Queue
	pq := p2
	e, err := q.Add(QueueEntry{Kind: EntryPlan, Plan: &pq, Item: "csv", Goal: "Export as CSV"})
	require.NoError(t, err)
	_, err = q.Add(QueueEntry{Kind: EntryGoal, Goal: "Bump the Go version"})
	require.NoError(t, err)
	var rs ItemRecords
	for _, r := range []ItemRecord{
		{Item: "dates", Stage: StageQueued, Entry: "q0"}, {Item: "dates", Stage: StageRunning, RunID: planned.RunID},
		{Item: "l10n", Stage: StageQueued, Entry: "q00"}, {Item: "l10n", Stage: StageRunning, RunID: approve.RunID},
		{Item: "csv", Stage: StageQueued, Entry: e.ID},
		{Item: "sync", Stage: StageDecomposing}, {Item: "sync", Stage: StageBlocked, Reason: "the lead's plan was invalid three times: feature \"s1\" has no title"},
	} {
		rs, err = rs.Record(r)
		require.NoError(t, err)
	}

	stuck := RunState{RunID: "run-stuck", Goal: "Make the flaky test pass", Status: StatusRunning, Phase: PhaseWorking, StartedAt: at(400), UpdatedAt: at(470)}
	for n := 1; n <= 3; n++ {
		stuck.Attempts = append(stuck.Attempts, failing(n, 400+20*n, "r-k"+string(rune('0'+n)), "net.TestRetry", "net.TestDial"))
	}
	stuck.Recount()
	_, rmErr := ParseRoadmap(".horizon/roadmap.md", "- [ ] fine\n- [] broken\n")
	require.Error(t, rmErr)

	return ReportInput{
		Since: at(12), Until: t0.Add(22 * time.Hour), StallAttempts: 5, DayCeiling: 1,
		Repos: []RepoInput{
			{Repo: "/src/app", Runs: []RunState{old, approve, ceiling, single, planned}, Roadmap: &rm, Records: rs, Queue: q,
				Approvals: []QueueEntry{{ID: "q7", Kind: EntryPlan, Goal: "Add\nrate limits"}}},
			{Repo: "/src/svc", Runs: []RunState{stuck}, RoadmapError: rmErr.Error()},
		},
	}
}

func TestBuildReport(t *testing.T) {
	r := BuildReport(reportInput(t))
	require.Equal(t, "2026-03-02", r.Date)
	require.Equal(t, at(12), r.Since)
	require.Len(t, r.Repos, 2)
	app := r.Repos[0]

	// Landed: f1 (09:25) and f2.1 (09:15) and the one-feature run, each
	// with its commit and receipt; nothing from before the window.
	require.Equal(t, []Landed{
		{RunID: "run-20260301-090000-ab12cd", Feature: "f1", Title: "Parse ISO dates", Branch: "horizon/run-20260301-090000-ab12cd", Commit: "1a2b3c4", Receipt: "r-0002", At: at(25)},
		{RunID: "run-20260301-090000-ab12cd", Feature: "f2.1", Title: "Parse day and week units", Branch: "horizon/run-20260301-090000-ab12cd", Commit: "5d6e7f8", Receipt: "r-0201", At: at(15)},
		{RunID: "run-single", Title: "Fix the | pipe in titles", Branch: "horizon/run-single", Commit: "9f8e7d6", Receipt: "r-s2", At: at(75)},
	}, app.Landed)

	// Waiting, each with its command.
	var cmds []string
	for _, w := range app.Waiting {
		cmds = append(cmds, string(w.Kind)+": "+w.Command)
	}
	require.Equal(t, []string{
		`blocked: horizon unblock run-20260301-090000-ab12cd f3 --note "..."`,
		"ceiling: horizon set-ceiling run-ceiling USD",
		"approval: horizon approve run-approve --subject m2",
		"paused: horizon resume run-approve",
		"approval: horizon approve --repo /src/app q7",
		"roadmap: ",
	}, cmds)
	require.Contains(t, app.Waiting[4].What, "queued plan q7 waits for approval before it runs: Add rate limits")

	// Runs: the old one is out; the window's spend per run.
	var runIDs []string
	for _, rs := range app.Runs {
		runIDs = append(runIDs, rs.RunID)
	}
	require.Equal(t, []string{"run-20260301-090000-ab12cd", "run-single", "run-ceiling", "run-approve"}, runIDs)
	require.Equal(t, 2, app.Queued)
	require.Equal(t, 1.02, app.Runs[2].Spent)
	require.Equal(t, 1, app.Runs[2].Attempts)

	// Deferred: the planned run's deferred finding, on one line; the
	// finding ruled out of scope is not one.
	require.Equal(t, []ReportDeferred{{RunID: "run-20260301-090000-ab12cd", Feature: "f2.1", Subject: "weeks assume 7 days; no ISO week handling",
		Rationale: "ISO weeks are a feature of their own; the CLI takes plain day counts today"}}, app.Deferred)

	// Stalls: the planned run, 5 attempts since f1 was accepted; the
	// other repository's run failing the same two tests.
	require.Len(t, app.Stalled, 1)
	require.Equal(t, 5, app.Stalled[0].Attempts)
	svc := r.Repos[1]
	require.Len(t, svc.Stalled, 1, "three attempts are under the threshold of 5; the same failing set is not")
	require.Equal(t, []string{"net.TestDial", "net.TestRetry"}, svc.Stalled[0].Failing)
	require.Equal(t, WaitRoadmap, svc.Waiting[0].Kind)
	require.Contains(t, svc.Waiting[0].What, ".horizon/roadmap.md:2: ")

	// Days: both days the window touches, whole-day spend, the ceiling.
	require.Len(t, r.Days, 2)
	require.Equal(t, "2026-03-01", r.Days[0].Day)
	require.True(t, r.Days[0].AtCeiling)
	require.Equal(t, 1.13, r.Days[0].Spent, "sums are rounded to a millionth of a dollar")
	require.Equal(t, DaySpend{Day: "2026-03-02", Ceiling: 1}, r.Days[1])

	md, js := ReportPaths(r.Date)
	require.Equal(t, "reports/2026-03-02.md", md)
	require.Equal(t, "reports/2026-03-02.json", js)
}

// The deferred findings listed are those of the runs the report is on,
// each once (a finding deferred again on a later attempt is the same
// one); a run the report leaves out (closed before the window) lists
// none, and with none the repository has no such section, nor its JSON
// the field.
func TestBuildReportDeferred(t *testing.T) {
	defer1 := Disposition{Finding: 1, Kind: DispositionDefer, By: "lead", Subject: "retry the upload on 503", Rationale: "the client has no retry policy yet"}
	plan := func(ds ...Disposition) *Plan {
		return &Plan{Goal: "g", Milestones: []Milestone{{ID: "m1", Features: []Feature{
			{ID: "f1", Status: FeatureAccepted, Attempts: []Attempt{{N: 1, Dispositions: ds}, {N: 2, Dispositions: ds}}},
		}}}}
	}
	open := RunState{RunID: "run-open", Goal: "g", Status: StatusRunning, Plan: plan(defer1), StartedAt: at(10), UpdatedAt: at(20)}
	old := RunState{RunID: "run-old", Goal: "g", Status: StatusCompleted, Plan: plan(defer1), StartedAt: t0.Add(-48 * time.Hour), UpdatedAt: t0.Add(-47 * time.Hour)}
	r := BuildReport(ReportInput{Until: at(600), Repos: []RepoInput{{Repo: "/src/app", Runs: []RunState{old, open}}}})
	require.Equal(t, []ReportDeferred{{RunID: "run-open", Feature: "f1", Subject: "retry the upload on 503", Rationale: "the client has no retry policy yet"}}, r.Repos[0].Deferred)
	require.Contains(t, r.Markdown(), "### Deferred findings\n\nRight, but not needed for the change they were found on; kept for later work.\n\n- `run-open` `f1` retry the upload on 503 — the client has no retry policy yet\n")

	none := BuildReport(ReportInput{Until: at(600), Repos: []RepoInput{{Repo: "/src/app", Runs: []RunState{{RunID: "run-open", Goal: "g", Status: StatusRunning, Plan: plan()}}}}})
	require.Empty(t, none.Repos[0].Deferred)
	require.NotContains(t, none.Markdown(), "Deferred findings")
	js, err := json.Marshal(none)
	require.NoError(t, err)
	require.NotContains(t, string(js), `"deferred"`)
}

func TestBuildReportFirstPassAndEmpty(t *testing.T) {
	until := time.Date(2026, 3, 2, 7, 0, 0, 0, time.FixedZone("CET", 3600))
	r := BuildReport(ReportInput{Until: until})
	require.Equal(t, until.UTC().Add(-24*time.Hour), r.Since, "the first pass looks back a day")
	require.Equal(t, DefaultStallAttempts, r.StallAttempts)
	require.Equal(t, "2026-03-02", r.Date)
	require.Equal(t, []DaySpend{{Day: "2026-03-01"}, {Day: "2026-03-02"}}, r.Days)
	require.Contains(t, r.Markdown(), "No repository is supervised.")
	js, err := json.Marshal(r)
	require.NoError(t, err)
	require.Contains(t, string(js), `"repos":[]`)
}

// A supervisor whose decomposition waits out an outage (the lead's model
// unreachable): the report lists it under what waits, in the outage's
// own line, as `horizon supervisor status` shows it.
func TestBuildReportSupervisorOutage(t *testing.T) {
	since := at(500)
	o := &Outage{On: "model provider unreachable", Activity: "AgentSession", Feature: "decomposition of dates",
		Since: since, Tries: 4, LastError: "503 Service Unavailable"}
	r := BuildReport(ReportInput{Until: at(600), Repos: []RepoInput{{Repo: "/src/app", Runs: []RunState{}, Outage: o}}})
	require.Len(t, r.Repos, 1)
	require.Len(t, r.Repos[0].Waiting, 1)
	w := r.Repos[0].Waiting[0]
	require.Equal(t, WaitOutage, w.Kind)
	require.Contains(t, w.What, "model provider unreachable (decomposition of dates) since "+since.Format("15:04:05")+" (4 tries): 503 Service Unavailable")
	require.Contains(t, w.What, "supervisor.decompose_timeout")
	require.Contains(t, r.Markdown(), "- **outage**: the supervisor waits out an outage: model provider unreachable (decomposition of dates)")
	require.Empty(t, BuildReport(ReportInput{Until: at(600), Repos: []RepoInput{{Repo: "/src/app", Runs: []RunState{}}}}).Repos[0].Waiting)
}

// Each section writer has its golden file; so do the whole report and
// its JSON.
func TestReportGolden(t *testing.T) {
	r := BuildReport(reportInput(t))
	app := r.Repos[0]
	section := func(write func(*strings.Builder)) string {
		var b strings.Builder
		write(&b)
		return b.String()
	}
	goldenFile(t, "report_header.md", section(func(b *strings.Builder) { writeReportHeader(b, r) }))
	goldenFile(t, "report_days.md", section(func(b *strings.Builder) { writeReportDays(b, r.Days) }))
	goldenFile(t, "report_landed.md", section(func(b *strings.Builder) { writeReportLanded(b, app.Landed) }))
	goldenFile(t, "report_waiting.md", section(func(b *strings.Builder) { writeReportWaiting(b, append(app.Waiting, r.Repos[1].Waiting...)) }))
	goldenFile(t, "report_runs.md", section(func(b *strings.Builder) { writeReportRuns(b, app.Runs, app.Queued) }))
	goldenFile(t, "report_stalled.md", section(func(b *strings.Builder) { writeReportStalled(b, append(app.Stalled, r.Repos[1].Stalled...)) }))
	goldenFile(t, "report_deferred.md", section(func(b *strings.Builder) { writeReportDeferred(b, app.Deferred) }))
	goldenFile(t, "report_roadmap.md", section(func(b *strings.Builder) { writeReportRoadmap(b, app.Roadmap) }))
	goldenFile(t, "report_roadmap_error.md", section(func(b *strings.Builder) { writeReportRoadmap(b, r.Repos[1].Roadmap) }))
	goldenFile(t, "report_empty_repo.md", section(func(b *strings.Builder) { writeReportRepo(b, RepoReport{Repo: "/src/idle"}) }))
	goldenFile(t, "report_daily.md", r.Markdown())
	js, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	goldenFile(t, "report_daily.json", string(js)+"\n")

	var back DailyReport
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, r.Markdown(), back.Markdown(), "the JSON file holds everything the Markdown shows")
}

func TestRoadmapRefMarkdown(t *testing.T) {
	rm := mustRoadmap(t, "- [ ] One {#one}\n")
	ref := RoadmapRef{File: rm.File, Items: RoadmapStatus(rm, nil, Queue{})}
	require.Equal(t, "`r.md`:\n\n| line | item | state | run | detail |\n|---|---|---|---|---|\n| 1 | `one` One | unplanned | – | – |\n", ref.Markdown())
	require.Equal(t, "`r.md` has no items.\n", RoadmapRef{File: "r.md"}.Markdown())
}
