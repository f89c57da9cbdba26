package ladder

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/horizon/horizon/horizon/vocab"
)

// routeInput is one generated call of Route: a synthetic ledger (the card's
// entries interleaved with another card's), a card, an availability and a
// spend that often sits near, at or over a ceiling.
type routeInput struct {
	L  Ledger
	C  Card
	AV Availability
	S  Spend
}

var allOutcomes = []vocab.Outcome{vocab.OutcomeGateFailed, vocab.OutcomeGateFailed, vocab.OutcomeRejected, vocab.OutcomeProtocolError, vocab.OutcomeBlocked, vocab.OutcomeError, vocab.OutcomeAccepted}

var allTriggerKinds = []TriggerKind{
	TriggerGateRedTwice, TriggerSameFailingSet, TriggerIdenticalDiff, TriggerRegression,
	TriggerOutOfScope, TriggerOverLineCeiling, TriggerContextOverflow, TriggerUnresolvedSymbol,
	TriggerLintRedTwice,
}

// genTier favours the local tiers, where the two-local-attempts rule lives.
func genTier() *rapid.Generator[Tier] {
	return rapid.SampledFrom([]Tier{T0, T1, T1, T1, T1, T2, T3, T4})
}

func genEntry(card string) *rapid.Generator[Entry] {
	return rapid.Custom(func(t *rapid.T) Entry {
		e := Entry{
			Card:    rapid.SampledFrom([]string{card, card, card, "other"}).Draw(t, "card"),
			Tier:    genTier().Draw(t, "tier"),
			Action:  rapid.SampledFrom([]Action{"", "", ActionAttempt, ActionRetrieve}).Draw(t, "action"),
			Outcome: rapid.SampledFrom(allOutcomes).Draw(t, "outcome"),
			Cost:    rapid.Float64Range(0, 2).Draw(t, "cost"),
		}
		for _, k := range rapid.SliceOfNDistinct(rapid.SampledFrom(allTriggerKinds), 0, 3, func(k TriggerKind) TriggerKind { return k }).Draw(t, "triggers") {
			e.Triggers = append(e.Triggers, Trigger{Kind: k, Evidence: []string{"x"}, Detail: string(k)})
		}
		return e
	})
}

func genSpendAxis(t *rapid.T, name string) (spent, ceiling float64) {
	ceiling = rapid.SampledFrom([]float64{0, -1, 1, 10, 10, 50, 50, math.Inf(1), math.Inf(1), math.NaN()}).Draw(t, name+"Ceiling")
	switch rapid.SampledFrom([]int{0, 0, 0, 1, 2, 3, 4}).Draw(t, name+"Shape") {
	case 0:
		spent = 0
	case 1:
		spent = ceiling // exactly at it
	case 2:
		spent = rapid.Float64Range(0, 60).Draw(t, name+"Spent")
	case 3:
		spent = ceiling * rapid.SampledFrom([]float64{0.5, 0.79, 0.8, 0.9, 0.99, 1.01}).Draw(t, name+"Frac")
	default:
		spent = rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), -3}).Draw(t, name+"Odd")
	}
	return spent, ceiling
}

func genRouteInput() *rapid.Generator[routeInput] {
	return rapid.Custom(func(t *rapid.T) routeInput {
		in := routeInput{
			// Mechanical, bounded, open, and a kind the plan does not know (which routes as bounded).
			C: rapid.SampledFrom([]Card{{ID: "c", Kind: vocab.KindMechanical}, {ID: "c", Kind: vocab.KindMechanical}, {ID: "c"}, {ID: "c"}, {ID: "c", Kind: vocab.KindOpen}, {ID: "c", Kind: "sweeping"}}).Draw(t, "card"),
			L: rapid.SliceOfN(genEntry("c"), 0, rapid.SampledFrom([]int{3, 3, 10}).Draw(t, "maxLen")).Draw(t, "ledger"),
		}
		in.AV = Availability{}
		// All tiers up, each tier up or down at random, or codemods with
		// little else (where the codemods-once rule shows).
		avMode := rapid.IntRange(0, 3).Draw(t, "avMode")
		for _, tier := range Tiers() {
			up := Rung{Available: true, Applier: "app-" + tier.String(), Model: "m/" + tier.String()}
			switch {
			case avMode == 0, avMode == 3 && tier == T0:
				in.AV[tier] = up
				continue
			case avMode == 3:
				if rapid.IntRange(0, 3).Draw(t, "sparse"+tier.String()) == 0 {
					in.AV[tier] = up
				}
				continue
			}
			switch rapid.IntRange(0, 3).Draw(t, "av"+tier.String()) {
			case 0: // not recorded at all
			case 1:
				in.AV[tier] = Rung{Reason: "down"}
			default:
				in.AV[tier] = Rung{Available: true, Applier: "app-" + tier.String(), Model: "m/" + tier.String()}
			}
		}
		if rapid.Bool().Draw(t, "healthySpend") {
			// Well inside both ceilings: the routing rules, not the spend
			// policy, decide.
			in.S = Spend{
				RunSpent: rapid.Float64Range(0, 4).Draw(t, "runSpent"), RunCeiling: 10,
				DaySpent: rapid.Float64Range(0, 20).Draw(t, "daySpent"), DayCeiling: 50,
			}
			return in
		}
		in.S.RunSpent, in.S.RunCeiling = genSpendAxis(t, "run")
		in.S.DaySpent, in.S.DayCeiling = genSpendAxis(t, "day")
		in.S.ThrottleAt = rapid.SampledFrom([]float64{0, 0.5, 0.8, 1, 1.5, math.NaN()}).Draw(t, "throttle")
		return in
	})
}

