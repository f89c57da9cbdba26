package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
)

// hostQueue is the host queue worker i announced when it became ready.
func (c *cluster) hostQueue(t *testing.T, i int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.homes[i], "logs", "horizon.log"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		var e struct {
			Message   string `json:"message"`
			HostQueue string `json:"HostQueue"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Message == "worker ready" && e.HostQueue != "" {
			return e.HostQueue
		}
	}
	t.Fatalf("worker %d never said its host queue", i)
	return ""
}

// scheduledOn lists, for each activity of type name in workflow id's
// history, the task queue it was scheduled on and the identity of the
// worker that started it (the last start of each).
func (c *cluster) scheduledOn(t *testing.T, id, name string) (queues, workers []string) {
	t.Helper()
	out, code := c.w.stdout("history", id)
	require.Equal(t, 0, code, out)
	var h struct {
		Events []struct {
			EventID   json.Number `json:"eventId"`
			Scheduled *struct {
				ActivityType struct{ Name string } `json:"activityType"`
				TaskQueue    struct{ Name string } `json:"taskQueue"`
			} `json:"activityTaskScheduledEventAttributes"`
			Started *struct {
				ScheduledEventID json.Number `json:"scheduledEventId"`
				Identity         string      `json:"identity"`
			} `json:"activityTaskStartedEventAttributes"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &h))
	index := map[json.Number]int{}
	for _, e := range h.Events {
		switch {
		case e.Scheduled != nil && e.Scheduled.ActivityType.Name == name:
			index[e.EventID] = len(queues)
			queues, workers = append(queues, e.Scheduled.TaskQueue.Name), append(workers, "")
		case e.Started != nil:
			if i, ok := index[e.Started.ScheduledEventID]; ok {
				workers[i] = e.Started.Identity
			}
		}
	}
	return queues, workers
}

// clusterAdvisedScript is a planned run of one feature on a cluster: the
// lead plans f1 (lib/upper.sh), whose worker first writes it upside down
// and reads it again (that step held until the test releases it); the
// advisor's first review finds the true blocker, which wakes the worker,
// whose next turn fixes it; the auditor accepts.
func clusterAdvisedScript(t *testing.T, blocker string) *fakemodel.Script {
	t.Helper()
	tl := toolsPlan[0][0]
	require.Equal(t, "upper", tl.name)
	plan, err := json.Marshal(map[string]any{
		"milestones": []any{map[string]any{"title": "Case tools", "features": []any{map[string]any{
			"id": tl.id, "title": tl.title, "kind": "bounded",
			"acceptance": []string{"lib/upper.sh prints its argument in upper case"},
			"paths":      []string{"lib/upper.sh", "tests/test_upper.sh"},
		}}}},
		"ambiguity":   "LOW",
		"assumptions": []string{"POSIX sh and coreutils only"},
	})
	require.NoError(t, err)
	task := []string{"# Task (attempt 1", "Feature f1:"}
	upsideDown := strings.Replace(tl.code, "tr '[:lower:]' '[:upper:]'", "tr '[:upper:]' '[:lower:]'", 1)
	require.NotEqual(t, tl.code, upsideDown)
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"no rule\"}}\n```"}
	sc := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "lead", When: []string{"# Plan"}, Replies: []fakemodel.Reply{{Text: "One milestone.\n\n```horizon-plan\n" + string(plan) + "\n```"}}},
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{
			adviceReply(adviceNote("blocker", blocker, evidence("lib/upper.sh", 3, "`tr '[:upper:]' '[:lower:]'`")))}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "worker-answers", When: append(append([]string{}, task...), "[horizon advisor · blocker"), Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/upper.sh", tl.code)}},
			{Text: report("lib/upper.sh upper-cases, as the advisor said")},
		}},
		{Name: "worker", When: task, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/upper.sh", upsideDown), write("tests/test_upper.sh", tl.test)}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/lib/upper.sh"}}}, Hold: "worker-step-2"},
			{Text: report("added lib/upper.sh and its test")},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}, Fallback: &unscripted}
	require.NoError(t, sc.Validate())
	return sc
}

