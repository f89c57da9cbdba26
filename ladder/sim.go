package ladder

import (
	"fmt"
	"math"

	"github.com/horizon/horizon/horizon/vocab"
)

// SimCard is a card with a scripted outcome: every attempt at a tier below
// SolvesAt fails the gate on the same test; an attempt at SolvesAt or above
// is accepted. T0 only ever solves mechanical cards.
type SimCard struct {
	Card     Card
	SolvesAt Tier
}

// SimConfig is the world a simulation routes in.
type SimConfig struct {
	Availability Availability
	// TierCost is the metered cost of one attempt or retrieval per tier.
	TierCost [NumTiers]float64
	// MaxAttempts bounds the attempts per card (the feature loop's cap).
	MaxAttempts int
}

// DefaultSimConfig has every tier available and illustrative per-call
// costs (USD): a reader call is cheap, a cloud applier session is not.
func DefaultSimConfig() SimConfig {
	av := Availability{}
	for _, t := range Tiers() {
		av[t] = Rung{Available: true, Applier: "sim", Model: "sim/" + t.String()}
	}
	return SimConfig{
		Availability: av,
		TierCost:     [NumTiers]float64{0, 0, 0.02, 0.30, 1.20},
		MaxAttempts:  8,
	}
}

// Policy is a routing function with Route's signature.
type Policy func(l Ledger, c Card, av Availability, s Spend) Decision

// AlwaysStartAt is the baseline the ladder is measured against: Route with
// every tier below t hidden, so each card starts at t and climbs by the
// same triggers.
func AlwaysStartAt(t Tier) Policy {
	return func(l Ledger, c Card, av Availability, s Spend) Decision {
		masked := Availability{}
		for tier, r := range av {
			if tier >= t {
				masked[tier] = r
			}
		}
		return Route(l, c, masked, s)
	}
}

// SimResult counts what a policy spent on a set of cards.
type SimResult struct {
	Cards     int     `json:"cards"`
	Resolved  int     `json:"resolved"`
	Attempts  int     `json:"attempts"`
	PaidCalls int     `json:"paid_calls"` // attempts and retrievals at T2–T4
	Cost      float64 `json:"cost"`
}

// CostPerResolved is the cost divided by the resolved cards (+Inf if none).
func (r SimResult) CostPerResolved() float64 { return per(r.Cost, r.Resolved) }

// PaidCallsPerResolved is the paid calls divided by the resolved cards.
func (r SimResult) PaidCallsPerResolved() float64 { return per(float64(r.PaidCalls), r.Resolved) }

func (r SimResult) String() string {
	per := "no card resolved"
	if r.Resolved > 0 {
		per = fmt.Sprintf("%.2f paid calls and %s per resolved card", r.PaidCallsPerResolved(), money(r.CostPerResolved()))
	}
	return fmt.Sprintf("%d/%d resolved, %d attempts, %d paid calls, %s (%s)", r.Resolved, r.Cards, r.Attempts, r.PaidCalls, money(r.Cost), per)
}

func per(v float64, n int) float64 {
	if n == 0 {
		return math.Inf(1)
	}
	return v / float64(n)
}

// Simulate routes every card with policy until it is accepted, the policy
// pauses, or MaxAttempts run out, and counts attempts, paid calls and cost.
// Failed attempts carry the artifacts a real failure would (a red gate with
// the same failing test, a fresh diff), and their triggers come from
// Triggers. Spend is unlimited so that only routing differs between
// policies.
func Simulate(cards []SimCard, cfg SimConfig, policy Policy) SimResult {
	res := SimResult{Cards: len(cards)}
	var l Ledger
	spend := Spend{RunCeiling: math.Inf(1), DayCeiling: math.Inf(1)}
	for _, sc := range cards {
		c := sc.Card
		test := c.ID + ".TestCard"
		for n := 1; n <= cfg.MaxAttempts; n++ {
			spend.RunSpent, spend.DaySpent = res.Cost, res.Cost
			d := policy(l, c, cfg.Availability, spend)
			if d.Action != ActionAttempt && d.Action != ActionRetrieve {
				break
			}
			e := Entry{Card: c.ID, Tier: d.Tier, Action: d.Action, Applier: d.Applier, Model: d.Model, Cost: cfg.TierCost[d.Tier]}
			res.Cost += e.Cost
			if d.Tier.Paid() {
				res.PaidCalls++
			}
			if d.Action == ActionRetrieve {
				l = append(l, e)
				continue
			}
			res.Attempts++
			mechanical, _ := c.shape()
			solved := d.Tier >= sc.SolvesAt && (d.Tier != T0 || mechanical)
			if solved {
				e.Outcome = vocab.OutcomeAccepted
				e.DiffHash = fmt.Sprintf("sha256:%s-%d-ok", c.ID, n)
			} else {
				e.Outcome = vocab.OutcomeGateFailed
				e.FailingSet = []string{test}
				e.DiffHash = fmt.Sprintf("sha256:%s-%d", c.ID, n)
			}
			prev, _ := l.ForCard(c.ID).LastAttempt()
			e.Triggers = Triggers(c, []string{test}, prev, e, "", 0)
			l = append(l, e)
			if solved {
				res.Resolved++
				break
			}
		}
	}
	return res
}

// SyntheticCards returns n cards with a fixed, deterministic mix of kinds
// and solving tiers, shaped after the work horizon expects: mechanical
// cards mostly solved by codemods or the local model, bounded cards mostly
// local with a tail that needs a cloud model, open cards mostly cloud.
func SyntheticCards(n int) []SimCard {
	// Mechanical, bounded and open cards in turn, each with its solving
	// tier indexed by i%10.
	kinds := []struct {
		card   Card
		solves [10]Tier
	}{
		{Card{Kind: vocab.KindMechanical}, [10]Tier{T0, T0, T0, T0, T0, T1, T1, T1, T1, T3}},
		{Card{}, [10]Tier{T1, T1, T1, T1, T1, T1, T2, T3, T3, T4}},
		{Card{Kind: vocab.KindOpen}, [10]Tier{T1, T1, T1, T3, T3, T3, T3, T4, T4, T3}},
	}
	out := make([]SimCard, n)
	for i := range out {
		k := kinds[i%3]
		c := k.card
		c.ID = fmt.Sprintf("c%03d", i)
		out[i] = SimCard{Card: c, SolvesAt: k.solves[(i/3)%10]}
	}
	return out
}
