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
		if code == 0 && json.Unmarshal([]byte(out), &last) == nil && ok(last) {
			return last
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

	out, code := w.run(ctx, "supervisor", "start", "--repo", repo)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "supervisor-")

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
	recordHistory(t, w, view.Supervisor.ID, "supervisor-three-items.json")
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
