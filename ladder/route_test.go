package ladder

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon/vocab"
)

// avail records the given tiers as available, with the appliers and models
// a typical setup has, and the others as unavailable with a reason.
func avail(tiers ...Tier) Availability {
	setup := map[Tier]Rung{
		T0: {Applier: "ast-grep", Reason: "no .horizon/codemods/*.yml in the repository"},
		T1: {Applier: "opencode", Model: "ollama/qwen2.5-coder:14b", Reason: "no local endpoint answered at 127.0.0.1:11434"},
		T2: {Applier: "reader", Model: "openai/gpt-5-mini", Reason: "no reader configured"},
		T3: {Applier: "opencode", Model: "anthropic/claude-sonnet-4-5", Reason: "provider anthropic not connected"},
		T4: {Applier: "opencode", Model: "anthropic/claude-opus-4-1", Reason: "provider anthropic not connected"},
	}
	av := Availability{}
	for t, r := range setup {
		av[t] = r
	}
	for _, t := range tiers {
		r := av[t]
		r.Available, r.Reason = true, ""
		av[t] = r
	}
	return av
}

var (
	allTiers = avail(T0, T1, T2, T3, T4)
	noReader = avail(T0, T1, T3, T4)
	budget10 = Spend{RunSpent: 1, RunCeiling: 10, DaySpent: 3, DayCeiling: 50}
)

// red is a failed attempt at card f1 with the given triggers.
func red(tier Tier, tr ...Trigger) Entry {
	return Entry{Card: "f1", Tier: tier, Outcome: vocab.OutcomeGateFailed, FailingSet: []string{"pkg.TestAdd"}, Triggers: tr}
}

var (
	trSame  = Trigger{Kind: TriggerSameFailingSet, Evidence: []string{"pkg.TestAdd"}, Detail: "the same failing set as the previous attempt [pkg.TestAdd]"}
	trRed2  = Trigger{Kind: TriggerGateRedTwice, Detail: "the gate red twice running at T1"}
	trRegr  = Trigger{Kind: TriggerRegression, Evidence: []string{"pkg.TestMul"}, Detail: "previously green tests now failing [pkg.TestMul]"}
	trScope = Trigger{Kind: TriggerOutOfScope, Evidence: []string{"README.md"}, Detail: "files outside the card's allow-list [README.md]"}
	trSym   = Trigger{Kind: TriggerUnresolvedSymbol, Evidence: []string{"plus"}, Detail: "unresolved symbols [plus]"}
	retr    = func(tier Tier) Entry { return Entry{Card: "f1", Tier: tier, Action: ActionRetrieve} }
)

var (
	bounded    = Card{ID: "f1"}
	mechanical = Card{ID: "f1", Kind: vocab.KindMechanical}
	open       = Card{ID: "f1", Kind: vocab.KindOpen}
)

type routeCase struct {
	name   string
	ledger Ledger
	card   Card
	av     Availability
	spend  Spend
	action Action
	tier   Tier
}

