package workflows

// LoopWorkflow (`horizon loop`): one persistent session prompted up to N
// times toward one goal. Not to be confused with loop.go, the
// verified-change loop of a run's features.

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// LoopWorkflowInput is one `horizon loop`.
type LoopWorkflowInput struct {
	Loop   activities.LoopInput
	Limits Limits
	// PaidQueue is the task queue of metered sessions, as for a task.
	PaidQueue string
	// Spend is the ceilings the loop's turns observe (spend.day_ceiling
	// above all): the spend authority weighs each turn.
	Spend SpendLimits
}

// FailureLoopFailed is the failure type of a loop whose session or lane
// failed; its details are the activities.LoopResult.
const FailureLoopFailed = "LoopFailed"

// LoopWorkflow fixes the model and the lane (PrepareLoop), runs up to Max
// activations of one session (LoopActivation), compacting it before an
// activation when the last one left it at or over CompactAt of the model's
// context (CompactLoop), and commits the lane on its branch (FinishLoop).
// Whether the goal is reached is read from each activation's
// horizon-report only, and with Gate from the gate too. Cancelling the
// workflow aborts the session; FinishLoop still runs.
func LoopWorkflow(ctx workflow.Context, in LoopWorkflowInput) (activities.LoopResult, error) {
	r, err := newLoopRun(ctx, in)
	if err != nil {
		return activities.LoopResult{}, err
	}
	return r.run(ctx)
}

// loopRun is one loop's state.
type loopRun struct {
	in     LoopWorkflowInput
	limits Limits
	plan   activities.LoopPlan
	state  activities.LoopResult // what QueryLoop answers, and the result
	// context is the last activation's context tokens; gate is the gate
	// that refused its "satisfied".
	context int64
	gate    *horizon.GateRun
	// s holds the ceilings the loop observes and shows a pause at one.
	s *runStatus
	// carry is the advisor's judge state and rolling summary, from one
	// activation's watch to the next.
	carry *activities.AdvisorCarry
}

func newLoopRun(ctx workflow.Context, in LoopWorkflowInput) (*loopRun, error) {
	r := &loopRun{in: in, limits: in.Limits.withDefaults(),
		state: activities.LoopResult{Loop: in.Loop.ID, Status: horizon.LoopRunning, Role: in.Loop.Role}}
	r.s = &runStatus{state: horizon.RunState{RunID: in.Loop.ID, Goal: in.Loop.Prompt, Repo: in.Loop.Repo, Status: horizon.StatusRunning,
		Phase: horizon.PhaseWorking, Ceiling: in.Spend.Ceiling, DayCeiling: in.Spend.DayCeiling, StartedAt: workflow.Now(ctx)}}
	if err := workflow.SetQueryHandler(ctx, QueryLoop, r.query); err != nil {
		return nil, fmt.Errorf("register %s query: %w", QueryLoop, err)
	}
	if err := registerCeilings(ctx, r.s); err != nil {
		return nil, err
	}
	return r, nil
}

// query is QueryLoop: the loop as it stands, with a pause at a spend
// ceiling and what raises it.
func (r *loopRun) query() (activities.LoopResult, error) {
	res := r.state
	if st := r.s.state; st.Phase == horizon.PhasePaused {
		res.Paused = st.Reason
	}
	return res, nil
}

// grant is the spend authority's grant for the loop's next turn (an
// activation or a compaction, checked when version is current): the
// loop's model on the paid queue when it is metered, its role's local
// model near a ceiling, or a pause until a ceiling is raised.
func (r *loopRun) grant(ctx workflow.Context, version workflow.Version) (grant, activities.LoopPlan, error) {
	queue := ""
	if r.plan.Paid {
		queue = r.in.PaidQueue
	}
	metered := session{model: r.plan.Model, queue: queue}
	if version < 1 {
		return unchecked(metered), r.plan, nil
	}
	g, err := r.authority().grant(ctx, horizon.Role(r.in.Loop.Role), metered, r.plan.Paid)
	plan := r.plan
	if g.throttled {
		plan.Model, plan.Paid = g.model, false
	}
	return g, plan, err
}

// authority weighs the loop's metered calls: its turns on the loop's
// role, the advisor's watchdog as the auditor's.
func (r *loopRun) authority() authority {
	local := map[horizon.Role]string{horizon.RoleAuditor: r.plan.ReviewLocal, horizon.Role(r.in.Loop.Role): r.plan.Local}
	return authority{s: r.s, local: local, throttleAt: r.in.Spend.ThrottleAt, subject: r.in.Loop.ID,
		spend: func(ctx workflow.Context) (ladder.Spend, error) {
			return spendOf(ctx, &r.s.state, r.state.Cost, r.in.Spend.ThrottleAt, time.Time{})
		}}
}

