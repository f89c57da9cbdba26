package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// roadmapItems are the supervised repository's roadmap: one tool each,
// planned by the lead as one feature.
var roadmapItems = []tool{allTools()[0], allTools()[1], allTools()[2]}

func roadmapText() string {
	var b strings.Builder
	b.WriteString("# Roadmap\n\n")
	for _, it := range roadmapItems {
		fmt.Fprintf(&b, "- [ ] Provide %s\n  The tool is lib/%s.sh with a test under tests/.\n", it.name, it.name)
	}
	b.WriteString("- [x] Write the README by hand\n")
	return b.String()
}

// onePlan is the lead's plan of one roadmap item: one feature.
func onePlan(t *testing.T, tl tool) string {
	plan := map[string]any{
		"ambiguity": "LOW", "assumptions": []string{},
		"milestones": []any{map[string]any{"title": tl.title, "features": []any{map[string]any{
			"id": "f1", "title": tl.title, "kind": "bounded",
			"acceptance": []string{fmt.Sprintf("lib/%s.sh works as its comment says", tl.name)},
			"paths":      []string{"lib/" + tl.name + ".sh", "tests/test_" + tl.name + ".sh"},
		}}}},
	}
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	return "One feature.\n\n```horizon-plan\n" + string(b) + "\n```"
}

// roadmapScript answers the lead's decomposition of each item, and each
// item's worker and auditor.
func roadmapScript(t *testing.T, extra ...fakemodel.Rule) *fakemodel.Script {
	rules := append([]fakemodel.Rule{}, extra...)
	for _, tl := range roadmapItems {
		rules = append(rules,
			fakemodel.Rule{Name: "lead-" + tl.name, When: []string{"# Plan", "Provide " + tl.name},
				Replies: []fakemodel.Reply{{Text: onePlan(t, tl)}}},
			fakemodel.Rule{Name: "worker-" + tl.name, When: []string{"# Task (attempt 1)", tl.title},
				Replies: []fakemodel.Reply{
					{ToolCalls: []fakemodel.ToolCall{write("lib/"+tl.name+".sh", tl.code), write("tests/test_"+tl.name+".sh", tl.test)}},
					{Text: report("added lib/" + tl.name + ".sh")},
				}},
			fakemodel.Rule{Name: "auditor-" + tl.name, When: []string{"# Audit (attempt 1)", tl.title},
				Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		)
	}
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"no rule for this request\"}}\n```"}
	s := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, s.Validate())
	return s
}

func supervisedRepo(t *testing.T) string {
	repo, _ := toolsRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "roadmap.md"), []byte(roadmapText()), 0o644))
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "roadmap")
	return repo
}

func (w *world) roadmap(repo string) horizon.RoadmapRef {
	w.t.Helper()
	out, code := w.stdout("roadmap", "--repo", repo, "--json")
	require.Equal(w.t, 0, code, out)
	var ref horizon.RoadmapRef
	require.NoError(w.t, json.Unmarshal([]byte(out), &ref), out)
	return ref
}

// waitRoadmap polls `horizon roadmap --json` until ok holds.
func (w *world) waitRoadmap(repo string, timeout time.Duration, ok func(horizon.RoadmapRef) bool) horizon.RoadmapRef {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	var last horizon.RoadmapRef
	for time.Now().Before(deadline) {
		out, code := w.stdout("roadmap", "--repo", repo, "--json")
		var cur horizon.RoadmapRef // fresh: last would keep omitted fields
		if code == 0 && json.Unmarshal([]byte(out), &cur) == nil {
			last = cur
			if ok(cur) {
				return cur
			}
		}
		time.Sleep(time.Second)
	}
	st, _ := w.stdout("supervisor", "status", "--repo", repo)
	w.t.Logf("supervisor status:\n%s", st)
	if id := horizon.SupervisorID(repo); true {
		h, _ := w.stdout("history", id)
		w.t.Logf("supervisor history (event types): %s", eventTypes(h))
	}
	for _, it := range last.Items {
		if it.RunID != "" {
			h, _ := w.stdout("history", it.RunID)
			w.t.Logf("history of %s: %s", it.RunID, eventTypes(h))
		}
	}
	w.t.Fatalf("roadmap of %s: condition not met within %s; last: %+v", repo, timeout, last)
	return last
}

func allDone(ref horizon.RoadmapRef) bool {
	n := 0
	for _, it := range ref.Items {
		if it.State == horizon.ItemDone && it.RunID != "" {
			n++
		}
	}
	return n == len(roadmapItems)
}