var routeCases = []routeCase{
	// Starting.
	{"bounded card starts at T1", nil, bounded, allTiers, budget10, ActionAttempt, T1},
	{"mechanical card tries codemods at T0 first", nil, mechanical, allTiers, budget10, ActionAttempt, T0},
	{"mechanical card without codemods starts at T1", nil, mechanical, avail(T1, T2, T3, T4), budget10, ActionAttempt, T1},
	{"open card may start at T1", nil, open, allTiers, budget10, ActionAttempt, T1},
	{"bounded card never uses codemods", nil, bounded, avail(T0), budget10, ActionPause, T0},
	{"no local tier: bounded card starts on the first paid rung", nil, bounded, avail(T2, T3, T4), budget10, ActionAttempt, T2},
	{"no local tier, no reader: start at T3", nil, bounded, avail(T3, T4), budget10, ActionAttempt, T3},
	{"an unknown kind routes as bounded", nil, Card{ID: "f1", Kind: "sweeping"}, allTiers, budget10, ActionAttempt, T1},

	// Two local attempts before any escalation.
	{"bounded: a trigger on the first local attempt does not escalate", Ledger{red(T1, trRegr, trScope)}, bounded, allTiers, budget10, ActionAttempt, T1},
	{"bounded: two local attempts with the same failing set escalate past a missing reader to T3",
		Ledger{red(T1), red(T1, trRed2, trSame)}, bounded, noReader, budget10, ActionAttempt, T3},
	{"bounded: two local attempts escalate to the reader when there is one",
		Ledger{red(T1), red(T1, trRed2, trSame)}, bounded, allTiers, budget10, ActionAttempt, T2},
	{"bounded: two local failures without a trigger retry locally",
		Ledger{red(T1), {Card: "f1", Tier: T1, Outcome: vocab.OutcomeRejected}}, bounded, allTiers, budget10, ActionAttempt, T1},
	{"mechanical: codemods failed, the local model is next", Ledger{red(T0)}, mechanical, allTiers, budget10, ActionAttempt, T1},
	{"mechanical: codemods and local model failed alike, escalate",
		Ledger{red(T0), red(T1, trSame)}, mechanical, allTiers, budget10, ActionAttempt, T2},
	{"mechanical: codemods failed and no local model: escalate at once", Ledger{red(T0)}, mechanical, avail(T0, T3, T4), budget10, ActionAttempt, T3},
	{"mechanical: codemods are never run twice", Ledger{red(T0)}, mechanical, avail(T0), budget10, ActionPause, T0},
	{"bounded: local tiers were down and it went to T3; T1 back does not send it down",
		Ledger{red(T3), red(T3, trSame)}, bounded, allTiers, budget10, ActionAttempt, T4},

	// Open cards climb after one failure.
	{"open: one failed attempt climbs", Ledger{red(T1)}, open, allTiers, budget10, ActionAttempt, T2},
	{"open: a rejected attempt climbs too", Ledger{{Card: "f1", Tier: T1, Outcome: vocab.OutcomeRejected}}, open, noReader, budget10, ActionAttempt, T3},
	{"open: horizon's own error is no evidence against the model", Ledger{{Card: "f1", Tier: T1, Outcome: vocab.OutcomeError}}, open, allTiers, budget10, ActionAttempt, T1},

	// Escalation and the top of the ladder.
	{"a trigger at T3 climbs to T4", Ledger{red(T1), red(T1, trSame), red(T3, trSame)}, bounded, allTiers, budget10, ActionAttempt, T4},
	{"no trigger at T3: retry at T3", Ledger{red(T1), red(T1, trSame), red(T3)}, bounded, allTiers, budget10, ActionAttempt, T3},
	{"at T4 with a trigger: stay at T4", Ledger{red(T4), red(T4, trSame)}, open, allTiers, budget10, ActionAttempt, T4},
	{"T4 unavailable: T3 is the top usable rung", Ledger{red(T1), red(T1, trSame), red(T3, trSame)}, bounded, avail(T1, T3), budget10, ActionAttempt, T3},

	// Unresolved symbols go to retrieval.
	{"unresolved symbol: retrieve at the same tier", Ledger{red(T1, trSym)}, bounded, allTiers, budget10, ActionRetrieve, T1},
	{"unresolved symbol with other triggers: still retrieve first", Ledger{red(T1), red(T1, trSame, trSym)}, bounded, allTiers, budget10, ActionRetrieve, T1},
	{"after retrieval: retry at the same tier despite the other triggers",
		Ledger{red(T1), red(T1, trSame, trSym), retr(T1)}, bounded, allTiers, budget10, ActionAttempt, T1},
	{"symbol still unresolved after retrieval: escalate",
		Ledger{red(T1), red(T1, trSym), retr(T1), red(T1, trSym)}, bounded, allTiers, budget10, ActionAttempt, T2},
	{"unresolved symbol at T3: retrieve at T3", Ledger{red(T3, trSym)}, open, allTiers, budget10, ActionRetrieve, T3},
	{"unresolved symbol from a codemod: retrieval needs a model, T1", Ledger{red(T0, trSym)}, mechanical, allTiers, budget10, ActionRetrieve, T1},
	{"open card after retrieval retries at the same tier", Ledger{red(T1, trSym), retr(T1)}, open, allTiers, budget10, ActionAttempt, T1},

	// Spend.
	{"near the run ceiling: a trigger at T1 stays local",
		Ledger{red(T1), red(T1, trSame)}, bounded, allTiers, Spend{RunSpent: 8.5, RunCeiling: 10, DayCeiling: 50}, ActionAttempt, T1},
	{"near the day ceiling: back from T3 to the local model",
		Ledger{red(T1), red(T1, trSame), red(T3, trSame)}, bounded, allTiers, Spend{RunCeiling: 10, DaySpent: 41, DayCeiling: 50}, ActionAttempt, T1},
	{"near the ceiling, retrieval also goes local", Ledger{red(T3, trSym)}, open, allTiers, Spend{RunSpent: 9, RunCeiling: 10, DayCeiling: 50}, ActionRetrieve, T1},
	{"near the ceiling with no local tier: pause", Ledger{red(T3)}, open, avail(T3, T4), Spend{RunSpent: 9, RunCeiling: 10, DayCeiling: 50}, ActionPause, T0},
	{"run ceiling reached: pause, even with local tiers", Ledger{red(T1)}, bounded, allTiers, Spend{RunSpent: 10, RunCeiling: 10, DayCeiling: 50}, ActionPause, T0},
	{"day ceiling passed: pause", nil, bounded, allTiers, Spend{RunCeiling: 10, DaySpent: 50.01, DayCeiling: 50}, ActionPause, T0},
	{"no ceiling set: local only, never paid", Ledger{red(T1), red(T1, trSame)}, bounded, allTiers, Spend{}, ActionAttempt, T1},

	// Ends.
	{"accepted: done", Ledger{red(T1), {Card: "f1", Tier: T1, Outcome: vocab.OutcomeAccepted}}, bounded, allTiers, budget10, ActionDone, T0},
	{"nothing available: pause naming every tier", nil, bounded, Availability{}, budget10, ActionPause, T0},
	{"other cards' entries do not count", Ledger{{Card: "f2", Tier: T1, Outcome: vocab.OutcomeGateFailed, Triggers: []Trigger{trSame}}, red(T1)}, bounded, allTiers, budget10, ActionAttempt, T1},
}