// The advisor on a cluster of two workers: the feature's worker session
// is metered, so it runs on worker 0, the paid queue's one poller, in
// worker 0's OpenCode store; the watchdog is scheduled on worker 0's host
// queue (not the run's queue, which worker 1 polls too), reviews the
// session there and its confirmed blocker wakes the worker, whose next
// turn sees it and fixes the tool. The attempt records the note as
// delivered; the run completes with the feature committed once.
func TestClusterAdvisorWatchesOnTheSessionsWorker(t *testing.T) {
	needsE2EAlone(t)
	note := "upper.sh lower-cases: swap the two tr sets"
	c := newCluster(t, clusterAdvisedScript(t, note), 2)
	t.Cleanup(func() { c.w.model.Release("worker-step-2") })
	// The advisor's settings are the run's, read when it starts; the
	// watchdog's model is free, the worker's (forced) metered.
	c.w.env = append(c.w.env,
		"HORIZON_ADVISOR_ENABLED=true",
		"HORIZON_ADVISOR_WATCHDOG_MODEL="+fakemodel.ProviderID+"/fake-local",
		"HORIZON_ADVISOR_REVIEW_MODE=step",
		"HORIZON_ADVISOR_REVIEW_INTERVAL=1",
		"HORIZON_ADVISOR_IMMUNE_TURNS=0",
		"HORIZON_ADVISOR_TIMEOUT=60s",
	)
	repo, _ := toolsRepo(t)
	out, code := c.w.run(context.Background(), "start", "--detach", "--repo", repo, "--model", fakemodel.ProviderID+"/fake-cloud", toolsGoal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)

	// The worker waits in its second step until the blocker is in its
	// session: only a watchdog that reads worker 0's store gets it there.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	_, err := c.w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "advisor-1" })
	require.NoError(t, err, "the watchdog never reviewed the session")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.shared, "runs", id, "transcripts", "f1-attempt-1-advice.md"))
		return strings.Contains(string(b), "**r1.1** delivered · blocker · woke the worker")
	}, 3*time.Minute, 200*time.Millisecond, "the blocker was never delivered")
	c.w.model.Release("worker-step-2")

	s := c.w.waitStatus(id, 6*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.Equal(t, map[string]int{"f1": 1}, trailers(repo, id), "the feature committed once")

	// Where things ran: the session on worker 0, its watchdog on worker
	// 0's host queue, started by worker 0's host-queue poller.
	require.Equal(t, 0, c.sessionWorker(t, "f1", "worker"), "the metered session runs on the paid poller")
	host0, host1 := c.hostQueue(t, 0), c.hostQueue(t, 1)
	require.NotEqual(t, host0, host1)
	queues, workers := c.scheduledOn(t, id+".f1.1", "AdvisorWatch")
	require.Equal(t, []string{host0}, queues, "the watchdog was scheduled on the session's worker's host queue")
	require.True(t, strings.HasSuffix(workers[0], ":"+strconv.Itoa(c.workers[0].Process.Pid)+"/host"), "started by worker 0: %s", workers[0])

	// The note is recorded as delivered, confirmed, waking the worker...
	f1 := planFeatures(s.Plan)["f1"]
	require.Len(t, f1.Attempts, 1)
	var rec *horizon.AdviceRecord
	for i, r := range f1.Attempts[0].Advice {
		require.NotEqual(t, horizon.AdviceFailed, r.Verdict, "%+v", r)
		if r.Note == note {
			rec = &f1.Attempts[0].Advice[i]
		}
	}
	require.NotNil(t, rec, "no record of the note in %+v", f1.Attempts[0].Advice)
	require.Equal(t, horizon.AdviceDelivered, rec.Verdict)
	require.True(t, rec.Confirmed, "its evidence is line 3 of the worker's lib/upper.sh")
	require.True(t, rec.Woke)
	require.NotEmpty(t, rec.Message, "the session message that carried it")
	// ...and the worker's session got it: its next turn was prompted with it.
	var answered bool
	for _, r := range c.w.model.Requests() {
		if r.Rule == "worker-answers" && strings.Contains(r.LastUser, note) {
			answered = true
		}
	}
	require.True(t, answered, "the worker's next turn did not see the note")
	require.Equal(t, strings.TrimSpace(toolsPlan[0][0].code), strings.TrimSpace(git(t, repo, "show", fmt.Sprintf("horizon/%s:lib/upper.sh", id))), "the fixed tool landed")
	recordHistory(t, c.w, id+".f1.1", "feature-advised-on-session-host.json")
}
