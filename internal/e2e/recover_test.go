package e2e

import (
	"context"
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

// A planned run's feature session (an activity of a FeatureWorkflow
// child, the default kind of run) is in flight when the daemon is
// SIGKILLed. agent.heartbeat_timeout is twenty minutes, so waiting it out
// would fail the test: the restarted daemon must hand the session back at
// once, and the retry continues it (the same OpenCode session) as soon as
// the daemon and OpenCode are up (seconds; minutes on a loaded machine,
// still far below the timeout); the run then completes.
func TestPlannedRunCrashHandsBackFeatureSessionAtOnce(t *testing.T) {
	needsE2E(t)
	const heartbeat = 20 * time.Minute
	// f1's first worker conversation writes its tool, then hangs at its
	// next model call until the daemon is killed; the continued session
	// is then served by worker-f1-1.
	crash := fakemodel.Rule{
		Name: "worker-f1-crash", When: []string{"# Task (attempt 1)", "Feature f1:"}, Times: 1,
		Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/upper.sh", allTools()[0].code)}},
			{Hold: "crash", Text: "never sent"},
		},
	}
	w := plannedWorld(t, toolsScript(t, crash), "HORIZON_AGENT_HEARTBEAT_TIMEOUT="+heartbeat.String())
	repo, _ := toolsRepo(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	held, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-f1-crash" && r.Held })
	require.NoError(t, err)
	killed := killDaemon(t, w)
	t.Logf("killed the daemon in f1's worker session (%s after it reached the model)", killed.Sub(held.At).Round(time.Millisecond))

	resumed := time.Now()
	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, id)

	// The continued session reaches the model well before the heartbeat
	// timeout could have passed: once the daemon and OpenCode have
	// started, and the retry's backoff of a second.
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	continued, err := w.model.WaitForRequest(wctx, func(r fakemodel.Request) bool { return r.Rule == "worker-f1-1" })
	wcancel()
	require.NoError(t, err, "f1's session was not handed back: nothing continued it within 5m of resume (heartbeat timeout %s)", heartbeat)
	t.Logf("the session continued %s after `horizon resume` began, %s after the kill",
		continued.At.Sub(resumed).Round(time.Millisecond), continued.At.Sub(killed).Round(time.Millisecond))
	require.Less(t, continued.At.Sub(killed), heartbeat/4)

	// The restarted daemon says what it handed back: f1's session, an
	// activity of the FeatureWorkflow child.
	b, err := os.ReadFile(filepath.Join(w.home, "logs", "horizon.log"))
	require.NoError(t, err)
	var handed []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "handed back orphaned activity") {
			handed = append(handed, l)
		}
	}
	require.NotEmpty(t, handed, "the restarted daemon handed nothing back")
	require.Contains(t, strings.Join(handed, "\n"), `"WorkflowType":"FeatureWorkflow"`)

	// f1 lands long before its heartbeat timeout, and the run completes
	// with f1's one attempt the continued session.
	require.Eventually(t, func() bool { return trailers(repo, id)["f1"] > 0 }, 5*time.Minute, 100*time.Millisecond, "f1 never landed")
	require.Less(t, time.Since(killed), heartbeat/2, "f1 landed only after half its heartbeat timeout")
	final := w.waitStatus(id, 6*time.Minute, endedWithHandoff)
	require.Equal(t, horizon.StatusCompleted, final.Status, "%s: %s", final.Status, final.Reason)
	f1 := planFeatures(final.Plan)["f1"]
	require.Len(t, f1.Attempts, 1, "%+v", f1.Attempts)
	require.True(t, f1.Attempts[0].Resumed, "f1's interrupted session was not continued")
	require.Equal(t, map[string]int{"f1": 1, "f2": 1, "f3": 1, "f4": 1}, trailers(repo, id))
}
