package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// recordedGate fails, saying so: whatever tampering makes a gate run
// pass, it was not this one.
const recordedGate = "#!/bin/sh\necho recorded gate ran\nexit 1\n"

// passing is what a worker would like its judge to be.
const passing = "#!/bin/sh\necho tampered gate ran\nexit 0\n"

// tamperRepo commits a .zecor gate (and a gate-directory file, and a
// source file) and returns the harness with its lane.
func tamperRepo(t *testing.T) (*gitHarness, Lane) {
	h := newGitHarness(t)
	h.write(h.repo, ".zecor/verify.sh", recordedGate)
	require.NoError(t, os.Chmod(filepath.Join(h.repo, ".zecor/verify.sh"), 0o755))
	h.write(h.repo, ".horizon/config.yaml", "gate:\n  timeout: 1m\n")
	h.write(h.repo, "src.txt", "a\n")
	h.git(h.repo, "add", "-A")
	h.git(h.repo, "commit", "-q", "-m", "gate")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	return h, h.prepareLane(h.laneInput("f1", false))
}

func (h *gitHarness) runGate(in GateInput) (horizon.GateRun, error) {
	h.t.Helper()
	v, err := h.env.ExecuteActivity(h.a.RunGate, in)
	if err != nil {
		return horizon.GateRun{}, err
	}
	var g horizon.GateRun
	require.NoError(h.t, v.Get(&g))
	return g, nil
}

// Whatever a worker does to its gate, the gate recorded on the base
// commit is what runs, restored exactly (content and mode), and the
// worker's changes to protected paths are reverted and named.
func TestRunGateRestoresTheRecordedGate(t *testing.T) {
	write := func(lane, rel, body string, mode os.FileMode) {
		p := filepath.Join(lane, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
		require.NoError(t, os.Chmod(p, mode))
	}
	tests := []struct {
		name     string
		detected bool // the record is a detected command, not the script
		tamper   func(lane string)
		reverted []string
	}{
		{"edit", false, func(lane string) { write(lane, ".zecor/verify.sh", passing, 0o755) }, []string{".zecor/verify.sh"}},
		{"delete", false, func(lane string) { require.NoError(t, os.Remove(filepath.Join(lane, ".zecor/verify.sh"))) }, []string{".zecor/verify.sh"}},
		{"chmod -x", false, func(lane string) { require.NoError(t, os.Chmod(filepath.Join(lane, ".zecor/verify.sh"), 0o644)) }, []string{".zecor/verify.sh"}},
		{"replace with a symlink", false, func(lane string) {
			write(lane, "ok.sh", passing, 0o755)
			require.NoError(t, os.Remove(filepath.Join(lane, ".zecor/verify.sh")))
			require.NoError(t, os.Symlink("../ok.sh", filepath.Join(lane, ".zecor/verify.sh")))
		}, []string{".zecor/verify.sh"}},
		{"replace the gate directory with a symlink", false, func(lane string) {
			write(lane, "elsewhere/verify.sh", passing, 0o755)
			require.NoError(t, os.RemoveAll(filepath.Join(lane, ".zecor")))
			require.NoError(t, os.Symlink("elsewhere", filepath.Join(lane, ".zecor")))
		}, []string{".zecor", ".zecor/verify.sh"}},
		{"add a higher-priority script", false, func(lane string) { write(lane, ".horizon/verify.sh", passing, 0o755) }, []string{".horizon/verify.sh"}},
		{"edit and add under protected directories", false, func(lane string) {
			write(lane, ".horizon/config.yaml", "gate:\n  timeout: 1s\n", 0o644)
			write(lane, ".fleet/notes.md", "x\n", 0o644)
		}, []string{".fleet/notes.md", ".horizon/config.yaml"}},
		{"add a file named like a glob", false, func(lane string) { write(lane, ".horizon/*", "x\n", 0o644) }, []string{".horizon/*"}},
		{"add a script when the record is a detected command", true, func(lane string) { write(lane, ".horizon/verify.sh", passing, 0o755) }, []string{".horizon/verify.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, lane := tamperRepo(t)
			rec, err := DiscoverGate(context.Background(), h.repo, h.base)
			require.NoError(t, err)
			require.Equal(t, ".zecor/verify.sh", rec.Script)
			if tt.detected {
				rec = horizon.GateRecord{Commit: h.base, Command: []string{"sh", "-c", "echo recorded gate ran; exit 1"}, Source: "detected: sh"}
			}
			// The worker's own change outside the gate stays.
			write(lane.Path, "src.txt", "b\n", 0o644)
			tt.tamper(lane.Path)

			g, err := h.runGate(GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute, Record: &rec})
			require.NoError(t, err)
			require.Equal(t, "fail", g.Verdict, g.Tail)
			require.Contains(t, g.Tail, "recorded gate ran")
			require.NotContains(t, g.Tail, "tampered")
			require.Equal(t, tt.reverted, g.Reverted)
			require.Contains(t, g.Note, "reverted")
			require.Contains(t, g.ChangedFiles, "src.txt")
			for _, f := range g.ChangedFiles {
				require.NotContains(t, tt.reverted, f, "protected changes are not part of the change")
			}
			// The lane holds the base commit's gate, exactly.
			st, err := os.Lstat(filepath.Join(lane.Path, ".zecor/verify.sh"))
			require.NoError(t, err)
			require.True(t, st.Mode().IsRegular())
			require.Equal(t, os.FileMode(0o755), st.Mode().Perm()&0o755)
			require.NoFileExists(t, filepath.Join(lane.Path, ".horizon/verify.sh"))
			body, err := os.ReadFile(filepath.Join(lane.Path, "src.txt"))
			require.NoError(t, err)
			require.Equal(t, "b\n", string(body))
		})
	}
}