// expectation is the spend policy restated independently of spend.go.
func (in routeInput) spendState() (pause, paidOK bool) {
	th := in.S.ThrottleAt
	if math.IsNaN(th) || th <= 0 {
		th = 0.8
	}
	th = math.Min(th, 1)
	paidOK = true
	for _, a := range [][2]float64{{in.S.RunSpent, in.S.RunCeiling}, {in.S.DaySpent, in.S.DayCeiling}} {
		spent, ceiling := a[0], a[1]
		if math.IsNaN(spent) || math.IsInf(spent, 0) || math.IsNaN(ceiling) || (ceiling > 0 && spent >= ceiling) {
			return true, false
		}
		if ceiling <= 0 || spent >= th*ceiling {
			paidOK = false
		}
	}
	return false, paidOK
}

func clone(in routeInput) routeInput {
	out := routeInput{C: in.C, S: in.S, AV: Availability{}}
	out.C.AllowPaths = append([]string(nil), in.C.AllowPaths...)
	for k, v := range in.AV {
		out.AV[k] = v
	}
	if in.L != nil {
		out.L = Ledger{}
	}
	for _, e := range in.L {
		e.Triggers = append([]Trigger(nil), e.Triggers...)
		out.L = append(out.L, e)
	}
	return out
}

func TestRouteProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genRouteInput().Draw(t, "in")
		before := clone(in)
		d := Route(in.L, in.C, in.AV, in.S)
		pause, paidOK := in.spendState()
		mine := in.L.ForCard(in.C.ID)
		attempts := mine.Attempts()
		last, _ := mine.LastAttempt()
		runs := d.Action == ActionAttempt || d.Action == ActionRetrieve

		require.NotEmpty(t, d.Reason)
		require.Contains(t, []Action{ActionAttempt, ActionRetrieve, ActionPause, ActionDone}, d.Action)

		// Route does not touch its inputs (%#v: NaN is not DeepEqual to itself).
		require.Equal(t, fmt.Sprintf("%#v", before), fmt.Sprintf("%#v", in))

		// Never an unavailable tier; Applier and Model come from its rung.
		if runs {
			require.True(t, in.AV.Available(d.Tier), "unavailable tier %s chosen: %s", d.Tier, d.Reason)
			require.Equal(t, in.AV[d.Tier].Applier, d.Applier)
			require.Equal(t, in.AV[d.Tier].Model, d.Model)
		}

		// At or over a ceiling: pause. Near it, or with no ceiling set:
		// never a paid tier.
		if pause {
			require.Equal(t, ActionPause, d.Action, d.Reason)
		}
		if !paidOK && runs {
			require.True(t, d.Tier.Local(), "paid tier %s with spend %+v: %s", d.Tier, in.S, d.Reason)
		}

		// Codemods only for mechanical cards, and only once.
		if runs && d.Tier == T0 {
			require.True(t, in.C.Kind == vocab.KindMechanical, "codemods for a card that is not mechanical: %+v", in.C)
			require.Equal(t, ActionAttempt, d.Action)
			for _, e := range attempts {
				require.False(t, e.Tier == T0 && e.Outcome != vocab.OutcomeError, "codemods run twice: %s", d.Reason)
			}
		}

		// Done exactly when the last attempt was accepted (and spend allows
		// routing at all).
		if !pause {
			require.Equal(t, last != nil && last.Outcome == vocab.OutcomeAccepted, d.Action == ActionDone, d.Reason)
		}

		if pause || last != nil && last.Outcome == vocab.OutcomeAccepted {
			return
		}
		open := in.C.Kind == vocab.KindOpen
		localPending := !open &&
			attempts.LocalAttempts() < 2 && attempts.PaidAttempts() == 0 && in.AV.Available(T1)

		// Two local attempts for mechanical and bounded cards, whatever the
		// triggers, while a local tier is available.
		if localPending {
			require.True(t, runs && d.Tier.Local(), "local attempts skipped (%d so far): %s", attempts.LocalAttempts(), d.Reason)
		}

		// An escalation trigger (or, for an open card, any failure of the
		// model) moves the card strictly up, unless it is on the top
		// available rung (or spend keeps it local, or the local attempts are
		// still owed).
		climbs := last != nil && (len(last.escalating()) > 0 || open && modelFailure(last.Outcome))
		if climbs && !last.Has(TriggerUnresolvedSymbol) && paidOK && !localPending {
			above := false
			for tier := last.Tier + 1; tier <= T4; tier++ {
				above = above || in.AV.Available(tier)
			}
			if above {
				require.Equal(t, ActionAttempt, d.Action, d.Reason)
				require.Greater(t, d.Tier, last.Tier, d.Reason)
			}
		}

		// An unresolved symbol with no retrieval yet is answered by
		// retrieval, never by a bigger model.
		if last != nil && last.Has(TriggerUnresolvedSymbol) && d.Action == ActionRetrieve {
			require.GreaterOrEqual(t, d.Tier, T1)
			require.LessOrEqual(t, d.Tier, max(last.Tier, T1)+func() Tier {
				// It may only go up when the tier itself is unavailable.
				if in.AV.Available(max(last.Tier, T1)) {
					return 0
				}
				return T4
			}())
		}

		// Deterministic, and blind to other cards' entries.
		require.Equal(t, d, Route(in.L, in.C, in.AV, in.S))
		require.Equal(t, d, Route(mine, in.C, in.AV, in.S))
	})
}