// A repository with a three-item roadmap left to its supervisor: the
// queue is empty, so item 1 is decomposed and run, then item 2, then item
// 3. Each lands its feature on its run's branch and then on
// horizon/roadmap, where each feature's commit appears exactly once, and
// each run starts from the tip the one before left. The person's branch
// is never touched.
//
// The daemon is SIGKILLed twice, each time followed by `horizon resume`:
// while the lead decomposes item 2, and in the middle of item 3's worker
// session. Neither changes the outcome: nothing is decomposed, run or
// committed twice.
func TestSupervisorRunsTheRoadmap(t *testing.T) {
	needsE2E(t)
	length := roadmapItems[2]
	crashes := []fakemodel.Rule{
		{Name: "lead-lower-crash", When: []string{"# Plan", "Provide lower"}, Times: 1,
			Replies: []fakemodel.Reply{{Hold: "crash", Text: "never sent"}}},
		{Name: "worker-length-crash", When: []string{"# Task (attempt 1)", length.title}, Times: 1,
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/"+length.name+".sh", length.code)}},
				{Hold: "crash", Text: "never sent"},
			}},
	}
	w := plannedWorld(t, roadmapScript(t, crashes...), "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo := supervisedRepo(t)
	head := git(t, repo, "rev-parse", "main")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	out, code := w.run(ctx, "supervisor", "start", "--repo", repo, "--no-ceiling")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "supervisor-")
	require.Contains(t, out, "day ceiling: none, spend is unlimited (--no-ceiling)")

	for _, rule := range []string{"lead-lower-crash", "worker-length-crash"} {
		_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == rule && r.Held })
		require.NoError(t, err, rule)
		killDaemon(t, w)
		t.Logf("killed the daemon at %s", rule)
		out, code := w.run(ctx, "resume")
		require.Equal(t, 0, code, out)
	}

	ref := w.waitRoadmap(repo, 5*time.Minute, allDone)
	require.Len(t, ref.Items, 4)
	require.Equal(t, horizon.ItemDone, ref.Items[3].State, "the ticked item is done by hand")
	require.Empty(t, ref.Items[3].RunID)

	// horizon/roadmap: base, then the three features in roadmap order,
	// each exactly once; each run started from the tip before it.
	log := strings.Fields(git(t, repo, "log", "--reverse", "--format=%H", "main..horizon/roadmap"))
	require.Len(t, log, 3, "one commit per roadmap item")
	prev := head
	for i, it := range roadmapItems {
		files := strings.Fields(git(t, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", log[i]))
		require.ElementsMatch(t, []string{"lib/" + it.name + ".sh", "tests/test_" + it.name + ".sh"}, files, it.name)
		run := ref.Items[i].RunID
		s := w.status(run)
		require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
		require.Equal(t, prev, s.BaseCommit, "%s started from the tip the run before left", run)
		require.Equal(t, log[i], git(t, repo, "rev-parse", "horizon/"+run))
		prev = log[i]
	}
	require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the person's branch moved")
	require.Empty(t, git(t, repo, "status", "--porcelain"))

	// The lead decomposed each item once; no feature was worked twice.
	rules := map[string]int{}
	for _, r := range w.model.Requests() {
		if r.Step == 0 && r.Rule != "" {
			rules[r.Rule]++
		}
	}
	for _, it := range roadmapItems {
		require.Equal(t, 1, rules["lead-"+it.name], it.name)
		require.Equal(t, 1, rules["worker-"+it.name], it.name)
	}
	require.Equal(t, 1, rules["lead-lower-crash"])
	require.Equal(t, 1, rules["worker-length-crash"])

	out, code = w.stdout("supervisor", "status", "--repo", repo, "--json")
	require.Equal(t, 0, code, out)
	var view struct {
		Supervisor horizon.SupervisorState `json:"supervisor"`
		Schedules  []struct {
			ID            string        `json:"id"`
			Cron          string        `json:"cron"`
			CatchupWindow time.Duration `json:"catchup_window"`
			Next          []time.Time   `json:"next"`
		} `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &view), out)
	require.Equal(t, prev, view.Supervisor.Tip)
	require.Equal(t, 3, view.Supervisor.Decompositions, "each item decomposed once")
	require.Equal(t, 3, view.Supervisor.Queue.Seq, "three plans queued: q1, q2, q3")
	require.Len(t, view.Supervisor.Runs, 3)
	require.Len(t, view.Schedules, 2)
	for _, sc := range view.Schedules {
		require.NotEmpty(t, sc.Cron, sc.ID)
		require.NotEmpty(t, sc.Next, sc.ID)
		require.Equal(t, 24*time.Hour, sc.CatchupWindow, sc.ID)
	}
	require.Equal(t, "0 2 * * *", view.Schedules[0].Cron)
	require.Equal(t, "0 7 * * *", view.Schedules[1].Cron)
	recordHistory(t, w, view.Supervisor.ID, "supervisor-run-kinds-three-items.json")
	recordHistory(t, w, view.Supervisor.ID+".plan."+ref.Items[0].Item, "plan-roadmap-item.json")
}

// eventTypes lists a history's event types, for a failure's log.
func eventTypes(history string) string {
	var h struct {
		Events []struct {
			EventType string `json:"eventType"`
		} `json:"events"`
	}
	if json.Unmarshal([]byte(history), &h) != nil {
		return history
	}
	var out []string
	for _, e := range h.Events {
		out = append(out, e.EventType)
	}
	return strings.Join(out, " ")
}

// stuckTools is a person's goal the lead plans into three features: two
// land, the third's worker never makes the gate pass (its test always
// fails the same way).
var stuckTools = []tool{
	{id: "f1", name: "alpha", title: "Add lib/alpha.sh",
		code: "#!/bin/sh\n# alpha.sh prints a.\necho a\n", test: "#!/bin/sh\nset -e\n[ \"$(sh lib/alpha.sh)\" = a ]\n"},
	{id: "f2", name: "beta", title: "Add lib/beta.sh",
		code: "#!/bin/sh\n# beta.sh prints b.\necho b\n", test: "#!/bin/sh\nset -e\n[ \"$(sh lib/beta.sh)\" = b ]\n"},
	{id: "f3", name: "stuck", title: "Add lib/stuck.sh",
		code: "#!/bin/sh\n# stuck.sh should print c.\necho x\n", test: "#!/bin/sh\nset -e\n[ \"$(sh lib/stuck.sh)\" = c ]\n"},
}

func stuckPlan(t *testing.T) string {
	var fs []any
	for _, tl := range stuckTools {
		fs = append(fs, map[string]any{"id": tl.id, "title": tl.title, "kind": "bounded",
			"acceptance": []string{"lib/" + tl.name + ".sh works"}, "paths": []string{"lib/" + tl.name + ".sh", "tests/test_" + tl.name + ".sh"}})
	}
	b, err := json.Marshal(map[string]any{"ambiguity": "LOW", "assumptions": []string{},
		"milestones": []any{map[string]any{"title": "Three tools", "features": fs}}})
	require.NoError(t, err)
	return "Three features.\n\n```horizon-plan\n" + string(b) + "\n```"
}

func queueScript(t *testing.T) *fakemodel.Script {
	double := allTools()[3]
	rules := []fakemodel.Rule{
		{Name: "lead-double", When: []string{"# Plan", "Provide double"}, Replies: []fakemodel.Reply{{Text: onePlan(t, double)}}},
		{Name: "worker-double", When: []string{"# Task (attempt 1)", double.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/double.sh", double.code), write("tests/test_double.sh", double.test)}},
			{Text: report("added lib/double.sh")}}},
		{Name: "auditor-double", When: []string{"# Audit (attempt 1)", double.title}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		{Name: "lead-stuck", When: []string{"# Plan", "Provide stuck tools"}, Replies: []fakemodel.Reply{{Text: stuckPlan(t)}}},
	}
	for _, tl := range stuckTools {
		rules = append(rules,
			fakemodel.Rule{Name: "worker-" + tl.name, When: []string{"# Task (attempt", tl.title}, Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/"+tl.name+".sh", tl.code), write("tests/test_"+tl.name+".sh", tl.test)}},
				{Text: report("added lib/" + tl.name + ".sh")}}},
			fakemodel.Rule{Name: "auditor-" + tl.name, When: []string{"# Audit (attempt", tl.title}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
		)
	}
	s := roadmapScript(t, rules...)
	require.NoError(t, s.Validate())
	return s
}

// queueEntries reads `horizon queue list --json`.
func (w *world) queueEntries(repo string) []struct {
	ID               string `json:"id"`
	Kind             string `json:"kind"`
	Goal             string `json:"goal"`
	Item             string `json:"item"`
	Position         int    `json:"position"`
	WaitsForApproval bool   `json:"waits_for_approval"`
} {
	w.t.Helper()
	out, code := w.stdout("queue", "list", "--repo", repo, "--json")
	require.Equal(w.t, 0, code, out)
	var es []struct {
		ID               string `json:"id"`
		Kind             string `json:"kind"`
		Goal             string `json:"goal"`
		Item             string `json:"item"`
		Position         int    `json:"position"`
		WaitsForApproval bool   `json:"waits_for_approval"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(out), &es), out)
	return es
}

