package horizon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A gate run recorded before parts (JSON as a history holds it) decodes
// to the same struct as before and encodes back without them.
func TestGateRunWithoutPartsDecodes(t *testing.T) {
	old := `{"receipt_id":"r-1","verdict":"fail","exit_code":1,"duration_ms":1200,"command":".horizon/verify.sh","tail":"FAIL x","failing":["pkg.TestA"],"failing_known":true,"snapshot":"s","tree":"t","changed_files":["a.go"],"changed_lines":3}`
	var g GateRun
	require.NoError(t, json.Unmarshal([]byte(old), &g))
	require.Equal(t, GateRun{ReceiptID: "r-1", Verdict: "fail", ExitCode: 1, DurationMS: 1200, Command: ".horizon/verify.sh", Tail: "FAIL x",
		Failing: []string{"pkg.TestA"}, FailingKnown: true, Snapshot: "s", Tree: "t", ChangedFiles: []string{"a.go"}, ChangedLines: 3}, g)
	require.Nil(t, g.Parts)
	require.Nil(t, g.FailedParts())
	back, err := json.Marshal(g)
	require.NoError(t, err)
	require.JSONEq(t, old, string(back))

	var rec GateRecord
	require.NoError(t, json.Unmarshal([]byte(`{"commit":"c","script":".horizon/verify.sh","mode":"100755","hash":"h","source":".horizon/verify.sh"}`), &rec))
	require.Equal(t, GateRecord{Commit: "c", Script: ".horizon/verify.sh", Mode: "100755", Hash: "h", Source: ".horizon/verify.sh"}, rec)
}

func TestGateRunPartsJSON(t *testing.T) {
	g := lintOnly()
	line, err := json.Marshal(g)
	require.NoError(t, err)
	require.Contains(t, string(line), `"parts":[{"name":"script","command":".horizon/verify.sh","verdict":"pass","exit_code":0,"duration_ms":900}`)
	var back GateRun
	require.NoError(t, json.Unmarshal(line, &back))
	require.Equal(t, *g, back)
	require.Equal(t, []GatePartName{GatePartLint}, back.FailedParts())
}

func TestGateRecordValid(t *testing.T) {
	require.True(t, (&GateRecord{TestCommand: "go test ./..."}).Valid(), "a test command alone is a gate")
	require.False(t, (&GateRecord{LintCommand: "golangci-lint run"}).Valid(), "a lint command alone is not")
	require.True(t, (&GateRecord{Command: []string{"go", "test", "./..."}, LintCommand: "go vet ./..."}).Valid())
	require.False(t, (*GateRecord)(nil).Valid())
}

// lintOnly: the script and the test command passed, the lint step failed.
func lintOnly() *GateRun {
	return &GateRun{ReceiptID: "r-7", Verdict: "fail", ExitCode: 1, DurationMS: 4100, Command: ".horizon/verify.sh",
		Tail: "ok  \texample.com/calc\t0.01s", Failing: nil, FailingKnown: true,
		Parts: []GatePart{
			{Name: GatePartScript, Command: ".horizon/verify.sh", Verdict: "pass", DurationMS: 900},
			{Name: GatePartTest, Command: "go test ./...", Verdict: "pass", DurationMS: 3000},
			{Name: GatePartLint, Command: "golangci-lint run", Verdict: "fail", ExitCode: 1, DurationMS: 200,
				Tail:    "calc.go:3:1: exported function Add should have comment or be unexported (revive)",
				Failing: []string{"looks.LikeATest"}},
		}}
}

// testsOnly: the test command failed, the lint step was clean.
func testsOnly() *GateRun {
	return &GateRun{ReceiptID: "r-8", Verdict: "fail", ExitCode: 1, DurationMS: 3200, Command: "go test ./...",
		Tail: "--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3, want 4\nFAIL\texample.com/calc\t0.01s", Failing: []string{"example.com/calc.TestAdd"}, FailingKnown: true,
		Parts: []GatePart{
			{Name: GatePartTest, Command: "go test ./...", Verdict: "fail", ExitCode: 1, DurationMS: 3000,
				Tail: "--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3, want 4\nFAIL\texample.com/calc\t0.01s", Failing: []string{"example.com/calc.TestAdd"}},
			{Name: GatePartLint, Command: "golangci-lint run", Verdict: "pass", DurationMS: 200},
		}}
}

