package ladder

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon/vocab"
)

// failing parses a captured gate output the way the gate does.
func failing(t *testing.T, file string) []string {
	t.Helper()
	set, known := gate.ParseFailures(readTestdata(t, file))
	require.True(t, known, "gate does not recognise %s", file)
	return set
}

// diffOf parses a captured git diff.
func diffOf(t *testing.T, file string) DiffStat {
	t.Helper()
	st, err := ParseDiff([]byte(readTestdata(t, file)))
	require.NoError(t, err)
	return st
}

// seqEntry builds the entry of attempt n of the captured sequence in
// testdata/seq (see testdata/README.md): real gate output, real diff.
func seqEntry(t *testing.T, n string, tier Tier) (Entry, string) {
	t.Helper()
	out := readTestdata(t, "seq/"+n+".txt")
	st := diffOf(t, "seq/"+n+".diff")
	e := Entry{
		Card: "calc", Tier: tier, Outcome: vocab.OutcomeGateFailed,
		FailingSet: failing(t, "seq/"+n+".txt"),
		DiffHash:   st.Hash, ChangedFiles: st.Files, ChangedLines: st.ChangedLines(),
	}
	if len(e.FailingSet) == 0 {
		e.Outcome = vocab.OutcomeAccepted
	}
	return e, out
}

func kinds(ts []Trigger) []TriggerKind {
	out := []TriggerKind{}
	for _, t := range ts {
		out = append(out, t.Kind)
	}
	return out
}

// TestTriggersRealSequence replays four attempts at a real Go project
// (example.com/calc: Add is wrong, TestAdd red at the base commit):
// a1 edits a comment, a2 makes the same edit again, a3 fixes Add but
// breaks Mul and edits README.md, a4 fixes Add only.
func TestTriggersRealSequence(t *testing.T) {
	card := Card{ID: "calc", AllowPaths: []string{"calc.go", "calc_test.go"}, LineCeiling: 3}
	baseline := failing(t, "seq/baseline.txt")
	require.Equal(t, []string{"example.com/calc.TestAdd"}, baseline)

	a1, out1 := seqEntry(t, "a1", T1)
	a2, out2 := seqEntry(t, "a2", T1)
	a3, out3 := seqEntry(t, "a3", T3)
	a4, out4 := seqEntry(t, "a4", T3)

	tests := []struct {
		name     string
		prev     *Entry
		cur      Entry
		out      string
		want     []TriggerKind
		evidence map[TriggerKind][]string
	}{
		{
			name: "a1: first attempt, same red test as the baseline: nothing to compare yet",
			cur:  a1, out: out1, want: []TriggerKind{},
		},
		{
			name: "a2: same diff, same failing set, red twice at T1",
			prev: &a1, cur: a2, out: out2,
			want: []TriggerKind{TriggerGateRedTwice, TriggerSameFailingSet, TriggerIdenticalDiff},
			evidence: map[TriggerKind][]string{
				TriggerSameFailingSet: {"example.com/calc.TestAdd"},
				TriggerIdenticalDiff:  {a1.DiffHash},
			},
		},
		{
			name: "a3: TestMul broken, README.md out of scope, 5 lines over a ceiling of 3; red at a new tier is no streak",
			prev: &a2, cur: a3, out: out3,
			want: []TriggerKind{TriggerRegression, TriggerOutOfScope, TriggerOverLineCeiling},
			evidence: map[TriggerKind][]string{
				TriggerRegression:      {"example.com/calc.TestMul"},
				TriggerOutOfScope:      {"README.md"},
				TriggerOverLineCeiling: {"5"},
			},
		},
		{
			name: "a4: green",
			prev: &a3, cur: a4, out: out4, want: []TriggerKind{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Triggers(card, baseline, tt.prev, tt.cur, tt.out, 32768)
			require.Equal(t, tt.want, kinds(got))
			for _, tr := range got {
				if ev, ok := tt.evidence[tr.Kind]; ok {
					require.Equal(t, ev, tr.Evidence, "evidence of %s", tr.Kind)
				}
				require.NotEmpty(t, tr.Detail)
			}
		})
	}
	require.Equal(t, vocab.OutcomeAccepted, a4.Outcome)
}

func TestGateRedTwice(t *testing.T) {
	red := func(tier Tier) *Entry { return &Entry{Tier: tier, Outcome: vocab.OutcomeGateFailed} }
	tests := []struct {
		name string
		prev *Entry
		cur  Entry
		want bool
	}{
		{"first attempt", nil, *red(T1), false},
		{"red twice at T1", red(T1), *red(T1), true},
		{"red at a new tier starts a new streak", red(T1), *red(T3), false},
		{"rejected then red", &Entry{Tier: T1, Outcome: vocab.OutcomeRejected}, *red(T1), false},
		{"protocol error then red", &Entry{Tier: T1, Outcome: vocab.OutcomeProtocolError}, *red(T1), false},
		{"red then accepted", red(T1), Entry{Tier: T1, Outcome: vocab.OutcomeAccepted}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ok := GateRedTwice(tt.prev, tt.cur)
			require.Equal(t, tt.want, ok)
			if ok {
				require.Equal(t, TriggerGateRedTwice, tr.Kind)
			}
		})
	}
}

