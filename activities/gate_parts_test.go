package activities

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
)

// gate.test_command and gate.lint_command run in the lane as parts of
// the gate, after the recorded script, each with its own verdict and
// receipt section; the failing set, the tail and the vanished tests are
// the test parts' only, and no key reaches a command.
func TestRunGateParts(t *testing.T) {
	const goRed = "--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.01s\n"
	const lintRed = "calc.go:3:1: exported function Add should have comment\n--- FAIL: TestLintLooksLikeATest (0.00s)\nFAIL\texample.com/lint\t0.01s\n"
	tests := []struct {
		name       string
		script     bool // the commit holds .horizon/verify.sh
		cmds       horizon.GateCommands
		verdict    string
		exit       int
		failed     []horizon.GatePartName
		failing    []string
		tailHas    string
		tailHasNot string
	}{
		{name: "lint fails, tests green", script: true,
			cmds:    horizon.GateCommands{Test: "echo ok tests", Lint: "cat lint.txt; exit 3"},
			verdict: "fail", exit: 3, failed: []horizon.GatePartName{horizon.GatePartLint}, failing: nil,
			tailHas: "ok tests", tailHasNot: "exported function"},
		{name: "tests fail, lint clean", script: true,
			cmds:    horizon.GateCommands{Test: "cat red.txt; exit 1", Lint: "echo lint clean"},
			verdict: "fail", exit: 1, failed: []horizon.GatePartName{horizon.GatePartTest}, failing: []string{"example.com/calc.TestAdd"},
			tailHas: "--- FAIL: TestAdd", tailHasNot: "lint clean"},
		{name: "both fail, without a script", cmds: horizon.GateCommands{Test: "cat red.txt; exit 1", Lint: "cat lint.txt; exit 3"},
			verdict: "fail", exit: 1, failed: []horizon.GatePartName{horizon.GatePartTest, horizon.GatePartLint},
			failing: []string{"example.com/calc.TestAdd"}, tailHas: "--- FAIL: TestAdd", tailHasNot: "TestLintLooksLikeATest"},
		{name: "all green", script: true, cmds: horizon.GateCommands{Test: "true", Lint: "true"}, verdict: "pass"},
		{name: "no key reaches a command", script: true,
			cmds:    horizon.GateCommands{Test: `test -z "$OPENAI_API_KEY$HORIZON_SECRET_X" && echo scrubbed`, Lint: `test -z "$GITHUB_TOKEN"`},
			verdict: "pass", tailHas: "scrubbed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "sk-x")
			t.Setenv("GITHUB_TOKEN", "ghp-x")
			t.Setenv("HORIZON_SECRET_X", "h")
			h := newGitHarness(t)
			if tt.script {
				h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\necho script ran\n")
				require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
			}
			h.write(h.repo, "red.txt", goRed)
			h.write(h.repo, "lint.txt", lintRed)
			h.git(h.repo, "add", "-A")
			h.git(h.repo, "commit", "-q", "-m", "gate")
			h.base = h.git(h.repo, "rev-parse", "HEAD")
			lane := h.prepareLane(h.laneInput("f1", false))
			rec, err := DecideGate(context.Background(), h.repo, h.base, tt.cmds)
			require.NoError(t, err)

			g, err := h.runGate(GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute, Record: &rec})
			require.NoError(t, err)
			require.Equal(t, tt.verdict, g.Verdict, "%+v", g.Parts)
			require.Equal(t, tt.exit, g.ExitCode)
			require.Equal(t, tt.failed, g.FailedParts())
			require.Equal(t, tt.failing, g.Failing, "the failing set is the test parts'")
			require.Contains(t, g.Tail, tt.tailHas)
			if tt.tailHasNot != "" {
				require.NotContains(t, g.Tail, tt.tailHasNot)
			}
			wantParts := 2
			if tt.script {
				wantParts = 3
				require.Equal(t, horizon.GatePartScript, g.Parts[0].Name)
				require.Equal(t, ".horizon/verify.sh", g.Parts[0].Command)
				require.Equal(t, ".horizon/verify.sh", g.Command)
			}
			require.Len(t, g.Parts, wantParts)
			for _, p := range g.Parts {
				if p.Passed() {
					require.Empty(t, p.Tail, "a part that passed carries no tail")
				} else {
					require.NotEmpty(t, p.Tail)
				}
				if p.Name == horizon.GatePartLint {
					require.Equal(t, tt.cmds.Lint, p.Command)
				}
			}
			if slices.Contains(tt.failed, horizon.GatePartLint) {
				lint := g.Parts[len(g.Parts)-1]
				require.Equal(t, 3, lint.ExitCode)
				require.Contains(t, lint.Tail, "exported function Add")
			}

			// The receipt has a section per part, the same verdicts.
			all, err := gate.ReadReceipts(filepath.Join(h.a.runDir(testRun), "receipts.jsonl"))
			require.NoError(t, err)
			require.Len(t, all, 1)
			r := all[0]
			require.Equal(t, g.ReceiptID, r.ID)
			require.Equal(t, gate.Verdict(tt.verdict), r.Verdict)
			require.Len(t, r.Parts, wantParts)
			for i, p := range r.Parts {
				require.Equal(t, g.Parts[i].Name, p.Name)
				require.Equal(t, g.Parts[i].Verdict, string(p.Verdict))
			}
			log, err := os.ReadFile(filepath.Join(h.a.runDir(testRun), "gate", "f1-attempt-1.log"))
			require.NoError(t, err)
			require.Contains(t, string(log), "[verdict "+tt.verdict)
			require.NotContains(t, string(log), "sk-x")
		})
	}
}

