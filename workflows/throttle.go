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
// those sessions on their metered models.
const changeThrottleRoles = "throttle-roles"

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
	st := &l.s.state
	// The attempt in flight has spent already (its worker): count it.
	st.Recount()
	for {
		sp, err := l.spend(ctx)
		if err != nil {
			return session{}, err
		}
		if !sp.Limited() {
			return metered, nil
		}
		if local := l.setup.Local[role]; local != "" {
			// Local sessions run on the run's own queue, not the paid one.
			return session{model: local}, nil
		}
		ceiling, day := st.Ceiling, st.DayCeiling
		reason := fmt.Sprintf("the %s's model %s is metered and spend ($%.4f of the run, $%.4f today) is at or past %g of a ceiling (run $%.4f, day $%.4f), and no local model ranks for %s; raise it with `horizon set-ceiling %s USD` (--day for the daily one)",
			role, metered.model, sp.RunSpent, sp.DaySpent, throttleOf(l.throttleAt), ceiling, day, role, st.RunID)
		l.s.notifySpend(ctx, l.job.id, reason, ceiling, day)
		raised := func() bool { return st.Ceiling != ceiling || st.DayCeiling != day }
		if err := l.s.waitIn(ctx, horizon.PhasePaused, reason, raised, time.Hour); err != nil {
			return session{}, err
		}
	}
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
