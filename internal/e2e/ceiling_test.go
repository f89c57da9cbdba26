package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
)

// A run whose worker spends past the throttle point of its ceiling pauses
// before its next metered call (the auditor's: no local model ranks for
// it) and resumes when `horizon set-ceiling` raises the ceiling above its
// spend.
func TestSpendCeilingPauseAndRaise(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, demoScript(t))
	w.env = append(w.env, "HORIZON_SPEND_CEILING=0.005") // the first attempt alone costs more
	repo, _ := fixture(t)

	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	s := w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Phase == horizon.PhasePaused })
	require.Equal(t, horizon.StatusRunning, s.Status, "paused is not failed")
	require.Len(t, s.Attempts, 1)
	require.Contains(t, s.Reason, "the auditor's model "+demo.Model+" is metered")
	require.Contains(t, s.Reason, "ceiling (run $0.0050")
	require.Contains(t, s.Reason, "horizon set-ceiling "+id)

	o, code := w.run(context.Background(), "set-ceiling", id, "0.001")
	require.Equal(t, 2, code, o)
	require.Contains(t, o, "not above what the run has spent")

	o, code = w.run(context.Background(), "set-ceiling", id, "1")
	require.Equal(t, 0, code, o)
	s = w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, 1.0, s.Ceiling)
}
