package workflows

// The spend authority: every metered model call a workflow makes (the
// worker, the auditor, the lead's plans and decompositions, the reader,
// retrieval, tasks, loop turns, the advisor's watchdog) is granted here
// and executed through the grant. The authority weighs the call against
// the ceilings (ladder.Spend.Limited, the one spend rule), moves the role
// to its local model near a ceiling where it has one, pauses at a ceiling
// (visibly, with the command that raises it) or, for a command in the
// foreground, refuses, and puts the call on the one-paid-call-at-a-time
// queue. Each activity appends its cost to the day's ledger
// (activities/spend.go) and the workflow adds it to its own spend.
// authority_test.go parses this package and fails when a metered activity
// is executed any other way.

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// changeSpendAuthority puts the lead of `horizon plan` and of a
// supervisor's decompositions, loop turns and tasks under the spend
// authority (the day's spend read, the throttle, the pause and the paid
// queue): histories recorded before it replay without those checks.
const changeSpendAuthority = "spend-authority-plans-loops-tasks"

// FailureSpendCeiling is the failure type of a workflow in the foreground
// (`horizon plan`) that met a spend ceiling: it does not wait for a raise.
const FailureSpendCeiling = "SpendCeiling"

// SpendLimits are the ceilings a workflow that is not a run observes
// (a plan, a loop, a task): spend.ceiling for its own calls,
// spend.day_ceiling across everything, spend.throttle_at. Zero: none.
type SpendLimits struct {
	Ceiling    float64
	DayCeiling float64
	ThrottleAt float64
}

// grant is the authority's answer to one metered call: the model it runs
// on (the metered one, or the role's local one near a ceiling) and its
// task queue (the paid queue for a metered model). Only this file makes
// grants (the authority test checks it); the only way to run a metered
// activity is a grant's call or start.
type grant struct {
	session
	// throttled says the call was moved to a local model near a ceiling.
	throttled bool
}

// call executes the metered activity fn on the grant's queue and waits
// for its result.
func (g grant) call(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	opts.TaskQueue = g.queue
	return execute(ctx, opts, fn, in, out)
}

// start starts the metered activity fn beside the caller, off the paid
// queue: the advisor's watchdog, which reviews a session while it runs.
// On a single paid slot it cannot queue behind the session it watches
// (held by that session until its end, it would only ever review a
// finished one), so it runs on the workflow's own queue; its cost still
// joins the attempt's usage and the day's ledger (AdvisorWatch records
// it), and the authority chose its model (authority.beside).
func (g grant) start(ctx workflow.Context, opts workflow.ActivityOptions, fn, in any) workflow.Future {
	opts.TaskQueue = ""
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), fn, in)
}

// begin starts the metered activity fn on the grant's queue without
// waiting for it: the worker's session, which the workflow watches while
// it runs (which worker runs it, for the advisor's watchdog).
func (g grant) begin(ctx workflow.Context, opts workflow.ActivityOptions, fn, in any) workflow.Future {
	opts.TaskQueue = g.queue
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), fn, in)
}

// startOn starts the metered activity fn beside the caller on queue, off
// the paid queue as start does: the watchdog on the host queue of the
// worker that runs the session it reviews (activities.SessionHost), the
// one worker whose OpenCode store holds that session.
func (g grant) startOn(ctx workflow.Context, opts workflow.ActivityOptions, fn, in any, queue string) workflow.Future {
	opts.TaskQueue = queue
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), fn, in)
}

// authority weighs metered calls of one workflow: its status (where a
// pause shows and the ceilings it observes), the local model of each
// role, the throttle point, the subject of a spend notification (a
// feature, "plan", a loop) and how its spend is gathered.
type authority struct {
	s          *runStatus
	local      map[horizon.Role]string
	throttleAt float64
	subject    string
	spend      func(workflow.Context) (ladder.Spend, error)
	// foreground says a person waits on the command: at a ceiling it
	// fails with FailureSpendCeiling instead of waiting for a raise.
	foreground bool
}

// unchecked grants a call as its caller chose it, without weighing spend:
// for a history recorded before the authority weighed that caller, which
// must replay the commands it recorded.
func unchecked(metered session) grant { return grant{session: metered} }

// routed grants the ladder's step: route weighed the spend (the worker's
// and the reader's tiers; retrieval) with the same rule, through
// authority.wait, and chose a metered tier's paid queue.
func routed(p plan) grant { return grant{session: session{model: p.model, queue: p.queue}} }