func (r *loopRun) run(ctx workflow.Context) (activities.LoopResult, error) {
	id := r.in.Loop.ID
	log := workflow.GetLogger(ctx)
	err := execute(ctx, gitOptions("prepare "+id), a.PrepareLoop, r.in.Loop, &r.plan)
	status := horizon.LoopFailed
	if err == nil {
		r.state.Model, r.state.Branch = r.plan.Model, r.plan.Branch
		status, err = r.activations(ctx)
	}
	var canceled *temporal.CanceledError
	switch {
	case err == nil:
	case errors.As(err, &canceled) || ctx.Err() != nil:
		status, r.state.Error = horizon.LoopCancelled, "cancelled by `horizon cancel`"
	default:
		status, r.state.Error = horizon.LoopFailed, rootMessage(err)
	}
	r.state.Status = status
	// The end is recorded even when the loop was cancelled.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	end := activities.LoopEnd{Loop: r.in.Loop, Plan: r.plan, SessionID: r.state.Session, Status: status,
		Activations: r.state.Activations, Compactions: r.state.Compactions, Cost: r.state.Cost, Report: r.state.Report, Error: r.state.Error,
		Moves: r.state.Moves, Advice: r.state.Advice, Notes: r.state.Notes}
	res := r.state
	if ferr := execute(dctx, gitOptions("finish "+id), a.FinishLoop, end, &res); ferr != nil {
		log.Error("loop end not recorded", "Loop", id, "Error", ferr)
		res = r.state
	}
	r.state = res
	log.Info("loop ended", "Loop", id, "Status", res.Status, "Activations", res.Activations, "Compactions", res.Compactions)
	switch status {
	case horizon.LoopCancelled:
		return res, temporal.NewCanceledError(res)
	case horizon.LoopFailed:
		return res, temporal.NewNonRetryableApplicationError(res.Error, FailureLoopFailed, err, res)
	}
	return res, nil
}

// activations runs the loop's activations until one ends it, or Max.
func (r *loopRun) activations(ctx workflow.Context) (horizon.LoopStatus, error) {
	in := r.in.Loop
	version := workflow.GetVersion(ctx, changeSpendAuthority, workflow.DefaultVersion, 1)
	for k := 1; k <= in.Max; k++ {
		checkpoint := false
		if k > 1 && r.full() {
			g, plan, err := r.grant(ctx, version)
			if err != nil {
				return "", err
			}
			opts := sessionOptions(r.limits, fmt.Sprintf("%s: compact before activation %d", in.ID, k), g.queue)
			cin := activities.LoopCompactInput{Loop: in, Plan: plan, SessionID: r.state.Session, Activation: k}
			if err := g.call(ctx, opts, a.CompactLoop, cin, nil); err != nil {
				return "", err
			}
			r.state.Compactions++
			checkpoint = true
		}
		brief := horizon.LoopBrief{Loop: in.ID, Goal: in.Prompt, Activation: k, Max: in.Max, Checkpoint: checkpoint, Last: r.state.Report, Gate: r.gate}
		var out activities.LoopActivationOutput
		g, plan, err := r.grant(ctx, version)
		if err != nil {
			return "", err
		}
		opts := sessionOptions(r.limits, fmt.Sprintf("%s: activation %d of %d", in.ID, k, in.Max), g.queue)
		ain := activities.LoopActivationInput{Loop: in, Plan: plan, SessionID: r.state.Session, Activation: k, Prompt: brief.String()}
		w, moved, err := r.watchedActivation(ctx, g, opts, ain, &out, k, plan.Model)
		if w != nil && r.endWatch(ctx, w, moved, k, err == nil) {
			// A blocker woke the session after the activation's report:
			// the report that answers it replaces the old one.
			prior := out
			ain.SessionID, ain.Prior = prior.SessionID, &prior.Usage
			out = activities.LoopActivationOutput{}
			err = g.call(ctx, opts, a.LoopActivation, ain, &out)
			out.Usage = prior.Usage.Add(out.Usage)
			out.Moved = prior.Moved
		}
		if err != nil {
			return "", err
		}
		r.state.Session, r.state.Activations, r.context, r.gate = out.SessionID, k, out.Context, nil
		r.state.Moves = appendMoved(r.state.Moves, out.Moved)
		r.state.Cost += out.Usage.Cost
		r.state.Model = plan.Model
		if out.ProtocolError != "" {
			r.state.Error = fmt.Sprintf("activation %d: %s", k, out.ProtocolError)
			return horizon.LoopProtocolError, nil
		}
		r.state.Report = out.Report
		switch out.Report.Status {
		case horizon.ReportBlocked:
			return horizon.LoopBlocked, nil
		case horizon.ReportSatisfied:
			if !in.Gate {
				return horizon.LoopSatisfied, nil
			}
			var g horizon.GateRun
			gin := activities.GateInput{RunID: in.ID, Feature: activities.LoopFeature, Attempt: k, Repo: in.Repo, Lane: r.plan.Dir, BaseCommit: r.plan.Base, Timeout: r.limits.GateTimeout}
			if err := execute(ctx, gateOptions(r.limits, fmt.Sprintf("%s: gate after activation %d", in.ID, k)), a.RunGate, gin, &g); err != nil {
				return "", err
			}
			if g.Passed() {
				return horizon.LoopSatisfied, nil
			}
			r.gate = &g // its evidence starts the next activation
		}
	}
	return horizon.LoopLimitReached, nil
}

// full reports whether the last activation left the session at or over
// the compaction threshold. An unknown context window never compacts.
func (r *loopRun) full() bool {
	limit := r.plan.ContextLimit
	return limit > 0 && float64(r.context) >= r.in.Loop.CompactAt*float64(limit)
}