// TestRouteScenarios checks each rule on a named scenario; the reasons are
// kept in testdata/route/scenarios.golden so wording changes are reviewed.
func TestRouteScenarios(t *testing.T) {
	var g strings.Builder
	for _, tc := range routeCases {
		t.Run(tc.name, func(t *testing.T) {
			d := Route(tc.ledger, tc.card, tc.av, tc.spend)
			require.Equal(t, tc.action, d.Action, d.Reason)
			require.Equal(t, tc.tier, d.Tier, d.Reason)
			require.NotEmpty(t, d.Reason)
			if d.Action == ActionAttempt || d.Action == ActionRetrieve {
				require.Equal(t, tc.av[d.Tier].Applier, d.Applier)
				require.Equal(t, tc.av[d.Tier].Model, d.Model)
			}
			fmt.Fprintf(&g, "## %s\n%s", tc.name, d.Action)
			if d.Action == ActionAttempt || d.Action == ActionRetrieve {
				fmt.Fprintf(&g, " %s %s %s", d.Tier, d.Applier, d.Model)
			}
			fmt.Fprintf(&g, "\n%s\n\n", d.Reason)
		})
	}
	goldenFile(t, "route/scenarios.golden", g.String())
}

// The example reason of the design brief, word for word.
func TestRouteReasonExample(t *testing.T) {
	d := Route(Ledger{red(T1), red(T1, trSame)}, bounded, noReader, budget10)
	require.Equal(t, ActionAttempt, d.Action)
	require.Equal(t, "two local attempts failed with the same failing set as the previous attempt [pkg.TestAdd]; escalating to T3 (skipping T2 unavailable: no reader configured)", d.Reason)
}

// Route reaches the same decision from a ledger that went through JSON, as
// a Temporal replay would hand it over.
func TestRouteAfterJSONRoundTrip(t *testing.T) {
	for _, tc := range routeCases {
		b, err := json.Marshal(struct {
			L  Ledger
			C  Card
			AV Availability
			S  Spend
		}{tc.ledger, tc.card, tc.av, tc.spend})
		require.NoError(t, err)
		var back struct {
			L  Ledger
			C  Card
			AV Availability
			S  Spend
		}
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, Route(tc.ledger, tc.card, tc.av, tc.spend), Route(back.L, back.C, back.AV, back.S), tc.name)
	}
}

func TestRouteInfiniteCeiling(t *testing.T) {
	s := Spend{RunSpent: 1e9, RunCeiling: math.Inf(1), DaySpent: 1e9, DayCeiling: math.Inf(1)}
	d := Route(Ledger{red(T1), red(T1, trSame)}, bounded, allTiers, s)
	require.Equal(t, T2, d.Tier)
}

// Card IDs and symbols come from the planner and from compiler output: a
// percent sign in them must reach the reason verbatim.
func TestRouteReasonVerbatim(t *testing.T) {
	c := Card{ID: "100%-done"}
	d := Route(nil, c, allTiers, budget10)
	require.Equal(t, "first attempt at bounded card 100%-done: starting at T1", d.Reason)
	sym := Trigger{Kind: TriggerUnresolvedSymbol, Evidence: []string{"x%sy"}}
	d = Route(Ledger{{Card: c.ID, Tier: T1, Outcome: vocab.OutcomeGateFailed, Triggers: []Trigger{sym}}}, c, allTiers, budget10)
	require.Equal(t, ActionRetrieve, d.Action)
	require.Contains(t, d.Reason, "[x%sy]")
	require.NotContains(t, d.Reason, "%!")
}