func (w *world) queueIDs(repo string) []string {
	var ids []string
	for _, e := range w.queueEntries(repo) {
		ids = append(ids, e.ID)
	}
	return ids
}

// A supervisor under semi autonomy: the drained queue's decomposition and
// the nightly one (triggered) leave two plans that wait for approval; a
// person's goal added while a roadmap item runs is next; queue move and
// rm change the order; then a run lands two features and gets stuck on a
// third, and the daily pass (triggered) reports the two commits with their
// receipts and flags the stuck feature as stalled, as `horizon status` does.
func TestSupervisorQueueApprovalsAndDailyPass(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, queueScript(t), "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo := supervisedRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	eventually := func(what string, ok func() bool) {
		t.Helper()
		require.Eventually(t, ok, 3*time.Minute, 500*time.Millisecond, what)
	}

	out, code := w.run(ctx, "supervisor", "start", "--repo", repo, "--autonomy", "semi")
	require.Equal(t, 2, code, "a supervisor needs a day ceiling: %s", out)
	require.Contains(t, out, "--day-ceiling USD")
	require.Contains(t, out, "--no-ceiling")
	out, code = w.run(ctx, "supervisor", "start", "--repo", repo, "--autonomy", "semi", "--day-ceiling", "100")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "day ceiling: $100.00 per UTC day across all runs (--day-ceiling)")
	out, code = w.run(ctx, "supervisor", "start", "--repo", repo, "--autonomy", "full", "--day-ceiling", "100")
	require.Equal(t, 2, code, "a second start asking for another autonomy is refused, not ignored: %s", out)
	require.Contains(t, out, "already runs for "+repo+" with autonomy semi")
	eventually("item 1 decomposed", func() bool { return len(w.queueEntries(repo)) == 1 })
	out, code = w.run(ctx, "supervisor", "trigger", "decompose", "--repo", repo)
	require.Equal(t, 0, code, out)
	eventually("two plans queued", func() bool { return len(w.queueEntries(repo)) == 2 })
	es := w.queueEntries(repo)
	for i, e := range es {
		require.Equal(t, fmt.Sprintf("q%d", i+1), e.ID)
		require.Equal(t, "plan", e.Kind)
		require.True(t, e.WaitsForApproval, e.ID)
		require.Equal(t, i+1, e.Position)
	}
	recordHistory(t, w, w.scheduled(repo, 0), "decompose-trigger.json")

	// The console (printed, as without a terminal) lists both queued
	// plans under what needs a person, with the command that approves each.
	out, code = w.run(ctx, "console")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "NEEDS YOU (2)", out)
	for _, e := range es {
		require.Contains(t, out, "queued plan "+e.ID+" waits for approval before it runs", out)
		require.Contains(t, out, "horizon approve --repo "+repo+" "+e.ID, out)
	}
	// resume, with no run to hand back, says what goes on instead.
	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "no run was in progress; going on: 1 supervisor", out)

	// Approve item 1: it runs. A person's goal added meanwhile is next
	// (plan q2 still waits for its approval).
	out, code = w.run(ctx, "approve", "q1", "--repo", repo)
	require.Equal(t, 0, code, out)
	out, code = w.run(ctx, "approve", "q1", "--repo", repo)
	require.Equal(t, 2, code, "q1 is no longer waiting: %s", out)
	eventually("item 1 runs", func() bool { return w.roadmap(repo).Items[0].State == horizon.ItemRunning })
	out, code = w.stdout("queue", "add", "--repo", repo, "--json", "Provide double")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"id":"q3"`)
	out, code = w.stdout("queue", "add", "--repo", repo, "Provide stuck tools")
	require.Equal(t, 0, code, out)
	require.Equal(t, []string{"q2", "q3", "q4"}, w.queueIDs(repo))
	out, code = w.run(ctx, "queue", "move", "q4", "--top", "--repo", repo)
	require.Equal(t, 0, code, out)
	require.Equal(t, []string{"q4", "q2", "q3"}, w.queueIDs(repo))
	out, code = w.run(ctx, "queue", "rm", "q2", "--repo", repo)
	require.Equal(t, 0, code, out)
	require.Equal(t, []string{"q4", "q3"}, w.queueIDs(repo))
	_, code = w.run(ctx, "queue", "rm", "q2", "--repo", repo)
	require.Equal(t, 2, code, "q2 is gone")
	require.Equal(t, horizon.ItemPlanned, w.roadmap(repo).Items[1].State, "a removed plan's item reads planned")

	// Item 1 completes; q4 runs: two features land, the third is stuck.
	eventually("item 1 done", func() bool { return w.roadmap(repo).Items[0].State == horizon.ItemDone })
	var stuckRun string
	eventually("the stuck goal runs", func() bool {
		r, ok := w.supervisedRun(repo, "q4")
		stuckRun = r.RunID
		return ok
	})
	st := w.waitStatus(stuckRun, 4*time.Minute, func(s horizon.RunState) bool {
		if s.Plan == nil {
			return false
		}
		f, ok := s.Plan.Feature("f3")
		return ok && len(f.Attempts) >= 3 && f.Attempts[2].Outcome == horizon.OutcomeGateFailed
	})
	fs := planFeatures(st.Plan)
	require.Equal(t, horizon.FeatureAccepted, fs["f1"].Status)
	require.Equal(t, horizon.FeatureAccepted, fs["f2"].Status)

	out, code = w.run(ctx, "supervisor", "trigger", "daily", "--repo", repo)
	require.Equal(t, 0, code, out)
	var rep horizon.DailyReport
	eventually("the daily report", func() bool {
		out, code := w.stdout("report", "--json")
		return code == 0 && json.Unmarshal([]byte(out), &rep) == nil
	})
	var landed []horizon.Landed
	var stalled []horizon.Stall
	for _, r := range rep.Repos {
		for _, l := range r.Landed {
			if l.RunID == stuckRun {
				landed = append(landed, l)
			}
		}
		stalled = append(stalled, r.Stalled...)
	}
	require.Len(t, landed, 2, "the stuck run's two landed features")
	receipts := readReceipts(t, w, stuckRun)
	for _, l := range landed {
		require.Equal(t, fs[l.Feature].Commit, l.Commit, l.Feature)
		require.Contains(t, receipts, l.Receipt, l.Feature)
	}
	require.NotEmpty(t, stalled)
	require.Equal(t, stuckRun, stalled[0].RunID)
	require.Equal(t, "f3", stalled[0].Feature)
	md, code := w.stdout("report")
	require.Equal(t, 0, code)
	require.Contains(t, md, stuckRun)

	// status shows the same flag.
	flagged := w.waitStatus(stuckRun, time.Minute, func(s horizon.RunState) bool { return len(s.Stalled) > 0 })
	require.Equal(t, stalled[0].Feature, flagged.Stalled[0].Feature)
	require.Equal(t, stalled[0].Kind, flagged.Stalled[0].Kind)
	text, _ := w.stdout("status", stuckRun)
	require.Contains(t, text, "stalled")
	recordHistory(t, w, w.scheduled(repo, 1), "daily-pass.json")

	// Cancelling the stuck run frees the supervisor: the person's goal q3
	// runs and lands.
	out, code = w.run(ctx, "cancel", stuckRun)
	require.Equal(t, 0, code, out)
	eventually("q3 done", func() bool {
		r, ok := w.supervisedRun(repo, "q3")
		return ok && r.Status == horizon.StatusCompleted && r.Landed != ""
	})
	require.Contains(t, git(t, repo, "ls-tree", "-r", "--name-only", "horizon/roadmap"), "lib/double.sh")
	require.NotContains(t, git(t, repo, "ls-tree", "-r", "--name-only", "horizon/roadmap"), "lib/alpha.sh", "a cancelled run lands nothing")
	out, code = w.run(ctx, "supervisor", "stop", "--repo", repo)
	require.Equal(t, 0, code, out)
}

// scheduled is the workflow the supervisor's schedule i (0: nightly
// decomposition, 1: daily pass) started last.
func (w *world) scheduled(repo string, i int) string {
	w.t.Helper()
	out, code := w.stdout("supervisor", "status", "--repo", repo, "--json")
	require.Equal(w.t, 0, code, out)
	var v struct {
		Schedules []struct {
			Recent []string `json:"recent"`
		} `json:"schedules"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(out), &v), out)
	require.Greater(w.t, len(v.Schedules), i, out)
	recent := v.Schedules[i].Recent
	require.NotEmpty(w.t, recent, "schedule %d started nothing", i)
	return recent[len(recent)-1]
}

// supervisedRun is the run the repository's supervisor started for a
// queue entry, if any yet.
func (w *world) supervisedRun(repo, entry string) (horizon.SupervisedRun, bool) {
	out, _ := w.stdout("supervisor", "status", "--repo", repo, "--json")
	var v struct {
		Supervisor horizon.SupervisorState `json:"supervisor"`
	}
	if json.Unmarshal([]byte(out), &v) != nil {
		return horizon.SupervisedRun{}, false
	}
	for _, r := range v.Supervisor.Runs {
		if r.Entry == entry {
			return r, true
		}
	}
	return horizon.SupervisedRun{}, false
}
