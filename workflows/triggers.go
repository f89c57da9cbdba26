package workflows

import (
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// card is the ladder's view of a feature: its kind (--kind or the plan's,
// bounded by default), its allow-list (a planned feature's paths) and the
// run's line ceiling (run.line_ceiling; 0: none).
func card(id string, k horizon.FeatureKind, paths []string, lineCeiling int) ladder.Card {
	return ladder.Card{ID: id, Kind: k, AllowPaths: paths, LineCeiling: lineCeiling}
}

// entry maps an attempt onto the ladder's ledger entry; the caller sets
// the tier the attempt ran at (T3 for runs from before the ladder).
func entry(feature string, a *horizon.Attempt) ladder.Entry {
	tier := ladder.T3 // runs from before the ladder ran every attempt on one cloud model
	if t, err := ladder.ParseTier(a.Tier); err == nil {
		tier = t
	}
	e := ladder.Entry{
		Card:         feature,
		Tier:         tier,
		Model:        a.Model,
		Cost:         a.Usage.Cost,
		Outcome:      a.Outcome,
		PromptTokens: int(a.Usage.Input),
	}
	if g := a.Gate; g != nil {
		e.FailingSet = g.Failing
		e.DiffHash = g.Tree
		e.ChangedFiles = g.ChangedFiles
		e.ChangedLines = g.ChangedLines
		e.Vanished = g.Vanished
		e.Reverted = g.Reverted
		e.FailedParts = g.FailedParts()
	}
	return e
}

// triggers computes the escalation triggers of cur from artifacts only:
// receipts' failing sets, snapshot trees, diff stats, token counts and the
// gate's own output. What the worker or auditor said plays no part.
func triggers(c ladder.Card, baseline *horizon.GateRun, prev, cur *horizon.Attempt, localContext int) []horizon.Trigger {
	feature := c.ID
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
	for _, t := range ladder.Triggers(c, base, p, entry(feature, cur), out, localContext) {
		ts = append(ts, horizon.Trigger{Kind: string(t.Kind), Evidence: t.Evidence, Detail: t.Detail})
	}
	return ts
}