// both: the gate script failed its tests and the lint step overran.
func both() *GateRun {
	return &GateRun{ReceiptID: "r-9", Verdict: "fail", ExitCode: 1, DurationMS: 603000, Command: ".horizon/verify.sh",
		Tail: "FAIL: test_b (tests.test_calc.CalcTest)", Failing: []string{"tests/test_calc.py::test_b"}, FailingKnown: true,
		Parts: []GatePart{
			{Name: GatePartScript, Command: ".horizon/verify.sh", Verdict: "fail", ExitCode: 1, DurationMS: 3000,
				Tail: "FAILED tests/test_calc.py::test_b - assert 3 == 4", Failing: []string{"tests/test_calc.py::test_b"}},
			{Name: GatePartLint, Command: "ruff check .", Verdict: "timeout", ExitCode: -1, DurationMS: 600000,
				Tail: "checking…\ngate overran its 10m0s timeout and was killed"},
		}}
}

// The evidence a next attempt gets tells a lint failure from test
// failures: each failed part on its own, with its command, exit code and
// output; the lint step's findings are never listed as failing tests.
func TestEvidenceGateParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate *GateRun
	}{
		{"lint_only", lintOnly()},
		{"tests_only", testsOnly()},
		{"both", both()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Attempt{N: 2, Outcome: OutcomeGateFailed, Gate: tc.gate}
			got := Evidence(a)
			goldenFile(t, "evidence/parts_"+tc.name+".md", got)
			require.NotContains(t, got, "looks.LikeATest", "a lint part's parsed set is not a failing-test list")
		})
	}
	got := Evidence(&Attempt{N: 2, Outcome: OutcomeGateFailed, Gate: lintOnly()})
	require.Contains(t, got, "- The lint step (`golangci-lint run`) failed, exit 1:")
	require.NotContains(t, got, "Failing:", "green tests list no failing set")
}

// Where a verdict is shown, the failed part is named.
func TestFailedPartNamed(t *testing.T) {
	a := Attempt{N: 1, Gate: lintOnly()}
	require.Equal(t, "fail (exit 1), failed: lint", a.gateCell())
	a.Gate = both()
	require.Equal(t, "fail (exit 1), failed: script+lint", a.gateCell())
	a.Gate = &GateRun{Verdict: "fail", ExitCode: 1}
	require.Equal(t, "fail (exit 1)", a.gateCell(), "a gate of one part reads as before")

	require.Equal(t, "failed part: lint `golangci-lint run` (fail, exit 1)", lintOnly().failedPartsNote())
	require.Equal(t, "failed part: script `.horizon/verify.sh` (fail, exit 1); lint `ruff check .` (timeout, exit -1)", both().failedPartsNote())
	require.Empty(t, (&GateRun{Verdict: "fail"}).failedPartsNote())

	var b strings.Builder
	handoffIntegration(&b, HandoffInput{Integration: lintOnly()}, handoffView{branch: "horizon/run-1"})
	require.Contains(t, b.String(), "- **Verdict:** fail (exit 1) on the tip of `horizon/run-1`; failed part: lint `golangci-lint run` (fail, exit 1)")
}

// A lint step turning green while the tests stay as they were is a
// change of evidence for the stall policy.
func TestSameEvidenceParts(t *testing.T) {
	lint := lintOnly()
	lint.Parts[2].Verdict = "pass"
	lint.Verdict = "pass"
	require.False(t, sameEvidence(lintOnly(), lint, false))
	require.True(t, sameEvidence(lintOnly(), lintOnly(), false))
}
