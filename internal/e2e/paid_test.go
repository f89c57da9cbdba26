package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// Two runs whose models are metered (a route the leaderboard does not know
// counts as metered) share one paid slot: while run A's worker session
// waits on the model, run B's worker session does not start; when A's
// session ends, B's runs. Both complete.
func TestOnePaidCallAtATime(t *testing.T) {
	needsE2E(t)
	script := demoScript(t)
	// The first worker conversation is demo's worker-1 with its first model
	// call held until the test releases it.
	hold := script.Rules[0]
	hold.Name, hold.Times = "worker-held", 1
	hold.Replies = append([]fakemodel.Reply(nil), hold.Replies...)
	hold.Replies[0].Hold = "paid"
	script.Rules = append([]fakemodel.Rule{hold}, script.Rules...)
	w := newWorld(t, script)
	repoA, _ := fixture(t)
	repoB, _ := fixture(t)

	out, code := w.stdout("start", "--detach", "--repo", repoA, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	a := strings.TrimSpace(out)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-held" })
	require.NoError(t, err)

	out, code = w.stdout("start", "--detach", "--repo", repoB, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	b := strings.TrimSpace(out)
	// B reaches its worker phase, but its session must not reach the model
	// while A's holds the paid slot.
	w.waitStatus(b, time.Minute, func(s horizon.RunState) bool { return s.Phase == horizon.PhaseWorking })
	time.Sleep(3 * time.Second) // a window in which an unserialised session would have called the model
	for _, r := range w.model.Requests() {
		require.NotContains(t, r.Workdir, b, "run B's session ran while run A held the paid slot")
	}

	w.model.Release("paid")
	for _, id := range []string{a, b} {
		s := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusCompleted, s.Status, id)
	}
	// Sessions never overlapped: every request of B's worker-1 conversation
	// came after A's held request was released.
	var releasedAt time.Time
	for _, r := range w.model.Requests() {
		if strings.Contains(r.Workdir, a) && r.Rule == "worker-held" && r.Step == 1 {
			releasedAt = r.At
		}
	}
	require.False(t, releasedAt.IsZero())
	for _, r := range w.model.Requests() {
		if strings.Contains(r.Workdir, b) {
			require.True(t, r.At.After(releasedAt), "B's request at %s before A's session went on at %s", r.At, releasedAt)
		}
	}
}
