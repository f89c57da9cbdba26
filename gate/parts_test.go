package gate

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon/vocab"
)

// A go test run with one failing test, as the test parts print it.
const goTestRed = "--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3, want 4\nFAIL\nFAIL\texample.com/calc\t0.01s\n"

// A lint run whose output looks like a failing test to the parsers: it
// must stay in the lint part and never enter the failing-test set.
const lintRed = "calc.go:3:1: exported function Add should have comment\n--- FAIL: TestLintLooksLikeATest (0.00s)\nFAIL\texample.com/lint\t0.01s\n"

func TestParts(t *testing.T) {
	script := FromScript("/lane/.horizon/verify.sh")
	tests := []struct {
		name       string
		g          Gate
		test, lint string
		want       []vocab.GatePart
		err        error
	}{
		{"script alone", script, "", "", []vocab.GatePart{vocab.GatePartScript}, nil},
		{"script first, then test, then lint", script, "go test ./...", "golangci-lint run",
			[]vocab.GatePart{vocab.GatePartScript, vocab.GatePartTest, vocab.GatePartLint}, nil},
		{"a test command without a script is a gate", Gate{}, "go test ./...", "", []vocab.GatePart{vocab.GatePartTest}, nil},
		{"test and lint without a script", Gate{}, "make test", "make lint", []vocab.GatePart{vocab.GatePartTest, vocab.GatePartLint}, nil},
		{"lint alone tests nothing", Gate{}, "", "golangci-lint run", nil, ErrNoTestPart},
		{"nothing at all", Gate{}, "", "", nil, ErrNoTestPart},
		{"a blank test command is none", Gate{}, "  \t", "make lint", nil, ErrNoTestPart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := Parts(tt.g, tt.test, tt.lint)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var names []vocab.GatePart
			for _, p := range ps {
				names = append(names, p.Name)
				switch p.Name {
				case vocab.GatePartTest:
					require.Equal(t, []string{"sh", "-c", tt.test}, p.Gate.Command)
					require.Equal(t, tt.test, p.Gate.Source, "a command is named as configured")
				case vocab.GatePartLint:
					require.Equal(t, []string{"sh", "-c", tt.lint}, p.Gate.Command)
				}
			}
			require.Equal(t, tt.want, names)
		})
	}
}

