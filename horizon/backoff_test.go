package horizon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStallPolicyDelay(t *testing.T) {
	p := StallPolicy{}
	var got []time.Duration
	for n := range 9 {
		got = append(got, p.Delay(n))
	}
	require.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, time.Hour, time.Hour, time.Hour}, got, "1m doubling, capped at an hour")
	require.Equal(t, 5*time.Second, StallPolicy{Base: 2 * time.Second, Max: 5 * time.Second}.Delay(2))
	require.Equal(t, time.Hour, p.Delay(1000), "no overflow")
	d := StallPolicy{}.WithDefaults()
	require.Equal(t, StallPolicy{Base: time.Minute, Max: time.Hour, BlockAfter: DefaultStallBlockAfter, Threshold: DefaultStallAttempts}, d)
}

// gated is a finished gate-red attempt n with a failing set and a tree.
func gated(n int, tree string, failing ...string) Attempt {
	a := failAttempt(n, fmt.Sprintf("r-%d", n))
	a.Gate.Tree, a.Gate.Failing = tree, failing
	return a
}

func TestStallPolicyJudge(t *testing.T) {
	p := StallPolicy{Base: time.Minute, Max: time.Hour, BlockAfter: 3}
	same := func(n int) Attempt { return gated(n, "t", "TestA") }
	protocol := func(n int) Attempt {
		return Attempt{N: n, Outcome: OutcomeProtocolError, ProtocolError: "no report", StartedAt: at(n * 10), EndedAt: at(n*10 + 5)}
	}
	tests := []struct {
		name     string
		attempts []Attempt
		since    time.Time
		stalled  bool
		wait     time.Duration
		count    int // attempts made while stalled
		block    bool
	}{
		{"two alike: not yet", []Attempt{same(1), same(2)}, time.Time{}, false, 0, 0, false},
		{"three alike: stalled, the base", []Attempt{same(1), same(2), same(3)}, time.Time{}, true, time.Minute, 0, false},
		{"four alike: doubled", []Attempt{same(1), same(2), same(3), same(4)}, time.Time{}, true, 2 * time.Minute, 1, false},
		{"a new diff: back to the base, the count goes on",
			[]Attempt{same(1), same(2), same(3), same(4), gated(5, "t2", "TestA")}, time.Time{}, true, time.Minute, 2, false},
		{"a new failing set is progress", []Attempt{same(1), same(2), same(3), same(4), gated(5, "t", "TestB")}, time.Time{}, false, 0, 0, false},
		{"the count reaches block_after", []Attempt{same(1), same(2), same(3), same(4), same(5), same(6)}, time.Time{}, true, 0, 3, true},
		{"a sibling accepted or an unblock: judged from there",
			[]Attempt{same(1), same(2), same(3), same(4), same(5), same(6)}, at(45), false, 0, 0, false},
		{"an attempt without a gate brings no evidence; it ends the same-failing streak",
			[]Attempt{same(1), same(2), same(3), protocol(4)}, time.Time{}, false, 0, 0, false},
		{"a running attempt is not judged", []Attempt{same(1), same(2), same(3), {N: 4, Outcome: OutcomeRunning, StartedAt: at(40)}}, time.Time{}, true, time.Minute, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := p.Judge("f1", tt.attempts, tt.since)
			require.Equal(t, tt.stalled, v.Stall != nil, "stalled")
			require.Equal(t, tt.block, v.Block, "block")
			require.Equal(t, tt.count, v.Stalled, "attempts while stalled")
			require.Equal(t, tt.wait, v.Wait, "wait")
			if tt.wait > 0 {
				last := tt.attempts[len(tt.attempts)-1]
				if last.Outcome == OutcomeRunning {
					last = tt.attempts[len(tt.attempts)-2]
				}
				require.Equal(t, last.EndedAt.Add(tt.wait), v.Until)
			}
		})
	}
}

// The stall the policy judges is the daily pass's own: with the attempts
// rule alone (failing sets unknown), it stalls at the threshold.
func TestStallPolicyUsesTheDailyPassRule(t *testing.T) {
	var as []Attempt
	for n := 1; n <= 6; n++ {
		a := gated(n, fmt.Sprint("t", n))
		a.Gate.FailingKnown = false
		as = append(as, a)
	}
	p := StallPolicy{Threshold: 6}
	require.Nil(t, p.Judge("f1", as[:5], time.Time{}).Stall)
	v := p.Judge("f1", as, time.Time{})
	require.NotNil(t, v.Stall)
	require.Equal(t, StallAttempts, v.Stall.Kind)
	st := DetectStalls(RunState{RunID: "r", Status: StatusRunning, Attempts: as}, 6)
	require.Len(t, st, 1)
	require.Equal(t, st[0].Kind, v.Stall.Kind, "the daily pass finds the same stall")
	require.Equal(t, st[0].Attempts, v.Stall.Attempts)
}

