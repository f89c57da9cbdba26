package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// leadDown is what the provider answers the lead's decomposition of the
// first roadmap item, every time: the lead's model is unreachable.
const leadDown = "Service Unavailable: upstream connect error or disconnect/reset before headers"

// supervisorView is `horizon supervisor status --json`, read into types
// of this test so the JSON's fields are named here.
type supervisorView struct {
	Supervisor struct {
		ID      string                  `json:"id"`
		State   string                  `json:"status"`
		Waiting string                  `json:"waiting"`
		Outage  *horizon.Outage         `json:"outage"`
		Runs    []horizon.SupervisedRun `json:"runs"`
	} `json:"supervisor"`
}

func (w *world) supervisorView(repo string) (supervisorView, bool) {
	out, code := w.stdout("supervisor", "status", "--repo", repo, "--json")
	var v supervisorView
	return v, code == 0 && json.Unmarshal([]byte(out), &v) == nil
}

// Issue 23: the lead's model is unreachable, so the decomposition of the
// roadmap's first item (a PlanWorkflow child) never ends. The supervisor
// does not wait behind it: a goal queued meanwhile starts and lands;
// `supervisor status` (text and JSON) and `horizon report` name the
// outage of the decomposition; `supervisor stop` cancels the
// decomposition and the supervisor has ended when it answers.
func TestSupervisorGoesOnBesideAnUnreachableLead(t *testing.T) {
	needsE2E(t)
	upper, double := roadmapItems[0], allTools()[3]
	rules := []fakemodel.Rule{
		{Name: "lead-down", When: []string{"# Plan", "Provide " + upper.name},
			Replies: []fakemodel.Reply{{Status: 503, Error: leadDown}}},
		{Name: "lead-double", When: []string{"# Plan", "Provide double"}, Replies: []fakemodel.Reply{{Text: onePlan(t, double)}}},
		{Name: "worker-double", When: []string{"# Task (attempt 1)", double.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/double.sh", double.code), write("tests/test_double.sh", double.test)}},
			{Text: report("added lib/double.sh")}}},
		{Name: "auditor-double", When: []string{"# Audit (attempt 1)", double.title}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}
	w := plannedWorld(t, roadmapScript(t, rules...), "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo := supervisedRepo(t)
	id := horizon.SupervisorID(repo)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	out, code := w.run(ctx, "supervisor", "start", "--repo", repo, "--no-ceiling")
	require.Equal(t, 0, code, out)
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "lead-down" })
	require.NoError(t, err, "the lead is asked to decompose the first item")

	// A person's goal queued while the lead's decomposition hangs starts
	// and lands.
	out, code = w.stdout("queue", "add", "--repo", repo, "--json", "Provide double")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `"id":"q1"`)
	var started, landed time.Duration
	queued := time.Now()
	deadline := queued.Add(patience(4 * time.Minute))
	for {
		r, ok := w.supervisedRun(repo, "q1")
		if ok && started == 0 {
			started = time.Since(queued)
			t.Logf("q1 started after %s as %s", started.Round(time.Second), r.RunID)
		}
		if ok && r.Status == horizon.StatusCompleted && r.Landed != "" {
			landed = time.Since(queued)
			break
		}
		if time.Now().After(deadline) {
			st, _ := w.stdout("supervisor", "status", "--repo", repo)
			h, _ := w.stdout("history", id)
			t.Logf("supervisor status:\n%s\nsupervisor history (event types): %s", st, eventTypes(h))
			t.Fatalf("the goal queued beside the decomposition did not start and land within %s (started: %t, run: %+v)", patience(4*time.Minute), started > 0, r)
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("q1 landed %s after it was queued", landed.Round(time.Second))
	require.Contains(t, git(t, repo, "ls-tree", "-r", "--name-only", "horizon/roadmap"), "lib/double.sh")
	item := w.roadmap(repo).Items[0]
	require.Equal(t, horizon.ItemDecomposing, item.State, "the first item is still being decomposed: %+v", item)

	// supervisor status names the outage, in JSON and in text.
	var view supervisorView
	require.Eventually(t, func() bool {
		v, ok := w.supervisorView(repo)
		view = v
		return ok && v.Supervisor.Outage != nil && v.Supervisor.Outage.On == "model provider unreachable"
	}, 2*time.Minute, time.Second, "supervisor status --json names no outage")
	o := view.Supervisor.Outage
	t.Logf("outage: %s", o.Line())
	require.Contains(t, o.Feature, item.Item, "the outage names the item being decomposed")
	require.Contains(t, o.LastError, "Service Unavailable", "the provider's words")
	require.Contains(t, view.Supervisor.Waiting, item.Item, "the supervisor says it waits on the decomposition")
	text, code := w.stdout("supervisor", "status", "--repo", repo)
	require.Equal(t, 0, code, text)
	require.Regexp(t, `(?m)^outage\s+model provider unreachable \(decomposition of `+item.Item+`\) since \d\d:\d\d:\d\d`, text)

	// So does the report (none yet: written now from the engine's records).
	md, code := w.stdout("report")
	require.Equal(t, 0, code, md)
	require.Contains(t, md, "model provider unreachable", md)
	require.Contains(t, md, "decomposition of "+item.Item, md)
	js, code := w.stdout("report", "--json")
	require.Equal(t, 0, code, js)
	var rep horizon.DailyReport
	require.NoError(t, json.Unmarshal([]byte(js), &rep), js)
	found := false
	for _, rr := range rep.Repos {
		for _, wt := range rr.Waiting {
			found = found || wt.Kind == "outage" && strings.Contains(wt.What, "model provider unreachable")
		}
	}
	require.True(t, found, "the report's JSON lists the outage: %s", js)

	// stop ends the supervisor: the decomposition is cancelled and the
	// supervisor has completed by the time stop answers.
	asked := time.Now()
	out, code = w.run(ctx, "supervisor", "stop", "--repo", repo)
	require.Equal(t, 0, code, out)
	t.Logf("supervisor stop answered in %s: %s", time.Since(asked).Round(100*time.Millisecond), strings.TrimSpace(out))
	require.Contains(t, out, "stopped")
	eng := w.engineClient()
	var status enumspb.WorkflowExecutionStatus
	require.Eventually(t, func() bool {
		desc, err := eng.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false
		}
		status = desc.GetWorkflowExecutionInfo().GetStatus()
		return status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}, 30*time.Second, 500*time.Millisecond, "the supervisor still runs 30 s after stop")
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, status, "the supervisor ended itself")
	require.Less(t, time.Since(asked), 30*time.Second)
	desc, err := eng.DescribeWorkflowExecution(ctx, id+".plan."+item.Item, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, desc.GetWorkflowExecutionInfo().GetStatus(), "stop cancelled the decomposition")
	v, ok := w.supervisorView(repo)
	require.True(t, ok)
	require.Equal(t, string(horizon.SupervisorStopped), v.Supervisor.State)
	r, ok := w.supervisedRun(repo, "q1")
	require.True(t, ok)
	require.Equal(t, horizon.StatusCompleted, r.Status, "the run it started is untouched")
	recordHistory(t, w, id, "supervisor-decompose-aside-stopped.json")
}
