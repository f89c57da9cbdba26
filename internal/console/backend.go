package console

import (
	"context"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/core"
)

// Backend is everything the console reads from and does to horizon. The
// console never talks to the engine itself: cmd/horizon adapts the one
// core the surfaces share to this interface, and tests hand in a fake.
//
// Runs must be cheap (one visibility listing, no query per run): the
// console calls it every few seconds. Run reads one run's whole state and
// is called for the run a person looks at, and sparingly for the others
// (see Options).
type Backend interface {
	// Runs lists the runs of every repository, newest first.
	Runs(ctx context.Context) ([]RunRow, error)
	// Run reads one run's state, advisor notes included when there are any.
	Run(ctx context.Context, id string) (RunDetail, error)

	// Approve lets a run waiting at checkpoint subject go on; an approval
	// naming another checkpoint is refused, so a late key press cannot
	// pass the next one.
	Approve(ctx context.Context, id, subject, note string) (*horizon.RunState, error)
	// Unblock puts a blocked feature ("" for a one-feature run) back in
	// line with the person's note, which its next attempt reads.
	Unblock(ctx context.Context, id, feature, note string) (*horizon.RunState, error)
	// Pause holds a run before its next attempt; Resume lets it go on.
	Pause(ctx context.Context, id string) (*horizon.RunState, error)
	Resume(ctx context.Context, id string) (*horizon.RunState, error)
	// Cancel asks the engine to cancel a run; it stops in the background.
	Cancel(ctx context.Context, id string) error

	// Supervisors reads the running supervisors: their queued plans that
	// wait for approval are needs like a run's checkpoint.
	Supervisors(ctx context.Context) ([]horizon.SupervisorState, error)
	// ApproveQueued lets supervisor's queued plan entry run in its turn.
	ApproveQueued(ctx context.Context, supervisor, entry string) error
}

// RunRow is a run as the engine lists it: the core's one run row.
type RunRow = core.RunRow

// RunDetail is one run's state as its status query (or its result, once
// closed) gives it.
type RunDetail struct {
	State *horizon.RunState
	// Live is false when the run is open but no worker answered: the
	// daemon is down, the state is what the engine's records say.
	Live bool
	// Advice holds an advisor's review notes on the run, when it has any.
	Advice []AdvisorNote
}

// AdvisorNote is one of an advisor's notes, on a feature of the run ("":
// the run as a whole).
type AdvisorNote struct {
	Feature string
	horizon.AdviceNote
}