// TestSameFailingSet compares failing sets parsed from real output; the
// same failures reported in two formats are the same set.
func TestSameFailingSet(t *testing.T) {
	red := func(file string) Entry {
		return Entry{Tier: T1, Outcome: vocab.OutcomeGateFailed, FailingSet: failing(t, file)}
	}
	ptr := func(e Entry) *Entry { return &e }
	tests := []struct {
		name string
		prev *Entry
		cur  Entry
		want bool
	}{
		{"go test plain then -json: same five failures", ptr(red("gate/gotest/two_plain.txt")), red("gate/gotest/two_json.txt"), true},
		{"pytest then pytest -q", ptr(red("gate/pytest/two.txt")), red("gate/pytest/two_q.txt"), true},
		{"cargo: fail-fast run stops before the integration test", ptr(red("gate/cargo/two.txt")), red("gate/cargo/two_no_fail_fast.txt"), false},
		{"baseline red, a3 red on another test", ptr(red("seq/baseline.txt")), red("seq/a3.txt"), false},
		{"first attempt", nil, red("seq/a1.txt"), false},
		{"unrecognised failures are not compared", &Entry{Outcome: vocab.OutcomeGateFailed}, Entry{Outcome: vocab.OutcomeGateFailed}, false},
		{"order and duplicates do not matter", &Entry{Outcome: vocab.OutcomeGateFailed, FailingSet: []string{"b", "a"}}, Entry{Outcome: vocab.OutcomeGateFailed, FailingSet: []string{"a", "b", "a"}}, true},
		{"previous attempt was rejected (gate green)", &Entry{Outcome: vocab.OutcomeRejected}, red("seq/a1.txt"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ok := SameFailingSet(tt.prev, tt.cur)
			require.Equal(t, tt.want, ok)
			if ok {
				require.Equal(t, normSet(tt.cur.FailingSet), tr.Evidence)
			}
		})
	}
}

func TestIdenticalDiff(t *testing.T) {
	h1, h2, h3 := diffOf(t, "seq/a1.diff").Hash, diffOf(t, "seq/a2.diff").Hash, diffOf(t, "seq/a3.diff").Hash
	empty, _ := ParseDiff(nil)
	tests := []struct {
		name      string
		prev, cur string
		havePrev  bool
		want      bool
	}{
		{"same edit made twice (real diffs)", h1, h2, true, true},
		{"different edits", h2, h3, true, false},
		{"nothing changed twice", empty.Hash, empty.Hash, true, true},
		{"unknown hash", "", "", true, false},
		{"first attempt", "", h1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prev *Entry
			if tt.havePrev {
				prev = &Entry{DiffHash: tt.prev}
			}
			_, ok := IdenticalDiff(prev, Entry{DiffHash: tt.cur})
			require.Equal(t, tt.want, ok)
		})
	}
}

func TestRegression(t *testing.T) {
	base := failing(t, "seq/baseline.txt") // [example.com/calc.TestAdd]
	red := func(set ...string) Entry { return Entry{Outcome: vocab.OutcomeGateFailed, FailingSet: set} }
	ptr := func(e Entry) *Entry { return &e }
	tests := []struct {
		name     string
		baseline []string
		prev     *Entry
		cur      Entry
		want     []string
	}{
		{"still only the baseline's red test", base, nil, red(failing(t, "seq/a1.txt")...), nil},
		{"a green test broken (real output)", base, nil, red(failing(t, "seq/a3.txt")...), []string{"example.com/calc.TestMul"}},
		{"fixed in the previous attempt, broken again", base, ptr(Entry{Outcome: vocab.OutcomeRejected}), red("example.com/calc.TestAdd"), []string{"example.com/calc.TestAdd"}},
		{"previous attempt's gate did not run: only the baseline counts", base, ptr(Entry{Outcome: vocab.OutcomeProtocolError}), red("example.com/calc.TestAdd"), nil},
		{"green baseline: every failure is new", nil, nil, red("p.TestA"), []string{"p.TestA"}},
		{"gate green now", base, nil, Entry{Outcome: vocab.OutcomeRejected}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ok := Regression(tt.baseline, tt.prev, tt.cur)
			require.Equal(t, tt.want != nil, ok)
			if ok {
				require.Equal(t, tt.want, tr.Evidence)
			}
		})
	}
}

