package horizon

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// failing is a gate-red attempt of a feature with the given failing set,
// starting at minute start.
func failing(n, start int, receipt string, set ...string) Attempt {
	a := failAttempt(n, receipt)
	a.Gate.Failing = set
	a.StartedAt, a.EndedAt = at(start), at(start+5)
	return a
}

// stallRun is a planned run: f1 accepted at minute 25 (two attempts),
// the rest pending.
func stallRun(t *testing.T) RunState {
	t.Helper()
	p, err := PlanFromBlock("Add date ranges", sampleBlock())
	require.NoError(t, err)
	require.NoError(t, p.Start("f1"))
	require.NoError(t, p.RecordAttempt("f1", failing(1, 0, "r-f1-1", "date.TestParse"), 2))
	ok := passAttempt(2, "r-f1-2")
	ok.StartedAt, ok.EndedAt = at(10), at(25)
	require.NoError(t, p.RecordAttempt("f1", ok, 2))
	require.NoError(t, p.Accept("f1", "abc1234"))
	return RunState{RunID: "run-1", Goal: "Add date ranges", Status: StatusRunning, Plan: &p}
}

func record(t *testing.T, s *RunState, feature string, as ...Attempt) {
	t.Helper()
	f, ok := s.Plan.Feature(feature)
	require.True(t, ok)
	if f.Status == FeaturePending {
		require.NoError(t, s.Plan.Start(feature))
	}
	for _, a := range as {
		require.NoError(t, s.Plan.RecordAttempt(feature, a, 2))
	}
}

func TestStallFeatureAttempts(t *testing.T) {
	s := stallRun(t)
	for n := 1; n <= 5; n++ {
		record(t, &s, "f2", failing(n, 30+10*n, "r-f2-"+string(rune('0'+n)), "t"+string(rune('0'+n))))
	}
	require.Empty(t, DetectStalls(s, 6), "five attempts are under the threshold")

	record(t, &s, "f2", failing(6, 90, "r-f2-6", "t6"))
	require.Equal(t, []Stall{{
		RunID: "run-1", Goal: "Add date ranges", Feature: "f2", Title: "Parse durations", Kind: StallAttempts, Attempts: 6,
		Receipts: []string{"r-f2-4", "r-f2-5", "r-f2-6"},
		Detail:   "6 attempts on feature f2 and not accepted (stall at 6)",
	}}, DetectStalls(s, 6), "the feature accounts for the run's attempts: no second, run-wide stall")

	require.Len(t, DetectStalls(s, 0), 1, "threshold 0 is the default, 6")
	require.Empty(t, DetectStalls(s, 7))

	// Retrieval steps change nothing and do not count.
	s2 := stallRun(t)
	for n := 1; n <= 6; n++ {
		a := failing(n, 30+10*n, "", "t"+string(rune('0'+n)))
		if n%2 == 0 {
			a.Action, a.Gate, a.Outcome = "retrieve", nil, OutcomeRetrieved
		}
		record(t, &s2, "f2", a)
	}
	require.Empty(t, DetectStalls(s2, 6))
}