// Each part runs capped on its own with real sh commands in a lane: its
// own verdict, exit code and output; the whole passes only when every
// part does, and the test parts' output alone is what tests are read
// from.
func TestRunParts(t *testing.T) {
	// The commands print files of the lane, as a test runner or a linter
	// would print its findings.
	green := "cat green.txt"
	red := "cat red.txt; exit 1"
	lintClean := "echo lint clean"
	lintDirty := "cat lint.txt; exit 2"
	tests := []struct {
		name          string
		script        string // "" for no gate script
		test, lint    string
		timeout       time.Duration
		verdicts      []Verdict
		overall       Verdict
		exit          int
		failing       []string // the test parts' failing set
		outputHas     string   // in the test parts' output
		outputHasNot  string
		errHas        string
		durationAtMin time.Duration
	}{
		{name: "lint fails with tests green", script: "echo script ok", test: green, lint: lintDirty,
			verdicts: []Verdict{Pass, Pass, Fail}, overall: Fail, exit: 2, failing: []string{},
			outputHas: "script ok", outputHasNot: "exported function"},
		{name: "tests fail with lint clean", script: "echo script ok", test: red, lint: lintClean,
			verdicts: []Verdict{Pass, Fail, Pass}, overall: Fail, exit: 1, failing: []string{"example.com/calc.TestAdd"},
			outputHas: "got 3, want 4", outputHasNot: "lint clean"},
		{name: "both fail, each on its own", test: red, lint: lintDirty,
			verdicts: []Verdict{Fail, Fail}, overall: Fail, exit: 1, failing: []string{"example.com/calc.TestAdd"},
			outputHas: "got 3, want 4", outputHasNot: "TestLintLooksLikeATest"},
		{name: "all green", script: "echo script ok", test: green, lint: lintClean,
			verdicts: []Verdict{Pass, Pass, Pass}, overall: Pass, exit: 0, failing: []string{}, outputHas: "example.com/calc"},
		{name: "a part that overruns is killed and the next still runs", script: "sleep 30", test: green, lint: lintClean,
			timeout: 300 * time.Millisecond, verdicts: []Verdict{Timeout, Pass, Pass}, overall: Timeout, exit: -1,
			failing: []string{}, errHas: "script: gate overran its 300ms timeout"},
		{name: "the lint part overruns", test: green, lint: "sleep 30",
			timeout: 300 * time.Millisecond, verdicts: []Verdict{Pass, Timeout}, overall: Timeout, exit: -1,
			failing: []string{}, errHas: "lint: gate overran"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "green.txt", "ok  \texample.com/calc\t0.01s\n", 0o644)
			writeFile(t, dir, "red.txt", goTestRed, 0o644)
			writeFile(t, dir, "lint.txt", lintRed, 0o644)
			var g Gate
			if tt.script != "" {
				g = FromScript(writeFile(t, dir, ".horizon/verify.sh", "#!/bin/sh\n"+tt.script+"\n", 0o755))
			}
			ps, err := Parts(g, tt.test, tt.lint)
			require.NoError(t, err)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			results := RunParts(context.Background(), ps, Options{Dir: dir, Timeout: timeout, KillGrace: 100 * time.Millisecond})
			require.Len(t, results, len(tt.verdicts))
			for i, r := range results {
				require.Equal(t, tt.verdicts[i], r.Verdict, "part %s: err=%s output=%s", r.Name, r.Err, r.Output)
				require.NotZero(t, r.PGID, "every part has a group of its own")
				requireGone(t, r.PGID)
			}
			all := Overall(results)
			require.Equal(t, tt.overall, all.Verdict)
			require.Equal(t, tt.exit, all.ExitCode)
			require.Contains(t, all.Output, tt.outputHas)
			if tt.outputHasNot != "" {
				require.NotContains(t, all.Output, tt.outputHasNot, "the lint step's output is not the tests'")
			}
			require.Contains(t, all.Err, tt.errHas)
			failing, _ := ParseFailures(all.Output)
			require.Equal(t, tt.failing, failing, "output: %q", all.Output)

			r := NewPartsReceipt("run-1", "f1", 1, "abc", results)
			require.Equal(t, tt.overall, r.Verdict)
			require.Equal(t, tt.failing, r.Failing, "the receipt's failing set is the test parts'")
			require.Len(t, r.Parts, len(results))
			for i, p := range r.Parts {
				require.Equal(t, results[i].Name, p.Name)
				require.Equal(t, results[i].Verdict, p.Verdict)
			}
		})
	}
}

// A part sees the gate's scrubbed environment: no key reaches a command.
func TestRunPartsScrubEnvironment(t *testing.T) {
	dir := t.TempDir()
	ps, err := Parts(Gate{}, "env", "env")
	require.NoError(t, err)
	env := []string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY=sk-openai", "GITHUB_TOKEN=ghp-token", "DATABASE_URL=postgres://u:pw@h/db", "PLAIN=kept"}
	for _, r := range RunParts(context.Background(), ps, Options{Dir: dir, Env: env, Timeout: 30 * time.Second}) {
		require.Equal(t, Pass, r.Verdict, r.Err)
		require.Contains(t, r.Output, "PLAIN=kept")
		for _, secret := range []string{"sk-openai", "ghp-token", "pw@h"} {
			require.NotContains(t, r.Output, secret, "part %s", r.Name)
		}
	}
}

// No parts is no verdict to pass.
func TestOverallWithoutParts(t *testing.T) {
	res := Overall(nil)
	require.Equal(t, Error, res.Verdict)
	require.Equal(t, "gate has no parts", res.Err)
}

// A cancelled run starts no further part: each says why.
func TestRunPartsCancelled(t *testing.T) {
	ps, err := Parts(Gate{}, "true", "true")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range RunParts(ctx, ps, Options{Dir: t.TempDir()}) {
		require.Equal(t, Error, r.Verdict)
		require.Contains(t, r.Err, "not started")
	}
}