func TestOutOfScopeAndLineCeiling(t *testing.T) {
	mixed := diffOf(t, "diff/mixed.diff") // calc_test.go deleted, README.md → docs.md, internal/util/util.go and logo.bin added
	tests := []struct {
		name      string
		card      Card
		cur       Entry
		wantScope []string
		wantLines bool
	}{
		{"no allow-list, no ceiling", Card{}, Entry{ChangedFiles: mixed.Files, ChangedLines: mixed.ChangedLines()}, nil, false},
		{"rename leaves scope on both sides", Card{AllowPaths: []string{"calc_test.go", "internal/"}, LineCeiling: 100},
			Entry{ChangedFiles: mixed.Files, ChangedLines: mixed.ChangedLines()}, []string{"README.md", "docs.md", "logo.bin"}, false},
		{"all covered, over the ceiling", Card{AllowPaths: []string{"*"}, LineCeiling: 10},
			Entry{ChangedFiles: mixed.Files, ChangedLines: mixed.ChangedLines()}, nil, true},
		{"at the ceiling is fine", Card{LineCeiling: 19}, Entry{ChangedLines: mixed.ChangedLines()}, nil, false},
		{"a path climbing out of the repo is never in scope", Card{AllowPaths: []string{"**"}}, Entry{ChangedFiles: []string{"../etc/passwd"}}, []string{"../etc/passwd"}, false},
		{"reverted protected paths are out of every card's scope", Card{}, Entry{Reverted: []string{".horizon/verify.sh"}}, []string{".horizon/verify.sh"}, false},
		{"reverted and outside the allow-list", Card{AllowPaths: []string{"calc.go"}}, Entry{ChangedFiles: []string{"x.go"}, Reverted: []string{".zecor/verify.sh"}}, []string{".zecor/verify.sh", "x.go"}, false},
	}
	require.Equal(t, 19, mixed.ChangedLines())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ok := OutOfScope(tt.card, tt.cur)
			require.Equal(t, tt.wantScope != nil, ok)
			if ok {
				require.Equal(t, tt.wantScope, tr.Evidence)
			}
			_, ok = OverLineCeiling(tt.card, tt.cur)
			require.Equal(t, tt.wantLines, ok)
		})
	}
}

func TestContextOverflow(t *testing.T) {
	tests := []struct {
		name string
		cur  Entry
		cap  int
		want bool
	}{
		{"local prompt over the cap", Entry{Tier: T1, PromptTokens: 40000}, 32768, true},
		{"at the cap", Entry{Tier: T1, PromptTokens: 32768}, 32768, false},
		{"cloud prompt over the local cap is not a trigger", Entry{Tier: T3, PromptTokens: 150000}, 32768, false},
		{"no cap configured", Entry{Tier: T1, PromptTokens: 1 << 20}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok := ContextOverflow(tt.cur, tt.cap)
			require.Equal(t, tt.want, ok)
		})
	}
}

func TestUnresolvedSymbolTrigger(t *testing.T) {
	out := readTestdata(t, "gate/gotest/build_failed_plain.txt")
	tr, ok := UnresolvedSymbol(Entry{Outcome: vocab.OutcomeGateFailed}, out)
	require.True(t, ok)
	require.Equal(t, []string{"undefinedThing"}, tr.Evidence)
	require.Equal(t, "unresolved symbols [undefinedThing]", tr.Detail)

	// A green gate's output is not read: a test may well print a NameError it expects.
	_, ok = UnresolvedSymbol(Entry{Outcome: vocab.OutcomeRejected}, out)
	require.False(t, ok)

	// The whole set for a build failure: the package is newly failing too.
	card := Card{ID: "broken"}
	cur := Entry{Tier: T1, Outcome: vocab.OutcomeGateFailed, FailingSet: failing(t, "gate/gotest/build_failed_plain.txt")}
	require.Equal(t, []TriggerKind{TriggerRegression, TriggerUnresolvedSymbol}, kinds(Triggers(card, nil, nil, cur, out, 0)))
}

func TestTriggersIgnoresRetrievalAsPrev(t *testing.T) {
	prev := &Entry{Tier: T1, Action: ActionRetrieve, DiffHash: "sha256:x", Outcome: vocab.OutcomeGateFailed}
	cur := Entry{Tier: T1, DiffHash: "sha256:x", Outcome: vocab.OutcomeGateFailed}
	require.Empty(t, Triggers(Card{}, []string{}, prev, cur, "", 0))
}

func TestListBounds(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	require.Equal(t, "[a b c d e f g h … (+2 more)]", list(names))
	require.Equal(t, "[a]", list(names[:1]))
}

// A test failing at baseline that no longer ran fires vanished_tests,
// naming it; a gate run without vanished tests does not.
func TestVanishedTests(t *testing.T) {
	tr, ok := VanishedTests(Entry{Outcome: vocab.OutcomeGateFailed, Vanished: []string{"p.TestB", "p.TestA"}})
	require.True(t, ok)
	require.Equal(t, TriggerVanishedTests, tr.Kind)
	require.Equal(t, []string{"p.TestA", "p.TestB"}, tr.Evidence)
	require.Contains(t, tr.Detail, "p.TestA")
	_, ok = VanishedTests(Entry{Outcome: vocab.OutcomeGateFailed})
	require.False(t, ok)
	kinds := func(ts []Trigger) []TriggerKind {
		var out []TriggerKind
		for _, t := range ts {
			out = append(out, t.Kind)
		}
		return out
	}
	require.Contains(t, kinds(Triggers(Card{}, []string{"p.TestA"}, nil, Entry{Outcome: vocab.OutcomeGateFailed, Vanished: []string{"p.TestA"}}, "", 0)), TriggerVanishedTests)
}