func TestStallSameFailingSet(t *testing.T) {
	tests := []struct {
		name     string
		attempts []Attempt
		want     []string // the repeated set, nil for no stall
	}{
		{"three in a row", []Attempt{
			failing(1, 30, "a", "x.TestA"), failing(2, 40, "b", "x.TestB", "x.TestA"), failing(3, 50, "c", "x.TestA", "x.TestB"), failing(4, 60, "d", "x.TestB", "x.TestA", "x.TestA"),
		}, []string{"x.TestA", "x.TestB"}},
		{"changed in the last three", []Attempt{
			failing(1, 30, "a", "x.TestA"), failing(2, 40, "b", "x.TestA"), failing(3, 50, "c", "x.TestB"),
		}, nil},
		{"only two", []Attempt{failing(1, 30, "a", "x.TestA"), failing(2, 40, "b", "x.TestA")}, nil},
		{"a running fourth does not break it", []Attempt{
			failing(1, 30, "a", "x.TestA"), failing(2, 40, "b", "x.TestA"), failing(3, 50, "c", "x.TestA"),
			{N: 4, Outcome: OutcomeRunning, StartedAt: at(60)},
		}, []string{"x.TestA"}},
		{"unrecognised output", func() []Attempt {
			as := []Attempt{failing(1, 30, "a", "x.TestA"), failing(2, 40, "b", "x.TestA"), failing(3, 50, "c", "x.TestA")}
			as[1].Gate.FailingKnown = false
			return as
		}(), nil},
		{"no failing set", []Attempt{failing(1, 30, "a"), failing(2, 40, "b"), failing(3, 50, "c")}, nil},
		{"a rejection in between", func() []Attempt {
			rej := passAttempt(2, "b")
			rej.Audit, rej.Outcome = &Audit{Verdict: "reject"}, OutcomeRejected
			return []Attempt{failing(1, 30, "a", "x.TestA"), rej, failing(3, 50, "c", "x.TestA")}
		}(), nil},
		{"a protocol error in between", []Attempt{
			failing(1, 30, "a", "x.TestA"), {N: 2, Outcome: OutcomeProtocolError, StartedAt: at(40)}, failing(3, 50, "c", "x.TestA"),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stallRun(t)
			record(t, &s, "f3", tt.attempts...)
			got := DetectStalls(s, 6)
			if tt.want == nil {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Equal(t, StallSameFailing, got[0].Kind)
			require.Equal(t, "f3", got[0].Feature)
			require.Equal(t, tt.want, got[0].Failing)
			require.Equal(t, 3, got[0].Attempts)
			require.Len(t, got[0].Receipts, 3)
			require.Contains(t, got[0].Detail, "the last 3 attempts on feature f3 failed the gate with the same")
		})
	}
}

// Six attempts spread over features since the last accepted one stall
// the run; attempts before the acceptance do not count.
func TestStallRunSinceLastAccepted(t *testing.T) {
	s := stallRun(t)
	record(t, &s, "f2", failing(1, 30, "r1", "a"), failing(2, 40, "r2", "b"), failing(3, 50, "r3", "c"))
	record(t, &s, "f3", failing(1, 60, "r4", "d"))
	record(t, &s, "f5", failing(1, 70, "r5", "e"))
	require.Empty(t, DetectStalls(s, 6), "f1's two attempts came before its acceptance")

	record(t, &s, "f3", failing(2, 80, "r6", "f"))
	got := DetectStalls(s, 6)
	require.Len(t, got, 1)
	require.Equal(t, Stall{
		RunID: "run-1", Goal: "Add date ranges", Kind: StallAttempts, Attempts: 6, Since: at(25),
		Receipts: []string{"r4", "r5", "r6"}, Detail: "6 attempts since the last accepted feature (2026-03-01 09:25 UTC) (stall at 6)",
	}, got[0], "the last three receipts in time order, across features")

	// No accepted feature at all: counted from the run's start.
	p, err := PlanFromBlock("g", sampleBlock())
	require.NoError(t, err)
	fresh := RunState{RunID: "run-2", Goal: "g", Status: StatusRunning, Plan: &p}
	record(t, &fresh, "f1", failing(1, 0, "", "a"), failing(2, 10, "", "b"))
	record(t, &fresh, "f2", failing(1, 20, "", "c"), failing(2, 30, "", "d"))
	got = DetectStalls(fresh, 4)
	require.Len(t, got, 1)
	require.Equal(t, "4 attempts since the run's start (no feature accepted yet) (stall at 4)", got[0].Detail)
	require.True(t, got[0].Since.IsZero())
}

func TestStallIgnores(t *testing.T) {
	six := func() []Attempt {
		var as []Attempt
		for n := 1; n <= 6; n++ {
			as = append(as, failing(n, 30+10*n, "", "x.TestA"))
		}
		return as
	}
	for _, st := range []Status{StatusCompleted, StatusBlocked, StatusFailed, StatusCancelled} {
		s := stallRun(t)
		record(t, &s, "f2", six()...)
		s.Status = st
		require.Empty(t, DetectStalls(s, 6), "a %s run is reported by how it ended", st)
	}

	// A blocked feature waits for a person: not a stall of its own (the
	// run still counts its attempts).
	s := stallRun(t)
	record(t, &s, "f3", six()...)
	require.NoError(t, s.Plan.Block("f3", Blocker{Type: BlockerMissingCredential, Evidence: "HOLIDAY_API_KEY is not set in the environment"}))
	got := DetectStalls(s, 6)
	require.Len(t, got, 1)
	require.Equal(t, "", got[0].Feature)

	// A decomposed feature's parts start afresh.
	s = stallRun(t)
	record(t, &s, "f2", six()...)
	require.NoError(t, s.Plan.Decompose("f2", []Feature{{Title: "part one"}, {Title: "part two"}}))
	got = DetectStalls(s, 6)
	require.Len(t, got, 1, "only the run-wide count remains")
	require.Equal(t, StallAttempts, got[0].Kind)
	require.Equal(t, "", got[0].Feature)
}

func TestStallOneFeatureRun(t *testing.T) {
	s := RunState{RunID: "run-s", Goal: "Fix the parser", Status: StatusRunning}
	for n := 1; n <= 3; n++ {
		s.Attempts = append(s.Attempts, failing(n, 10*n, "r"+string(rune('0'+n)), "p.TestX"))
	}
	got := DetectStalls(s, 3)
	require.Len(t, got, 2)
	require.Equal(t, Stall{RunID: "run-s", Goal: "Fix the parser", Kind: StallAttempts, Attempts: 3, Receipts: []string{"r1", "r2", "r3"},
		Detail: "3 attempts and not accepted (stall at 3)"}, got[0])
	require.Equal(t, Stall{RunID: "run-s", Goal: "Fix the parser", Kind: StallSameFailing, Attempts: 3, Failing: []string{"p.TestX"},
		Receipts: []string{"r1", "r2", "r3"}, Detail: "the last 3 attempts failed the gate with the same 1 failing test: p.TestX"}, got[1])
	require.Len(t, DetectStalls(s, 6), 1)
}
