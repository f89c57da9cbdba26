package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A probe dies with the process that started it (the daemon), even one
// killed with SIGKILL that cannot clean up: the test runs the probe in a
// copy of itself, kills that copy, and watches the probe go.
func TestPytestProbeDiesWithItsParent(t *testing.T) {
	if py := os.Getenv("HORIZON_TEST_PROBE"); py != "" {
		canImportPytest(py) // the helper: blocks until killed
		return
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	py := writeFile(t, dir, ".venv/bin/python", "#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 300\n", 0o755)
	helper := exec.Command(os.Args[0], "-test.run=^TestPytestProbeDiesWithItsParent$")
	helper.Env = append(os.Environ(), "HORIZON_TEST_PROBE="+py)
	require.NoError(t, helper.Start())
	pid := waitPID(t, pidFile)
	require.False(t, gone(pid), "the probe runs")

	require.NoError(t, helper.Process.Kill())
	_ = helper.Wait()
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the probe died with its parent")
}
