package workflows

import (
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// card is the single feature's card until plans supply real ones: bounded,
// no allow-list, no line ceiling.
func card(id string) ladder.Card {
	return ladder.Card{ID: id, Kind: ladder.KindBounded}
}

// entry maps an attempt onto the ladder's ledger entry. Until the ladder
// routes attempts, every attempt counts as a T1 (local) one.
func entry(feature string, a *horizon.Attempt) ladder.Entry {
	e := ladder.Entry{
		Card:         feature,
		Tier:         ladder.T1,
		Model:        a.Model,
		Cost:         a.Usage.Cost,
		Outcome:      ladder.Outcome(a.Outcome),
		PromptTokens: int(a.Usage.Input),
	}
	if g := a.Gate; g != nil {
		e.FailingSet = g.Failing
		e.DiffHash = g.Tree
		e.ChangedFiles = g.ChangedFiles
		e.ChangedLines = g.ChangedLines
	}
	return e
}

// triggers computes the escalation triggers of cur from artifacts only:
// receipts' failing sets, snapshot trees, diff stats, token counts and the
// gate's own output. What the worker or auditor said plays no part.
func triggers(feature string, baseline *horizon.GateRun, prev, cur *horizon.Attempt) []horizon.Trigger {
	var base []string
	if baseline != nil {
		base = baseline.Failing
	}
	var p *ladder.Entry
	if prev != nil {
		pe := entry(feature, prev)
		p = &pe
	}
	out := ""
	if cur.Gate != nil {
		out = cur.Gate.Tail
	}
	var ts []horizon.Trigger
	for _, t := range ladder.Triggers(card(feature), base, p, entry(feature, cur), out, 0) {
		ts = append(ts, horizon.Trigger{Kind: string(t.Kind), Evidence: t.Evidence, Detail: t.Detail})
	}
	return ts
}
