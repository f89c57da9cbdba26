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

// plan is how the next attempt runs: the ladder's decision, or (for runs
// from before the ladder) the worker's model on its queue.
type plan struct {
	routed  bool
	tier    ladder.Tier
	model   string
	queue   string
	applier string
	reason  string
}

// previous returns the last real attempt (for its evidence) and, when the
// step right before is a retrieval, the context it gathered.
func (r *run) previous() (*horizon.Attempt, string) {
	var prev *horizon.Attempt
	guidance := ""
	for i := len(r.state.Attempts) - 1; i >= 0; i-- {
		at := r.state.Attempts[i]
		if at.Action == actionRetrieve {
			if i == len(r.state.Attempts)-1 {
				guidance = at.Guidance
			}
			continue
		}
		prev = &at
		break
	}
	return prev, guidance
}

const actionRetrieve = "retrieve"

// ledger is the run's attempts as the ladder sees them.
func (r *run) ledger() ladder.Ledger {
	var l ladder.Ledger
	for i := range r.state.Attempts {
		at := &r.state.Attempts[i]
		if at.Outcome == horizon.OutcomeRunning {
			continue
		}
		e := entry(r.fid(), at)
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

// spend gathers the figures the ladder weighs; today's spend across runs
// comes from an activity (it is outside the workflow's own state).
func (r *run) spend(ctx workflow.Context) (ladder.Spend, error) {
	limit := func(c float64) float64 {
		if c <= 0 {
			return math.Inf(1) // no ceiling configured: no limit
		}
		return c
	}
	s := ladder.Spend{RunSpent: r.spent(), RunCeiling: limit(r.state.Ceiling), DayCeiling: limit(r.dayCeiling), ThrottleAt: r.in.ThrottleAt}
	if r.dayCeiling > 0 {
		if err := r.exec(ctx, gitOptions("spend today"), a.DaySpend, nil, &s.DaySpent); err != nil {
			return s, err
		}
		r.state.DaySpent = s.DaySpent
	}
	return s, nil
}

// route asks the ladder for the next step. A pause for spend waits for the
// ceiling to change (set-ceiling) and asks again; a pause because no tier
// can serve the card blocks the run with the ladder's reason as evidence.
func (r *run) route(ctx workflow.Context) (ladder.Decision, error) {
	st := &r.state
	for {
		sp, err := r.spend(ctx)
		if err != nil {
			return ladder.Decision{}, err
		}
		dec := ladder.Route(r.ledger(), r.card(), r.tiers, sp)
		if dec.Action != ladder.ActionPause {
			return dec, nil
		}
		if sp.Limited() {
			// Wait for a raise (set-ceiling), or an hour: the day may have
			// turned and today's spend be lower.
			ceiling, day, phase := st.Ceiling, r.dayCeiling, st.Phase
			st.Phase, st.Reason = horizon.PhasePaused, dec.Reason+fmt.Sprintf("; raise it with `horizon set-ceiling %s USD` (--day for the daily one)", st.RunID)
			r.publish(ctx)
			if _, err := workflow.AwaitWithTimeout(ctx, time.Hour, func() bool { return st.Ceiling != ceiling || r.dayCeiling != day }); err != nil {
				return dec, err
			}
			st.Phase, st.Reason = phase, ""
			continue
		}
		st.Blocker = &horizon.Blocker{Type: horizon.BlockerPlatformLimit, Evidence: "no usable tier of the routing ladder: " + dec.Reason}
		st.End(horizon.StatusBlocked, horizon.ReasonBlocked, "blocked (platform_limit): no usable tier: "+dec.Reason, workflow.Now(ctx))
		r.publish(ctx)
		return dec, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
	}
}

// retrieve runs a read-only explore session at the ladder's tier to find
// what the unresolved names of the last attempt are, for the next brief.
func (r *run) retrieve(ctx workflow.Context, n int, lane activities.Lane, prev *horizon.Attempt, dec ladder.Decision) error {
	st := &r.state
	st.Attempts = append(st.Attempts, horizon.Attempt{
		N: n, Action: actionRetrieve, Tier: dec.Tier.String(), Applier: "opencode (read-only)", Route: dec.Reason,
		Model: dec.Model, Outcome: horizon.OutcomeRunning, StartedAt: workflow.Now(ctx),
	})
	r.phase(ctx, horizon.PhaseWorking)
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
	queue := ""
	if dec.Tier.Paid() {
		queue = r.in.PaidQueue
	}
	var out activities.SessionOutput
	err := r.exec(ctx, sessionOptions(r.limits, fmt.Sprintf("retrieval · %s · before attempt %d", r.fid(), n), queue), a.AgentSession, activities.SessionInput{
		RunID: r.in.RunID, Feature: r.fid(), Attempt: n, Role: "explorer", Lane: lane.Path, BaseCommit: r.in.BaseCommit,
		Model: dec.Model, Prompt: horizon.RetrievalBrief(r.taskText(), symbols, tail),
	}, &out)
	if err != nil {
		return err
	}
	c := st.Current()
	c.WorkerSession, c.Usage, c.Guidance, c.Outcome, c.EndedAt = out.SessionID, out.Usage, out.Notes, horizon.OutcomeRetrieved, workflow.Now(ctx)
	st.Recount()
	r.publish(ctx)
	return nil
}