// grant weighs one call of role on a metered model (paid) against the
// ceilings, right before it: below the throttle point it runs as asked;
// past it on the role's local model (on the workflow's own queue); with
// no local model it waits until a ceiling is raised (or refuses, in the
// foreground) and is weighed again. A call on a model that is not metered
// is granted as asked.
func (au authority) grant(ctx workflow.Context, role horizon.Role, metered session, paid bool) (grant, error) {
	if !paid {
		return grant{session: metered}, nil
	}
	st := &au.s.state
	for {
		sp, err := au.spend(ctx)
		if err != nil {
			return grant{}, err
		}
		if !sp.Limited() {
			return grant{session: metered}, nil
		}
		if local := au.local[role]; local != "" {
			return grant{session: session{model: local}, throttled: true}, nil
		}
		why := fmt.Sprintf("the %s's model %s is metered and spend ($%.4f here, $%.4f today) is at or past %g of a ceiling (run $%.4f, day $%.4f), and no local model ranks for %s",
			role, metered.model, sp.RunSpent, sp.DaySpent, throttleOf(au.throttleAt), st.Ceiling, st.DayCeiling, role)
		if err := au.wait(ctx, sp, why); err != nil {
			return grant{}, err
		}
	}
}

// wait is the one wait for a ceiling to be raised (spend sp, why): a run,
// a plan, a loop or a task pauses, shows why and the command that raises
// the ceiling, and waits (awaitRaise); a workflow in the foreground
// fails instead, naming the ceiling and the command.
func (au authority) wait(ctx workflow.Context, sp ladder.Spend, why string) error {
	if au.foreground {
		return temporal.NewNonRetryableApplicationError(foregroundRefusal(sp, throttleOf(au.throttleAt), why), FailureSpendCeiling, nil)
	}
	return au.s.awaitRaise(ctx, au.subject, why)
}

// foregroundRefusal is what a command in the foreground says at a
// ceiling: which ceiling, what was spent, and how to raise it.
func foregroundRefusal(sp ladder.Spend, throttleAt float64, why string) string {
	which := "near a spend ceiling"
	switch {
	case sp.DaySpent >= sp.DayCeiling:
		which = fmt.Sprintf("today's spend $%.4f has reached the day ceiling $%.4f (spend.day_ceiling)", sp.DaySpent, sp.DayCeiling)
	case sp.RunSpent >= sp.RunCeiling:
		which = fmt.Sprintf("its spend $%.4f has reached the ceiling $%.4f (spend.ceiling)", sp.RunSpent, sp.RunCeiling)
	case sp.DaySpent >= throttleAt*sp.DayCeiling:
		which = fmt.Sprintf("today's spend $%.4f is past %g of the day ceiling $%.4f (spend.day_ceiling)", sp.DaySpent, throttleAt, sp.DayCeiling)
	}
	return fmt.Sprintf("spend ceiling: %s; it does not wait in the foreground (%s). Raise spend.day_ceiling (spend.ceiling), or a waiting run's with `horizon set-ceiling --day RUN USD`", which, why)
}

// beside chooses the model of a call that runs beside a session without
// waiting on anything (the advisor's watchdog): the spend rule on the
// figures the workflow holds (today's spend as last read), metered below
// the throttle point, the role's local model past it, else none (model
// "" with why): such a call goes off rather than pause the session.
func (au authority) beside(role horizon.Role, metered string, runSpent float64) (g grant, why string) {
	if !spendFigures(&au.s.state, runSpent, au.throttleAt).Limited() {
		return grant{session: session{model: metered}}, ""
	}
	if local := au.local[role]; local != "" {
		return grant{session: session{model: local}, throttled: true}, ""
	}
	return grant{}, fmt.Sprintf("spend is near a ceiling (%g of it) and no local model ranks for %s", throttleOf(au.throttleAt), role)
}

// consults is the authority's word on the consults a worker makes during
// its session (the consult tool, `horizon mcp`). A consult runs inside the
// worker's session, so it cannot take the paid queue (the worker holds
// the one paid slot while it waits for the answer) and is not granted
// here one by one: it is off when spend is near a ceiling now (by the
// figures the run holds, today's spend as the route last read it), and
// the consult tool weighs the day's ceiling again at each call. Its cost
// joins the worker's session's usage (activities.addConsults), so the
// run's spend and the day's ledger count it.
func (au authority) consults(runSpent float64) *activities.ConsultSpend {
	c := &activities.ConsultSpend{DayCeiling: au.s.state.DayCeiling, ThrottleAt: throttleOf(au.throttleAt)}
	if spendFigures(&au.s.state, runSpent, au.throttleAt).Limited() {
		c.Off = fmt.Sprintf("spend is at or past %g of a ceiling (run $%.4f, day $%.4f): consults use a metered model and are off for this attempt",
			throttleOf(au.throttleAt), au.s.state.Ceiling, au.s.state.DayCeiling)
	}
	return c
}
