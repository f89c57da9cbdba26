package e2e

import (
	"context"
	"encoding/json"
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

// A watched loop on a cluster of two workers: the loop's model is metered
// (fake-cloud ranks first for build), so its activations run on worker 0,
// the paid queue's one poller, and its session lives in worker 0's
// OpenCode store. Each activation's watchdog is scheduled on worker 0's
// host queue (not the loop's queue, which worker 1 polls too) and started
// by worker 0's host-queue poller; activation 1's, reviewing while the
// session waits for its report (held until the note is in), finds a true
// concern, and it is delivered into the loop's session, confirmed:
// activation 2's request carries it. The results count one delivered note.
func TestClusterLoopAdvisorWatchesOnTheSessionsWorker(t *testing.T) {
	needsE2EAlone(t)
	const goal = "LOOP-ADVISED-CLUSTER: write loop.txt"
	concern := "loop.txt has no title line"
	// Activation 1's report is held until the note is in its session.
	script := advisedLoopScript(goal, concern, "a1-report")
	c := newCluster(t, script, 2)
	t.Cleanup(func() { c.w.model.Release("a1-report") })
	// The watchdog's model is free; the loop's (build's first) metered.
	c.w.env = append(c.w.env,
		"HORIZON_ADVISOR_ENABLED=true",
		"HORIZON_ADVISOR_WATCHDOG_MODEL="+fakemodel.ProviderID+"/fake-local",
		"HORIZON_ADVISOR_REVIEW_MODE=step",
		"HORIZON_ADVISOR_REVIEW_INTERVAL=1",
		"HORIZON_ADVISOR_IMMUNE_TURNS=0",
		"HORIZON_ADVISOR_TIMEOUT=60s",
	)
	repo, _ := fixture(t)
	started, code := c.w.loop("--repo", repo, "--max", "2", "--detach", "--json", "--", goal)
	require.Equal(t, 0, code)
	id := started.Loop

	// Activation 1 waits for its report until the note is in its session:
	// only a watchdog that reads worker 0's store gets it there.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	_, err := c.w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "advisor-1" })
	require.NoError(t, err, "the watchdog never reviewed the loop's session")
	rec := filepath.Join(c.shared, "runs", id, "transcripts", "loop-activation-1-advice.md")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), "**r1.1** delivered · concern")
	}, 3*time.Minute, 200*time.Millisecond, "the concern was never delivered")
	c.w.model.Release("a1-report")

	var res struct {
		advisedLoop
		Moves []string `json:"moves"`
	}
	require.Eventually(t, func() bool {
		out, code := c.w.stdout("status", id, "--json")
		return code == 0 && json.Unmarshal([]byte(out), &res) == nil && res.Status != "running"
	}, 6*time.Minute, time.Second)
	require.Equal(t, "satisfied", res.Status, res.Error)
	require.Equal(t, 2, res.Activations)
	require.Equal(t, fakemodel.ProviderID+"/fake-cloud", res.Model, "a metered model: the paid queue")
	require.Equal(t, "answered the advisor's note", res.Report.Summary, "activation 2's request carried the note")
	require.Empty(t, res.Moves, "the session stayed on worker 0")

	// Where things ran: both activations on worker 0 (the paid poller),
	// each activation's watchdog on worker 0's host queue, started by
	// worker 0's host-queue poller.
	host0, host1 := c.hostQueue(t, 0), c.hostQueue(t, 1)
	require.NotEqual(t, host0, host1)
	pid0 := ":" + strconv.Itoa(c.workers[0].Process.Pid)
	_, ran := c.scheduledOn(t, id, "LoopActivation")
	require.NotEmpty(t, ran)
	for _, w := range ran {
		require.True(t, strings.HasSuffix(w, pid0+"/paid"), "the activation ran on worker 0's paid poller: %s", w)
	}
	queues, workers := c.scheduledOn(t, id, "AdvisorWatch")
	require.Equal(t, []string{host0, host0}, queues, "each watchdog was scheduled on the session's worker's host queue")
	for _, w := range workers {
		require.True(t, strings.HasSuffix(w, pid0+"/host"), "started by worker 0: %s", w)
	}

	// The note is counted and recorded as delivered, confirmed...
	require.NotNil(t, res.Notes)
	require.Equal(t, 1, res.Notes.Delivered, "%+v", res.Notes)
	require.Zero(t, res.Notes.Refuted+res.Notes.Failed+res.Notes.Downgraded, "%+v", res.Notes)
	require.Len(t, res.Advice, 2, "both activations were watched")
	var delivered horizon.AdviceRecord
	for _, r := range res.Advice[0].Records {
		require.NotEqual(t, horizon.AdviceFailed, r.Verdict, "%+v", r)
		if r.Note == concern {
			delivered = r
		}
	}
	require.Equal(t, horizon.AdviceDelivered, delivered.Verdict, "%+v", res.Advice[0].Records)
	require.True(t, delivered.Confirmed, "its evidence is line 1 of the loop.txt the session wrote")
	require.NotEmpty(t, delivered.Message, "the session message that carried it")
	// ...and the loop's session got it: activation 2 was answered by the
	// rule that needs it, never by the one without.
	rules := map[string]int{}
	for _, r := range c.w.model.Requests() {
		rules[r.Rule]++
	}
	require.Positive(t, rules["a2-noted"], "%v", rules)
	require.Zero(t, rules["a2"], "%v", rules)
	recordHistory(t, c.w, id, "loop-advised-on-session-host.json")
}