// A recorded gate the lane cannot be made to hold is an error verdict
// naming it, never a pass.
func TestRunGateUnrestorableIsNoPass(t *testing.T) {
	h, lane := tamperRepo(t)
	rec, err := DiscoverGate(context.Background(), h.repo, h.base)
	require.NoError(t, err)
	rec.Hash = "0123456789abcdef0123456789abcdef01234567" // no commit holds this script
	g, err := h.runGate(GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute, Record: &rec})
	require.NoError(t, err)
	require.Equal(t, "error", g.Verdict)
	require.False(t, g.Passed())
	require.Contains(t, g.Tail, "the recorded gate .zecor/verify.sh")
	require.Contains(t, g.Tail, "could not be restored")
}

// Without a record (a history from before it) the gate is discovered on
// the base commit, not in the lane: a deleted script is restored and
// run, not replaced by a detected command.
func TestRunGateWithoutRecordDiscoversOnTheBaseCommit(t *testing.T) {
	h, lane := tamperRepo(t)
	require.NoError(t, os.Remove(filepath.Join(lane.Path, ".zecor/verify.sh")))
	require.NoError(t, os.WriteFile(filepath.Join(lane.Path, "go.mod"), []byte("module x\n"), 0o644))
	g, err := h.runGate(GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, ".zecor/verify.sh", g.Command)
	require.Equal(t, "fail", g.Verdict)
	require.Contains(t, g.Tail, "recorded gate ran")
}

// A test that failed at baseline must pass, not vanish: the gate's own
// output tells when it names passing tests, the sources tell when it
// does not (plain go test).
func TestRunGateVanishedTests(t *testing.T) {
	// The gate prints what the lane's out.txt says and exits with code.
	const gateScript = "#!/bin/sh\ncat out.txt\nexit $(cat code)\n"
	tests := []struct {
		name      string
		out       string
		code      string
		dropTest  bool // delete TestX's source
		vanished  []string
		green     []string
		unknown   bool
		passedNow bool
	}{
		{"passes now", "--- PASS: TestX (0.00s)\n--- PASS: TestY (0.00s)\nok  \tcalc\t0.1s\n", "0", false, nil, nil, false, true},
		{"deleted, the output tells", "--- PASS: TestY (0.00s)\nok  \tcalc\t0.1s\n", "0", true, []string{"calc.TestX"}, nil, false, false},
		{"a green test vanished too", "--- PASS: TestX (0.00s)\nok  \tcalc\t0.1s\n", "0", false, nil, []string{"calc.TestY"}, false, true},
		{"deleted, the sources tell", "ok  \tcalc\t0.1s\n", "0", true, []string{"calc.TestX"}, nil, true, false},
		{"kept, the sources tell it passed", "ok  \tcalc\t0.1s\n", "0", false, nil, nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			h.write(h.repo, ".horizon/verify.sh", gateScript)
			require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
			h.write(h.repo, "out.txt", "=== RUN   TestX\n--- FAIL: TestX (0.00s)\n=== RUN   TestY\n--- PASS: TestY (0.00s)\nFAIL\nFAIL\tcalc\t0.1s\n")
			h.write(h.repo, "code", "1\n")
			h.write(h.repo, "calc_test.go", "package calc\n\nfunc TestX(t *testing.T) {}\n\nfunc TestY(t *testing.T) {}\n")
			h.git(h.repo, "add", "-A")
			h.git(h.repo, "commit", "-q", "-m", "gate")
			h.base = h.git(h.repo, "rev-parse", "HEAD")
			lane := h.prepareLane(h.laneInput("f1", false))
			rec, err := DiscoverGate(context.Background(), h.repo, h.base)
			require.NoError(t, err)
			in := GateInput{RunID: testRun, Feature: "f1", Attempt: 0, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute, Record: &rec}
			base, err := h.runGate(in)
			require.NoError(t, err)
			require.Equal(t, []string{"calc.TestX"}, base.Failing)

			h.write(lane.Path, "out.txt", tt.out)
			h.write(lane.Path, "code", tt.code+"\n")
			if tt.dropTest {
				h.write(lane.Path, "calc_test.go", "package calc\n\nfunc TestY(t *testing.T) {}\n")
			}
			in.Attempt, in.BaselineReceipt = 1, base.ReceiptID
			g, err := h.runGate(in)
			require.NoError(t, err)
			require.Equal(t, "pass", g.Verdict)
			require.Equal(t, tt.vanished, g.Vanished)
			require.Equal(t, tt.green, g.VanishedGreen)
			require.Equal(t, tt.unknown, g.PassingUnknown)
			require.Equal(t, tt.passedNow, g.Passed(), "a vanished failing test is never a pass")
		})
	}
}
