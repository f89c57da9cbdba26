package console

import (
	"context"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// Backend is everything the console reads from and does to horizon: the
// verbs of the core's App, which implements it; tests hand in a fake. The
// console never talks to the engine itself.
//
// Runs must be cheap (one visibility listing, no query per run): the
// console calls it every few seconds. Run reads one run's whole state and
// is called for the run a person looks at, and sparingly for the others
// (see Options).
type Backend interface {
	// Runs lists the runs of every repository, newest first.
	Runs(ctx context.Context, req core.ListRequest) ([]RunRow, error)
	// Run reads one run's state.
	Run(ctx context.Context, id string) (*core.RunView, error)

	// Approve lets a run waiting at checkpoint req.Subject go on; an
	// approval naming another checkpoint is refused, so a late key press
	// cannot pass the next one.
	Approve(ctx context.Context, req core.ApproveRequest) (*horizon.RunState, error)
	// Unblock puts a blocked feature ("" for a one-feature run) back in
	// line with the person's note, which its next attempt reads.
	Unblock(ctx context.Context, req core.UnblockRequest) (*horizon.RunState, error)
	// Skip leaves a planned run's feature out, as the person's decision
	// with their note (required), which the handoff shows; a running
	// feature is stopped first.
	Skip(ctx context.Context, req core.SkipRequest) (*horizon.RunState, error)
	// Pause holds a run before its next attempt; Resume lets it go on.
	Pause(ctx context.Context, id string) (*horizon.RunState, error)
	Resume(ctx context.Context, id string) (*horizon.RunState, error)
	// Cancel asks the engine to cancel a run; it stops in the background.
	Cancel(ctx context.Context, id string) error

	// AllSupervisors reads the supervisors: their queued plans that wait
	// for approval are needs like a run's checkpoint.
	AllSupervisors(ctx context.Context) ([]horizon.SupervisorState, error)
	// ApproveQueued lets a supervisor's queued plan run in its turn.
	ApproveQueued(ctx context.Context, req core.ApproveQueuedRequest) (*horizon.SupervisorState, error)

	// LoopRows and TaskRows list the loops and background tasks, which
	// the console shows beside the runs.
	LoopRows(ctx context.Context) ([]core.LoopRow, error)
	TaskRows(ctx context.Context) ([]core.TaskMeta, error)
}

// The core's App is the console's Backend.
var _ Backend = (*core.App)(nil)

// listedRuns is how many runs the console lists, as `horizon list` does.
const listedRuns = 50

// listRuns is the console's run list.
func listRuns(ctx context.Context, b Backend) ([]RunRow, error) {
	return b.Runs(ctx, core.ListRequest{Limit: listedRuns})
}

// readRun reads one run with the advisor's notes on it.
func readRun(ctx context.Context, b Backend, id string) (RunDetail, error) {
	v, err := b.Run(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	return RunDetail{State: v.State, Live: v.Live, Advice: NotesOf(v.State)}, nil
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