// A part that overruns is killed at the gate's timeout; the others still
// run and are judged.
func TestRunGatePartTimeout(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, "go.mod", "module x\n")
	h.git(h.repo, "add", "-A")
	h.git(h.repo, "commit", "-q", "-m", "gate")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	lane := h.prepareLane(h.laneInput("f1", false))
	rec, err := DecideGate(context.Background(), h.repo, h.base, horizon.GateCommands{Test: "echo tests ok", Lint: "sleep 30"})
	require.NoError(t, err)
	require.Empty(t, rec.Command, "the test command stands in for the detected go test")
	start := time.Now()
	g, err := h.runGate(GateInput{RunID: testRun, Feature: "f1", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Second, Record: &rec})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 20*time.Second)
	require.Equal(t, "timeout", g.Verdict)
	require.Equal(t, []horizon.GatePartName{horizon.GatePartLint}, g.FailedParts())
	require.Equal(t, "pass", g.Parts[0].Verdict)
	require.Contains(t, g.Parts[1].Tail, "overran its 1s timeout")
	require.NotContains(t, g.Tail, "overran", "the lint step's error is not the tests'")
	ok, why := g.Judged()
	require.False(t, ok)
	require.Contains(t, why, "timeout")
}

// A supervisor's merge gate has no record: the commands come with the
// input, and a test command alone gates a commit with nothing detected.
func TestRunGateCommandsWithoutRecord(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, "README.md", "no gate here\n")
	h.git(h.repo, "add", "-A")
	h.git(h.repo, "commit", "-q", "-m", "gate")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	lane := h.prepareLane(h.laneInput("f1", false))
	g, err := h.runGate(GateInput{RunID: testRun, Feature: "merge", Attempt: 1, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute,
		Commands: horizon.GateCommands{Test: "echo merged tests ok"}})
	require.NoError(t, err)
	require.Equal(t, "pass", g.Verdict)
	require.Equal(t, "echo merged tests ok", g.Command)
	require.Contains(t, g.Tail, "merged tests ok")

	_, err = h.runGate(GateInput{RunID: testRun, Feature: "merge", Attempt: 2, Repo: h.repo, Lane: lane.Path, BaseCommit: h.base, Timeout: time.Minute})
	require.ErrorContains(t, err, "gate.test_command", "without a command there is no gate to run")
}
