package horizon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestWorkerBriefCarriesEvidence(t *testing.T) {
	tests := []struct {
		name string
		prev *Attempt
		want []string
		not  []string
	}{
		{name: "first attempt", prev: nil, want: []string{"attempt 1 of 3", "```horizon-report"}, not: []string{"Evidence"}},
		{name: "gate failure", prev: &Attempt{N: 1, Outcome: OutcomeGateFailed, Gate: &GateRun{Verdict: "fail", ExitCode: 1, Command: ".horizon/verify.sh", Tail: "--- FAIL: TestAdd", Failing: []string{"TestAdd"}}},
			want: []string{"Evidence from attempt 1 (gate_failed)", "exit code 1", "--- FAIL: TestAdd", "Failing: TestAdd"}},
		{name: "audit finding", prev: &Attempt{N: 1, Outcome: OutcomeRejected, Gate: &GateRun{Verdict: "pass"}, Audit: &Audit{Verdict: "reject", Findings: []Finding{{File: "calc.go", Line: 3, Severity: "blocker", Note: "handle negative numbers"}}}},
			want: []string{"auditor rejected", "[blocker] calc.go:3: handle negative numbers"}, not: []string{"gate (`"}},
		{name: "protocol error", prev: &Attempt{N: 2, Outcome: OutcomeProtocolError, ProtocolError: "no ```horizon-report block in the final message"},
			want: []string{"not accepted: no ```horizon-report block"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 1
			if tt.prev != nil {
				n = tt.prev.N + 1
			}
			got := WorkerBrief("Make the tests pass.", n, 3, tt.prev, "")
			require.Contains(t, got, "Make the tests pass.")
			for _, w := range tt.want {
				require.Contains(t, got, w)
			}
			for _, w := range tt.not {
				require.NotContains(t, got, w)
			}
		})
	}
}

func TestEvidenceIsBounded(t *testing.T) {
	tail := strings.Repeat("é", 20000) + "LAST LINE"
	a := &Attempt{N: 1, Gate: &GateRun{Verdict: "fail", ExitCode: 2, Tail: tail}}
	ev := Evidence(a)
	require.Less(t, len(ev), maxEvidence+500)
	require.Contains(t, ev, "LAST LINE")
	require.True(t, utf8.ValidString(ev))
}

func TestAuditBrief(t *testing.T) {
	got := AuditBrief("Fix add", 2, &GateRun{Verdict: "pass", Command: "go test ./..."}, "+return a + b")
	require.Contains(t, got, "attempt 2")
	require.Contains(t, got, "+return a + b")
	require.Contains(t, got, "```horizon-audit")
	require.Contains(t, got, "`go test ./...` passed")
}

func TestMarkdownAndUsage(t *testing.T) {
	s := RunState{RunID: "r1", Status: StatusRunning, Phase: PhaseGate, Branch: "horizon/r1", Model: "fake/m"}
	s.Attempts = []Attempt{
		{N: 1, Outcome: OutcomeRejected, Report: &Report{Status: "satisfied"}, Gate: &GateRun{Verdict: "pass"}, Audit: &Audit{Verdict: "reject", Findings: []Finding{{Note: "x"}}}, Usage: Usage{Input: 100, Output: 20, Cost: 0.5}},
		{N: 2, Outcome: OutcomeRunning, WorkerSession: "ses_1", Usage: Usage{Input: 10, Output: 2, Cost: 0.25}},
	}
	s.Recount()
	require.Equal(t, int64(132), s.Usage.Tokens())
	require.InDelta(t, 0.75, s.Usage.Cost, 1e-9)
	md := s.Markdown()
	require.Contains(t, md, "| 1 | – | – | satisfied | pass (exit 0) | reject (1 findings) | rejected | – | 120 | $0.5000 |")
	require.Contains(t, md, "| 2 | – | – | working | – | – | running |")
	s.End(StatusCompleted, "", "", time.Unix(0, 0))
	require.Equal(t, PhaseDone, s.Phase)
	require.True(t, s.Status.Terminal())
	require.False(t, StatusRunning.Terminal())
	require.Equal(t, "horizon/r1", IntegrationBranch("r1"))
	require.Equal(t, "horizon-lanes/r1/f1", LaneBranch("r1", "f1"))
}

func TestBriefGuidanceAndRetrieval(t *testing.T) {
	got := WorkerBrief("Fix it", 2, 5, nil, "The cause is the sign in add.sh line 3.")
	require.Contains(t, got, "## Guidance")
	require.Contains(t, got, "sign in add.sh line 3")
	r := RetrievalBrief("Fix it", []string{"ParseDate"}, "./a.go:3:2: undefined: ParseDate")
	require.Contains(t, r, "ParseDate")
	require.Contains(t, r, "undefined: ParseDate")
	require.NotContains(t, r, "horizon-report")
}

// Models keyed by Role are on the wire exactly as when they were keyed by
// string: recorded histories and status JSON keep decoding.
func TestRunStateModelsWire(t *testing.T) {
	b, err := json.Marshal(RunState{Models: map[Role]string{RoleWorker: "p/coder", RoleAuditor: "p/reviewer"}})
	require.NoError(t, err)
	require.Contains(t, string(b), `"models":{"auditor":"p/reviewer","worker":"p/coder"}`)
	var st RunState
	require.NoError(t, json.Unmarshal([]byte(`{"models":{"worker":"a/b","lead":"c/d"}}`), &st))
	require.Equal(t, map[Role]string{RoleWorker: "a/b", RoleLead: "c/d"}, st.Models)
}
