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

// throttled grants a metered role's session (the auditor's, the lead's
// decompositions) through the spend authority. The ladder keeps the
// worker and the reader local near a ceiling (route); the auditor and the
// lead are not routed, so they are weighed by the authority right before
// their call: past the throttle point (spend.throttle_at of a ceiling) a
// metered role uses the local model that ranks for it, and with none the
// run pauses until a ceiling is raised. So a ceiling is never passed by
// more than the one metered call in flight when it was reached.
func (l *changeLoop) throttled(ctx workflow.Context, role horizon.Role, metered session, paid bool) (grant, error) {
	if !paid || version(ctx, changeThrottleRoles, 1) < 1 {
		return unchecked(metered), nil
	}
	// The attempt in flight has spent already (its worker): count it.
	l.s.state.Recount()
	return l.authority().grant(ctx, role, metered, paid)
}

// authority is the loop's spend authority: the run's status and
// ceilings, the local models of its roles, the feature as the subject.
func (l *changeLoop) authority() authority {
	return authority{s: l.s, local: l.setup.Local, throttleAt: l.throttleAt, subject: l.job.id, spend: l.spend}
}

// The spend policy is decided in one place: ladder.Spend.Limited says
// whether spend restricts metered models (a ceiling reached, or past the
// throttle point), over the figures spendFigures gathers; the authority
// (authority.go) applies it to every metered call: route (the worker's
// and the reader's tier) through the ladder, authority.grant (the
// auditor, the lead, plans, loops, tasks), authority.beside (the
// watchdog); awaitRaise is the one wait for a ceiling to be raised.
// changeLoop.ready stops the run at its own ceiling before any of them.

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
