package ladder

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon/vocab"
)

// redParts is a red gate at tier whose failed parts are the given ones
// (none: a gate of one part, or a run recorded before parts), with the
// test parts' failing set.
func redParts(tier Tier, failing []string, parts ...vocab.GatePart) Entry {
	return Entry{Card: "c", Tier: tier, Outcome: vocab.OutcomeGateFailed, FailingSet: failing, FailedParts: parts}
}

// A lint failure and a test failure are told apart, from the receipt's
// parts only: a gate red only in its lint step is not a red gate on its
// tests (no gate_red_twice, same_failing_set, regression or unresolved
// symbol from it), and two lint failures at one tier are lint_red_twice.
// A gate without parts counts as it always did.
func TestTriggersLintAndTests(t *testing.T) {
	const test, lint, script = vocab.GatePartTest, vocab.GatePartLint, vocab.GatePartScript
	add := []string{"example.com/calc.TestAdd"}
	undefined := "./calc.go:4:9: undefined: mul\nFAIL\texample.com/calc [build failed]\n"
	tests := []struct {
		name     string
		baseline []string
		prev     *Entry
		cur      Entry
		out      string // the test parts' output
		want     []TriggerKind
	}{
		{name: "lint failure with green tests, first time: no trigger (its output is the evidence)",
			cur: redParts(T1, nil, lint), want: []TriggerKind{}},
		{name: "lint failure twice at one tier, tests green both times",
			prev: ptr(redParts(T1, nil, lint)), cur: redParts(T1, nil, lint), want: []TriggerKind{TriggerLintRedTwice}},
		{name: "lint failure twice, a new tier between: no streak",
			prev: ptr(redParts(T1, nil, lint)), cur: redParts(T3, nil, lint), want: []TriggerKind{}},
		{name: "tests went green, lint still red: progress, not a red gate twice",
			prev: ptr(redParts(T1, add, test, lint)), cur: redParts(T1, nil, lint), want: []TriggerKind{TriggerLintRedTwice}},
		{name: "tests red then lint red only: progress, no trigger",
			prev: ptr(redParts(T1, add, test)), cur: redParts(T1, nil, lint), want: []TriggerKind{}},
		{name: "lint red then tests red: the tests broke, a regression, no streak of either",
			prev: ptr(redParts(T1, nil, lint)), cur: redParts(T1, add, test), want: []TriggerKind{TriggerRegression}},
		{name: "test failure with clean lint, twice: red twice on the tests, same set",
			baseline: add, prev: ptr(redParts(T1, add, test)), cur: redParts(T1, add, test),
			want: []TriggerKind{TriggerGateRedTwice, TriggerSameFailingSet}},
		{name: "both red twice: each named as what it is",
			baseline: add, prev: ptr(redParts(T1, add, script, lint)), cur: redParts(T1, add, script, lint),
			want: []TriggerKind{TriggerGateRedTwice, TriggerLintRedTwice, TriggerSameFailingSet}},
		{name: "a gate of one part counts as before",
			baseline: add, prev: ptr(redParts(T1, add)), cur: redParts(T1, add),
			want: []TriggerKind{TriggerGateRedTwice, TriggerSameFailingSet}},
		{name: "unresolved symbols come from red tests",
			cur: redParts(T1, []string{"example.com/calc [build failed]"}, test), out: undefined,
			want: []TriggerKind{TriggerRegression, TriggerUnresolvedSymbol}},
		{name: "green tests are read for no symbols, whatever the lint step said",
			cur: redParts(T1, nil, lint), out: undefined, want: []TriggerKind{}},
		{name: "a test vanished with every part green: red on its tests",
			prev: ptr(Entry{Card: "c", Tier: T1, Outcome: vocab.OutcomeGateFailed, Vanished: []string{"x.TestGone"}}),
			cur:  Entry{Card: "c", Tier: T1, Outcome: vocab.OutcomeGateFailed, Vanished: []string{"x.TestGone"}},
			want: []TriggerKind{TriggerGateRedTwice, TriggerVanishedTests}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Triggers(Card{ID: "c"}, tt.baseline, tt.prev, tt.cur, tt.out, 0)
			require.Equal(t, tt.want, kinds(got))
			for _, tr := range got {
				if tr.Kind == TriggerLintRedTwice {
					require.Equal(t, []string{"lint"}, tr.Evidence)
					require.Contains(t, tr.Detail, "the lint step red twice running at "+tt.cur.Tier.String())
				}
			}
		})
	}
}

// Two lint failures at one tier move the card up a rung, as two red
// gates on its tests do; one does not.
func TestRouteLintRedTwice(t *testing.T) {
	lintRed := func(tier Tier) Entry {
		e := redParts(tier, nil, vocab.GatePartLint)
		e.Card = "f1"
		return e
	}
	first := lintRed(T3)
	first.Triggers = Triggers(bounded, nil, nil, first, "", 0)
	require.Empty(t, first.Triggers)
	second := lintRed(T3)
	second.Triggers = Triggers(bounded, nil, &first, second, "", 0)
	require.Equal(t, []TriggerKind{TriggerLintRedTwice}, kinds(second.Triggers))

	d := Route(Ledger{first}, bounded, allTiers, budget10)
	require.Equal(t, T3, d.Tier, "one lint failure is retried where it ran: %s", d.Reason)
	d = Route(Ledger{first, second}, bounded, allTiers, budget10)
	require.Equal(t, T4, d.Tier, d.Reason)
	require.Contains(t, d.Reason, "the lint step red twice running at T3")
}

func ptr(e Entry) *Entry { return &e }
