package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/fakemodel"
)

// `horizon worker` joins an engine it does not run (here the engine of
// another horizon home's daemon, standing in for a remote cluster), polls
// it, and stops cleanly on SIGTERM; without an address it refuses with
// exit 2.
func TestWorkerJoinsRemoteEngine(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{})
	out, code := w.run(context.Background(), "resume")
	require.Equal(t, 0, code, out)
	port := ""
	for _, e := range w.env {
		if strings.HasPrefix(e, "HORIZON_TEMPORAL_PORT=") {
			port = strings.TrimPrefix(e, "HORIZON_TEMPORAL_PORT=")
		}
	}

	out, code = w.run(context.Background(), "worker")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "HORIZON_TEMPORAL_ADDRESS")

	home := filepath.Join(t.TempDir(), "worker-home")
	cmd := exec.Command(horizonBin, "worker")
	cmd.Env = append(append([]string{}, w.env...), "HORIZON_HOME="+home, "HORIZON_TEMPORAL_ADDRESS=127.0.0.1:"+port, "HORIZON_WORKER_PAID_POLLER=false",
		"HORIZON_TEMPORAL_API_KEY_FILE="+filepath.Join(w.home, "engine.token"))
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "horizon.log"))
		return strings.Contains(string(b), "worker ready")
	}, time.Minute, 100*time.Millisecond, "the worker never reported ready")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "a clean stop exits 0")
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the worker did not stop within 30s of SIGTERM")
	}
}
