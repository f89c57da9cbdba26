package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// changeThrottleRoles applies the spend throttle to the auditor and the
// lead as well as the worker: histories recorded before it replay with
// those sessions on their metered models. changeThrottleLead applies it
// to the lead's planning sessions of a planned run too.
const (
	changeThrottleRoles = "throttle-roles"
	changeThrottleLead  = "throttle-lead-plan"
)

// session is the model and queue of a role's next session.
type session struct {
	model, queue string
}

// throttled is the session a metered role gets near a spend ceiling. The
// ladder keeps the worker and the reader local there (route); the auditor
// and the lead are not routed, so they are weighed here, right before
// their call: past the throttle point (spend.throttle_at of a ceiling) a
// metered role uses the local model that ranks for it, and with none the
// run pauses until a ceiling is raised. So a ceiling is never passed by
// more than the one metered call in flight when it was reached.
func (l *loop) throttled(ctx workflow.Context, role horizon.Role, metered session, paid bool) (session, error) {
	if !paid || workflow.GetVersion(ctx, changeThrottleRoles, workflow.DefaultVersion, 1) < 1 {
		return metered, nil
	}
	// The attempt in flight has spent already (its worker): count it.
	l.s.state.Recount()
	return throttle{s: l.s, local: l.setup.Local, throttleAt: l.throttleAt, subject: l.job.id, spend: l.spend}.session(ctx, role, metered)
}

// throttle weighs a metered session against the spend ceilings: the run
// it is for, the local model of each role, the throttle point, the
// subject of a spend notification (a feature, "plan") and how the spend
// is gathered.
type throttle struct {
	s          *runStatus
	local      map[horizon.Role]string
	throttleAt float64
	subject    string
	spend      func(workflow.Context) (ladder.Spend, error)
}

// session is the session role gets instead of metered: metered below
// the throttle point, else the role's local model, else (none ranks for
// it) after a pause until a ceiling is raised, weighed again.
func (th throttle) session(ctx workflow.Context, role horizon.Role, metered session) (session, error) {
	st := &th.s.state
	for {
		sp, err := th.spend(ctx)
		if err != nil {
			return session{}, err
		}
		if !sp.Limited() {
			return metered, nil
		}
		if local := th.local[role]; local != "" {
			// Local sessions run on the run's own queue, not the paid one.
			return session{model: local}, nil
		}
		why := fmt.Sprintf("the %s's model %s is metered and spend ($%.4f of the run, $%.4f today) is at or past %g of a ceiling (run $%.4f, day $%.4f), and no local model ranks for %s",
			role, metered.model, sp.RunSpent, sp.DaySpent, throttleOf(th.throttleAt), st.Ceiling, st.DayCeiling, role)
		if err := th.s.awaitRaise(ctx, th.subject, why); err != nil {
			return session{}, err
		}
	}
}

// The spend policy is decided in one place: ladder.Spend.Limited says
// whether spend restricts metered models (a ceiling reached, or past the
// throttle point), over the figures spendFigures gathers; awaitRaise is
// the one wait for a ceiling to be raised. route (the worker's and the
// reader's tier), throttle.session (the auditor and the lead) and
// advisorModel (the watchdog) all follow them; loop.ready stops the run
// at its own ceiling before any of them.

// awaitRaise tells a person the run is paused on spend (why) and waits,
// paused, until a ceiling (the run's or the day's) changes, or an hour:
// the day may have turned and today's spend be lower. subject is what the
// spend is for (a feature, "plan"). The caller weighs spend again after.
func (s *runStatus) awaitRaise(ctx workflow.Context, subject, why string) error {
	st := &s.state
	// Read before the notification: a raise that lands while it is sent
	// still ends the wait.
	ceiling, day := st.Ceiling, st.DayCeiling
	reason := why + fmt.Sprintf("; raise it with `horizon set-ceiling %s USD` (--day for the daily one)", st.RunID)
	s.notifySpend(ctx, subject, reason, ceiling, day)
	raised := func() bool { return st.Ceiling != ceiling || st.DayCeiling != day }
	return s.waitIn(ctx, horizon.PhasePaused, reason, raised, time.Hour)
}

// nearCeiling reports whether the run's spend restricts metered models
// now, by the figures the run already holds (today's spend as last read):
// for a choice that must not wait on an activity.
func (l *loop) nearCeiling() bool {
	return spendFigures(&l.s.state, l.spent(), l.throttleAt).Limited()
}

// throttleOf is the throttle fraction as the ladder reads it.
func throttleOf(f float64) float64 {
	switch {
	case f <= 0:
		return ladder.DefaultThrottleAt
	case f > 1:
		return 1
	}
	return f
}
