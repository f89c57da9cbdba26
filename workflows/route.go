package workflows

import (
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// plan is how the next step runs: the ladder's decision, or (without a
// ladder: runs from before it) the worker's model on its queue.
type plan struct {
	routed   bool
	retrieve bool // a read-only retrieval step, not an attempt
	tier     ladder.Tier
	model    string
	queue    string
	applier  string
	reason   string
}

// route asks the ladder for the next step. A pause for spend waits for a
// ceiling to change (set-ceiling), or an hour (the day may have turned and
// today's spend be lower), and asks again; a pause because no tier can
// serve the card blocks the run with the ladder's reason as evidence.
func (l *changeLoop) route(ctx workflow.Context) (plan, error) {
	if l.setup.Tiers == nil {
		return plan{model: l.setup.Models[horizon.RoleWorker], queue: l.setup.queue(horizon.RoleWorker, l.paidQueue), applier: activities.ApplierOpenCode}, nil
	}
	st := &l.s.state
	for {
		sp, err := l.spend(ctx)
		if err != nil {
			return plan{}, err
		}
		dec := ladder.Route(ledgerOf(l.job.id, st.Attempts), l.job.card(), l.setup.Tiers, sp)
		if dec.Action != ladder.ActionPause {
			p := plan{routed: true, retrieve: dec.Action == ladder.ActionRetrieve, tier: dec.Tier, model: dec.Model, applier: dec.Applier, reason: dec.Reason}
			if dec.Tier.Paid() {
				p.queue = l.paidQueue
			}
			return p, nil
		}
		if !sp.Limited() {
			st.Blocker = &horizon.Blocker{Type: horizon.BlockerPlatformLimit, Evidence: "no usable tier of the routing ladder: " + dec.Reason}
			st.End(horizon.StatusBlocked, horizon.ReasonBlocked, "blocked (platform_limit): no usable tier: "+dec.Reason, workflow.Now(ctx))
			l.s.publish(ctx)
			return plan{}, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
		}
		if err := l.authority().wait(ctx, sp, dec.Reason); err != nil {
			return plan{}, err
		}
	}
}

// spend gathers the figures the ladder weighs; today's spend across runs
// comes from an activity (it is outside the workflow's own state).
func (l *changeLoop) spend(ctx workflow.Context) (ladder.Spend, error) {
	return spendOf(ctx, &l.s.state, l.spent(), l.throttleAt, l.deadline)
}

// spendOf is the spend the ladder weighs for a run in state st that has
// spent runSpent, with today's spend read (DaySpend, bounded by the
// budget's deadline) when a daily ceiling applies.
func spendOf(ctx workflow.Context, st *horizon.RunState, runSpent, throttleAt float64, deadline time.Time) (ladder.Spend, error) {
	s := spendFigures(st, runSpent, throttleAt)
	if st.DayCeiling > 0 {
		if err := execute(ctx, budgeted(ctx, deadline, gitOptions("spend today")), a.DaySpend, nil, &s.DaySpent); err != nil {
			return s, err
		}
		st.DaySpent = s.DaySpent
	}
	return s, nil
}

// spendFigures is the spend the ladder weighs for a run in state st that
// has spent runSpent, with today's spend as st last read it.
func spendFigures(st *horizon.RunState, runSpent, throttleAt float64) ladder.Spend {
	limit := func(c float64) float64 {
		if c <= 0 {
			return math.Inf(1) // no ceiling configured: no limit
		}
		return c
	}
	return ladder.Spend{RunSpent: runSpent, RunCeiling: limit(st.Ceiling), DaySpent: st.DaySpent, DayCeiling: limit(st.DayCeiling), ThrottleAt: throttleAt}
}

// retrieve runs a read-only explore session at the ladder's tier to find
// what the unresolved names of the last attempt are, for the next brief.
func (l *changeLoop) retrieve(ctx workflow.Context, n int, prev *horizon.Attempt, p plan) error {
	st := &l.s.state
	st.Attempts = append(st.Attempts, horizon.Attempt{
		N: n, Action: actionRetrieve, Tier: p.tier.String(), Applier: "opencode (read-only)", Route: p.reason,
		Model: p.model, Outcome: horizon.OutcomeRunning, StartedAt: workflow.Now(ctx),
	})
	l.s.phase(ctx, horizon.PhaseWorking)
	var symbols []string
	tail := ""
	if prev != nil {
		for _, tr := range prev.Triggers {
			if tr.Kind == string(ladder.TriggerUnresolvedSymbol) {
				symbols = append(symbols, tr.Evidence...)
			}
		}
		if prev.Gate != nil {
			tail = prev.Gate.Tail
		}
	}
	var out activities.SessionOutput
	if err := routed(p).call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("retrieval · %s · before attempt %d", l.job.id, n), p.queue)), a.AgentSession, activities.SessionInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Role: horizon.RoleExplorer, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		Model: p.model, Prompt: horizon.RetrievalBrief(l.job.task, symbols, tail),
	}, &out); err != nil {
		return err
	}
	c := st.Current()
	c.WorkerSession, c.Usage, c.Guidance, c.Outcome, c.EndedAt = out.SessionID, out.Usage, out.Notes, horizon.OutcomeRetrieved, workflow.Now(ctx)
	st.Recount()
	l.s.publish(ctx)
	return nil
}

const actionRetrieve = "retrieve"

// previous returns the last real attempt (for its evidence) and, when the
// step right before is a retrieval, the context it gathered.
func previous(as []horizon.Attempt) (*horizon.Attempt, string) {
	guidance := ""
	for i := len(as) - 1; i >= 0; i-- {
		at := as[i]
		if at.Action == actionRetrieve {
			if i == len(as)-1 {
				guidance = at.Guidance
			}
			continue
		}
		return &at, guidance
	}
	return nil, guidance
}

// ledgerOf is a feature's attempts as the ladder sees them.
func ledgerOf(feature string, as []horizon.Attempt) ladder.Ledger {
	var l ladder.Ledger
	for i := range as {
		at := &as[i]
		if at.Outcome == horizon.OutcomeRunning {
			continue
		}
		e := entry(feature, at)
		e.Applier = at.Applier
		for _, tr := range at.Triggers {
			e.Triggers = append(e.Triggers, ladder.Trigger{Kind: ladder.TriggerKind(tr.Kind), Evidence: tr.Evidence, Detail: tr.Detail})
		}
		if at.Action == actionRetrieve {
			e.Action, e.Outcome = ladder.ActionRetrieve, ""
		}
		l = append(l, e)
	}
	return l
}