// A receipt in parts keeps a section per part, the lint step's findings
// in its own section only, and survives a JSON round trip; a receipt
// written before parts decodes as it did, and encodes without them.
func TestPartsReceiptJSON(t *testing.T) {
	results := []PartResult{
		{Name: vocab.GatePartScript, Gate: Gate{Path: "/lanes/r/f/.horizon/verify.sh", Command: []string{"/lanes/r/f/.horizon/verify.sh"}, Source: ".horizon/verify.sh"},
			Result: Result{Verdict: Pass, Duration: time.Second, Output: "ok  \texample.com/calc\t0.01s\n", OutputBytes: 26}},
		{Name: vocab.GatePartTest, Gate: ShellCommand("go test ./..."),
			Result: Result{Verdict: Fail, ExitCode: 1, Duration: 2 * time.Second, Output: goTestRed, OutputBytes: int64(len(goTestRed))}},
		{Name: vocab.GatePartLint, Gate: ShellCommand("golangci-lint run"),
			Result: Result{Verdict: Fail, ExitCode: 2, Duration: 500 * time.Millisecond, Output: lintRed, OutputBytes: int64(len(lintRed))}},
	}
	r := NewPartsReceipt("run-1", "f1", 2, "abc123", results)
	require.Equal(t, ".horizon/verify.sh", r.Command, "the gate is named by its first part")
	require.Equal(t, Fail, r.Verdict)
	require.Equal(t, 1, r.ExitCode, "the first part that did not pass")
	require.Equal(t, int64(3500), r.DurationMS)
	require.Equal(t, []string{"example.com/calc.TestAdd"}, r.Failing)
	require.NotContains(t, r.OutputTail, "exported function")
	require.Equal(t, int64(26+len(goTestRed)+len(lintRed)), r.OutputBytes)

	require.Equal(t, []ReceiptPart{
		{Name: "script", Command: ".horizon/verify.sh", Verdict: Pass, DurationMS: 1000, Failing: []string{}, FailingKnown: true,
			OutputTail: results[0].Output, OutputBytes: 26, OutputDigest: r.Parts[0].OutputDigest},
		{Name: "test", Command: "go test ./...", Verdict: Fail, ExitCode: 1, DurationMS: 2000, Failing: []string{"example.com/calc.TestAdd"}, FailingKnown: true,
			OutputTail: goTestRed, OutputBytes: int64(len(goTestRed)), OutputDigest: r.Parts[1].OutputDigest},
		{Name: "lint", Command: "golangci-lint run", Verdict: Fail, ExitCode: 2, DurationMS: 500, Failing: []string{"example.com/lint.TestLintLooksLikeATest"}, FailingKnown: true,
			OutputTail: lintRed, OutputBytes: int64(len(lintRed)), OutputDigest: r.Parts[2].OutputDigest},
	}, r.Parts)
	require.NotEqual(t, r.Parts[1].OutputDigest, r.Parts[2].OutputDigest)

	line, err := json.Marshal(r)
	require.NoError(t, err)
	require.Contains(t, string(line), `"parts":[{"name":"script","command":".horizon/verify.sh","verdict":"pass"`)
	var back Receipt
	require.NoError(t, json.Unmarshal(line, &back))
	require.True(t, r.At.Equal(back.At))
	require.Empty(t, back.Passing)
	back.At, back.Passing = r.At, r.Passing // omitempty: an empty set comes back nil
	require.Equal(t, r, back)

	// Appended and read back like any receipt.
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	r.ID = StableReceiptID("run-1", "f1", "2")
	require.NoError(t, AppendReceipt(path, r))
	require.NoError(t, AppendReceipt(path, r))
	got, err := ReadReceipts(path)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, r.Parts, got[0].Parts)

	// A receipt from before parts.
	old := `{"id":"r-1","at":"2025-01-02T03:04:05Z","run":"run-1","feature":"f1","attempt":1,"lane_commit":"abc","command":".horizon/verify.sh","verdict":"fail","exit_code":1,"duration_ms":10,"failing":["a.TestX"],"failing_known":true,"passing_known":false,"output_tail":"x","output_bytes":1,"output_digest":"sha256:00"}`
	var before Receipt
	require.NoError(t, json.Unmarshal([]byte(old), &before))
	require.Nil(t, before.Parts)
	again, err := json.Marshal(before)
	require.NoError(t, err)
	require.JSONEq(t, old, string(again))
	require.NotContains(t, string(again), "parts")
}

// A one-part gate's receipt is as it was: no parts section.
func TestReceiptWithoutParts(t *testing.T) {
	r := NewReceipt("r", "f", 1, "c", FromScript("/x/verify.sh"), Result{Verdict: Pass})
	line, err := json.Marshal(r)
	require.NoError(t, err)
	require.NotContains(t, string(line), `"parts"`)
}