func TestStalledBlocker(t *testing.T) {
	p := StallPolicy{Base: time.Minute, BlockAfter: 3}
	var as []Attempt
	for n := 1; n <= 6; n++ {
		a := gated(n, "t", "tests/test_never.sh", "never")
		a.Strategy = StrategyFor(n-1, 2)
		as = append(as, a)
	}
	v := p.Judge("f3", as, time.Time{})
	require.True(t, v.Block)
	b, err := v.Blocker("f3", p)
	require.NoError(t, err)
	require.Equal(t, BlockerStalled, b.Type)
	for _, want := range []string{"f3 made 3 attempts while stalled", "never, tests/test_never.sh", StrategyFocusedCorrection.Title(), StrategyReplan.Title(), StrategyResearch.Title(), "r-6"} {
		require.Contains(t, b.Evidence, want)
	}
	require.Contains(t, SupervisorBlockerTypes(), BlockerStalled)
	_, err = CheckReportBlocker(Report{Status: ReportBlocked, Blocker: &Blocker{Type: "stalled", Evidence: "I tried six times and it still fails"}})
	require.ErrorIs(t, err, ErrUntrustedBlocker, "only horizon records a stall")
	require.Nil(t, v.Backoff("f3", p), "a blocked feature does not wait")
	v2 := p.Judge("f3", as[:4], time.Time{})
	bo := v2.Backoff("f3", p)
	require.Equal(t, "stalled: next attempt at "+as[3].EndedAt.Add(2*time.Minute).UTC().Format("15:04:05")+" UTC (f3 waits 2m; 1 of 3 attempts while stalled, then it blocks): the last 3 attempts on feature f3 failed the gate with the same 2 failing tests: never, tests/test_never.sh", bo.Line())
}

// A decision names at most the last few evidence items and counts the
// rest, so the handoff's decisions grow linearly with attempts.
func TestDecisionEvidenceIsBounded(t *testing.T) {
	var ev []string
	for i := 1; i <= 100; i++ {
		ev = append(ev, fmt.Sprintf("r-%03d", i))
	}
	d, err := NewDecision(at(1), "f1", "recovery strategy for f1: research", "100 attempts without an accepted change", ev...)
	require.NoError(t, err)
	require.Equal(t, []string{"r-096", "r-097", "r-098", "r-099", "r-100"}, d.Evidence)
	require.Equal(t, 95, d.Earlier)

	handoff := func(attempts int) string {
		var ds []Decision
		var receipts []string
		for i := 1; i <= attempts; i++ {
			receipts = append(receipts, fmt.Sprintf("r-%03d", i))
			d, err := NewDecision(at(i), "f1", "recovery strategy for f1", fmt.Sprintf("%d attempts without an accepted change", i), receipts...)
			require.NoError(t, err)
			ds = append(ds, d)
		}
		return Handoff(HandoffInput{RunID: "r1", Status: StatusFailed, Plan: samplePlan(t), Decisions: ds})
	}
	h50, h100 := handoff(50), handoff(100)
	require.Contains(t, h100, "(evidence: r-096, r-097, r-098, r-099, r-100 and 95 earlier)")
	growth := len(h100) - len(h50)
	base := len(handoff(1))
	require.Less(t, float64(growth), 1.1*float64(len(h50)-base), "the second fifty decisions cost what the first did")
	require.NotContains(t, h100, "r-001, r-002, r-003, r-004, r-005, r-006", "no decision lists more than five receipts")
}

func TestGoalTitle(t *testing.T) {
	require.Equal(t, "Provide stuck", GoalTitle("  Provide stuck\n  The tool is lib/stuck.sh"))
	require.Equal(t, "a [31m b", GoalTitle("a\x1b[31m\tb"), "control characters never reach a receiver")
	long := strings.Repeat("x", 200)
	require.Equal(t, 80, len([]rune(GoalTitle(long))))
	require.Empty(t, GoalTitle(" \n "))
}
