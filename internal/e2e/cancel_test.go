package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// Ctrl-C on `horizon start` stops following, not the run (exit 130); then
// `horizon cancel` stops the run: its OpenCode session is aborted (the
// model request it had in flight is dropped) and the run ends cancelled with
// nothing committed.
func TestCtrlCThenCancel(t *testing.T) {
	needsE2E(t)
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Name: "worker-hangs", When: []string{"# Task (attempt 1 of"},
		Replies: []fakemodel.Reply{{Hold: "never", Text: "never sent"}},
	}}}
	w := newWorld(t, script)
	repo, head := fixture(t)

	cmd := exec.Command(horizonBin, "start", "--repo", repo, "--model", demo.Model, goal)
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-hangs" })
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, out.String())
	require.Equal(t, 130, ee.ExitCode(), out.String())
	require.Contains(t, out.String(), "goes on")
	id := runIDRe.FindString(out.String())
	require.NotEmpty(t, id)

	s := w.status(id)
	require.Equal(t, horizon.StatusRunning, s.Status, "Ctrl-C must not stop the run")
	require.Equal(t, 1, w.model.InFlight(), "the worker's model request is still in flight")

	o, code := w.run(ctx, "cancel", id)
	require.Equal(t, 0, code, o)
	require.Contains(t, o, "cancelled")
	s = w.status(id)
	require.Equal(t, horizon.StatusCancelled, s.Status)
	require.Eventually(t, func() bool { return w.model.InFlight() == 0 }, 30*time.Second, 100*time.Millisecond,
		"the aborted session's model request is still open")
	require.Equal(t, head, git(t, repo, "rev-parse", "horizon/"+id), "nothing was committed")

	o, code = w.run(ctx, "cancel", id)
	require.Equal(t, 2, code, o)
	require.Contains(t, o, "the run has ended", "an ended run is not cancelled again")

	o, code = w.run(ctx, "cancel", "run-nope")
	require.Equal(t, 2, code, o)
	require.Contains(t, o, "no run")
}
