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

// neverTool's test asserts what its code never does: no attempt can pass.
var neverTool = tool{id: "f1", name: "never", title: "Add lib/never.sh",
	code: "#!/bin/sh\n# never.sh should print c.\necho x\n", test: "#!/bin/sh\nset -e\n[ \"$(sh lib/never.sh)\" = c ]\n"}

// stallScript: the lead plans each item as one feature; the never item's
// worker writes the same wrong tool on every attempt; upper's worker and
// auditor do their job.
func stallScript(t *testing.T) *fakemodel.Script {
	upper := allTools()[0]
	rules := []fakemodel.Rule{
		{Name: "lead-never", When: []string{"# Plan", "Provide never"}, Replies: []fakemodel.Reply{{Text: onePlan(t, neverTool)}}},
		{Name: "worker-never", When: []string{"# Task (attempt", neverTool.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/never.sh", neverTool.code), write("tests/test_never.sh", neverTool.test)}},
			{Text: report("added lib/never.sh")}}},
		{Name: "lead-upper", When: []string{"# Plan", "Provide upper"}, Replies: []fakemodel.Reply{{Text: onePlan(t, upper)}}},
		{Name: "worker-upper", When: []string{"# Task (attempt 1)", upper.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/upper.sh", upper.code), write("tests/test_upper.sh", upper.test)}},
			{Text: report("added lib/upper.sh")}}},
		{Name: "auditor-upper", When: []string{"# Audit (attempt 1)", upper.title}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"no rule for this request\"}}\n```"}
	s := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, s.Validate())
	return s
}

// stallRepo is a supervised repository whose roadmap's first item can
// never pass and whose second can.
func stallRepo(t *testing.T) string {
	repo, _ := toolsRepo(t)
	roadmap := "# Roadmap\n\n- [ ] Provide never\n  The tool is lib/never.sh with a test under tests/.\n- [ ] Provide upper\n  The tool is lib/upper.sh with a test under tests/.\n"
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "roadmap.md"), []byte(roadmap), 0o644))
	git(t, repo, "add", "-A")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "roadmap")
	return repo
}

// A roadmap item that can never pass (its test asserts what the code never
// does) makes a bounded number of attempts: three failing the same way
// stall it (the daily pass's rule), then it backs off 2s, 4s, 8s between
// three more (run.stall_backoff, run.stall_block_after 3), `horizon
// status` saying when the next one goes, and blocks as `stalled` with the
// failing set as evidence. Its run reads blocked, which frees the
// supervisor: the next item is decomposed, runs and lands. An unblock puts
// the stalled feature back in line with its counter reset: it makes the
// same six attempts again before it blocks again.
func TestSupervisorStalledItemBacksOffAndBlocks(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, stallScript(t), "HORIZON_MODELS_DEFAULT="+demo.Model,
		"HORIZON_RUN_STALL_BACKOFF_BASE=2s", "HORIZON_RUN_STALL_BACKOFF_MAX=8s", "HORIZON_RUN_STALL_BLOCK_AFTER=3")
	repo := stallRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	out, code := w.run(ctx, "supervisor", "start", "--repo", repo, "--no-ceiling")
	require.Equal(t, 0, code, out)
	ref := w.waitRoadmap(repo, 4*time.Minute, func(r horizon.RoadmapRef) bool { return len(r.Items) == 2 && r.Items[0].RunID != "" })
	run := ref.Items[0].RunID

	// While it backs off, status says when the next attempt goes.
	deadline := time.Now().Add(3 * time.Minute)
	var text string
	for time.Now().Before(deadline) && !strings.Contains(text, "stalled: next attempt at") {
		text, _ = w.stdout("status", run)
		time.Sleep(time.Second)
	}
	require.Contains(t, text, "stalled: next attempt at", "horizon status while the feature backs off")

	// Blocked as stalled after 3 + 3 attempts, spaced by the backoff.
	st := w.waitStatus(run, 3*time.Minute, func(s horizon.RunState) bool { return s.Status == horizon.StatusBlocked })
	f1, ok := st.Plan.Feature("f1")
	require.True(t, ok)
	require.Equal(t, horizon.FeatureBlocked, f1.Status)
	require.Equal(t, horizon.BlockerStalled, f1.Blocker.Type)
	require.Contains(t, f1.Blocker.Evidence, "never", "the repeated failing set")
	require.Equal(t, 6, f1.AttemptCount())
	for i, least := range map[int]time.Duration{3: 2 * time.Second, 4: 4 * time.Second, 5: 8 * time.Second} {
		gap := f1.Attempts[i].StartedAt.Sub(f1.Attempts[i-1].EndedAt)
		require.GreaterOrEqual(t, gap, least, "attempt %d waited its backoff", i+1)
	}
	require.Nil(t, st.Backoff)

	// The next item went on and landed.
	ref = w.waitRoadmap(repo, 3*time.Minute, func(r horizon.RoadmapRef) bool { return r.Items[1].State == horizon.ItemDone })
	require.Equal(t, horizon.ItemBlocked, ref.Items[0].State)
	files := git(t, repo, "ls-tree", "-r", "--name-only", "horizon/roadmap")
	require.Contains(t, files, "lib/upper.sh")
	require.NotContains(t, files, "lib/never.sh")
	sessions := 0
	for _, r := range w.model.Requests() {
		if r.Rule == "worker-never" && r.Step == 0 {
			sessions++
		}
	}
	require.Equal(t, 6, sessions, "one worker session per attempt, and no more")

	// Unblocked: back in line with the stall counter reset, so six more.
	out, code = w.run(ctx, "unblock", run, "f1", "--note", "try once more")
	require.Equal(t, 0, code, out)
	st = w.waitStatus(run, 3*time.Minute, func(s horizon.RunState) bool {
		f, _ := s.Plan.Feature("f1")
		return s.Status == horizon.StatusBlocked && f.AttemptCount() > 6
	})
	f1, _ = st.Plan.Feature("f1")
	require.Equal(t, horizon.BlockerStalled, f1.Blocker.Type)
	require.Equal(t, 12, f1.AttemptCount())

	out, code = w.run(ctx, "cancel", run)
	require.Equal(t, 0, code, out)
	out, code = w.run(ctx, "supervisor", "stop", "--repo", repo)
	require.Equal(t, 0, code, out)
}