// A Temporal replay hands Route a ledger that went through JSON: it must
// decide the same.
func TestRouteJSONProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genRouteInput().Draw(t, "in")
		for _, f := range []float64{in.S.RunSpent, in.S.RunCeiling, in.S.DaySpent, in.S.DayCeiling, in.S.ThrottleAt} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Skip("JSON has no NaN or infinity")
			}
		}
		b, err := json.Marshal(in)
		require.NoError(t, err)
		var back routeInput
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, Route(in.L, in.C, in.AV, in.S), Route(back.L, back.C, back.AV, back.S))
	})
}

// Walking a card through the ladder with Route and Triggers always ends:
// accepted, paused, or stuck on the top rung, never cycling below it.
func TestRouteWalkProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genRouteInput().Draw(t, "in")
		solvesAt := genTier().Draw(t, "solvesAt")
		card := in.C
		var l Ledger
		s := Spend{RunCeiling: math.Inf(1), DayCeiling: math.Inf(1)}
		highest := Tier(-1)
		for n := 0; n < 30; n++ {
			d := Route(l, card, in.AV, s)
			if d.Action == ActionPause || d.Action == ActionDone {
				return
			}
			require.True(t, in.AV.Available(d.Tier))
			if d.Action == ActionRetrieve {
				l = append(l, Entry{Card: card.ID, Tier: d.Tier, Action: ActionRetrieve})
				continue
			}
			e := Entry{Card: card.ID, Tier: d.Tier, Outcome: vocab.OutcomeGateFailed, FailingSet: []string{"t"}, DiffHash: "h"}
			if d.Tier >= solvesAt {
				e.Outcome, e.FailingSet = vocab.OutcomeAccepted, nil
			}
			prev, _ := l.LastAttempt()
			e.Triggers = Triggers(card, []string{"t"}, prev, e, "", 0)
			l = append(l, e)
			highest = max(highest, d.Tier)
		}
		// Thirty steps without an end: only the top usable rung may repeat.
		top := T0
		for _, tier := range Tiers() {
			if in.AV.Available(tier) && (tier != T0 || card.Kind == vocab.KindMechanical) {
				top = tier
			}
		}
		require.Equal(t, top, highest, "the walk stalled below the top usable rung")
		last, _ := l.LastAttempt()
		require.Equal(t, top, last.Tier)
	})
}
