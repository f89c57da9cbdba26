package engine

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// Runs of every kind are listed, on the embedded engine's SQLite
// visibility store, by one query over workflows.RunWorkflowTypes (WorkflowType
// IN (...)): a planned run (PlannedRunWorkflow), a one-feature run
// (SingleRunWorkflow), both started as RunInput.Start says, and a planned
// run recorded as a RunWorkflow; a workflow of another type is not. Each
// ran for real (fake agent sessions, real lanes, gates and commits) and
// is read back as a run.
func TestRunKindsListed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	repo, base := benchRepo(t)
	e, c := startWith(t, Options{DBPath: filepath.Join(t.TempDir(), "temporal.db")})
	defer e.Stop()
	defer c.Close()
	const queue = "run-kinds"
	w := worker.New(c, queue, worker.Options{})
	agent := &fakeAgent{plans: map[string]horizon.PlanBlock{}}
	registerPlanned(w, t.TempDir(), agent)
	w.RegisterWorkflow(chain)
	w.RegisterActivity(noop)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx := context.Background()
	in := func(runID string, planned bool) workflows.RunInput {
		agent.set(runID, benchPlan(1, 1))
		return workflows.RunInput{
			RunID: runID, Goal: "Write the feature file", Repo: repo, BaseRef: "main", BaseCommit: base,
			Model: "fake/m", MaxAttempts: 2, Planned: planned, Autonomy: horizon.AutonomyFull,
		}
	}
	startAs := map[string]string{}
	for _, run := range []struct {
		in     workflows.RunInput
		legacy bool
	}{
		{in("kind-planned", true), false},
		{in("kind-single", false), false},
		{in("kind-legacy", true), true},
	} {
		typ, arg := run.in.Start()
		if run.legacy {
			typ, arg = workflows.RunWorkflowName, run.in
		}
		startAs[run.in.RunID] = typ
		h, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: run.in.RunID, TaskQueue: queue}, typ, arg)
		require.NoError(t, err)
		var st horizon.RunState
		require.NoError(t, h.Get(ctx, &st), run.in.RunID)
		require.Equal(t, horizon.StatusCompleted, st.Status, "%s: %s", run.in.RunID, st.Reason)
	}
	require.Equal(t, map[string]string{
		"kind-planned": workflows.PlannedRunWorkflowName, "kind-single": workflows.SingleRunWorkflowName, "kind-legacy": workflows.RunWorkflowName,
	}, startAs)
	other, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "not-a-run", TaskQueue: queue}, chain, 1)
	require.NoError(t, err)
	require.NoError(t, other.Get(ctx, nil))

	r := core.Reader{Client: c, Namespace: "default"}
	want := []string{"kind-legacy", "kind-planned", "kind-single"}
	var ids []string
	var listErr error
	require.Eventually(t, func() bool {
		rows, err := r.Runs(ctx, "", 0)
		if listErr = err; err != nil {
			return false
		}
		ids = ids[:0]
		for _, row := range rows {
			ids = append(ids, row.ID)
		}
		slices.Sort(ids)
		return slices.Equal(want, ids)
	}, 10*time.Second, 100*time.Millisecond, "listed: %v (%v)", ids, listErr)

	rows, err := r.Runs(ctx, "ExecutionStatus = 'Completed'", 2)
	require.NoError(t, err)
	require.Len(t, rows, 2, "the limit holds across the types")
	states, err := r.RunsSince(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Len(t, states, 3)
	for _, st := range states {
		require.Equal(t, horizon.StatusCompleted, st.Status, st.RunID)
	}
	needs, err := r.Needs(ctx)
	require.NoError(t, err)
	require.Empty(t, needs, "nothing is open")
}
