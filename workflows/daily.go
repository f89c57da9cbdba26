package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// DecomposeInput is the nightly schedule's action: ask one supervisor to
// decompose roadmap items ahead.
type DecomposeInput struct {
	Supervisor string
	Ahead      int
}

// DecomposeWorkflow signals the supervisor to decompose ahead. The
// supervisor itself decomposes, so an item is still decomposed at most
// once however often the schedule fires or this is retried.
func DecomposeWorkflow(ctx workflow.Context, in DecomposeInput) error {
	return workflow.SignalExternalWorkflow(ctx, in.Supervisor, "", SignalDecompose, max(in.Ahead, 1)).Get(ctx, nil)
}

// DailyPassInput is the daily schedule's action.
type DailyPassInput struct {
	StallAttempts int
	DayCeiling    float64
}

// StalledSignal flags a run whose goal has burned attempts without
// progress (SignalStalled); the run keeps going, the flag is for a person.
type StalledSignal struct {
	Stalls []horizon.Stall
}

// DailyPassWorkflow writes the daily report and flags stalled goals: each
// stalled run is told (it shows the flag in status and the HorizonStalled
// search attribute), and so is its supervisor (the roadmap item reads
// stalled). Signals to runs that ended meanwhile are dropped.
func DailyPassWorkflow(ctx workflow.Context, in DailyPassInput) (*activities.DailyOutput, error) {
	var out activities.DailyOutput
	if err := execute(ctx, gitOptions("daily report"), a.DailyReport, activities.DailyInput{
		Until: workflow.Now(ctx), StallAttempts: in.StallAttempts, DayCeiling: in.DayCeiling,
	}, &out); err != nil {
		return nil, err
	}
	var runs []string
	byRun := map[string][]horizon.Stall{}
	for _, s := range out.Stalled {
		if _, ok := byRun[s.RunID]; !ok {
			runs = append(runs, s.RunID)
		}
		byRun[s.RunID] = append(byRun[s.RunID], s)
	}
	for _, id := range runs {
		_ = workflow.SignalExternalWorkflow(ctx, id, "", SignalStalled, StalledSignal{Stalls: byRun[id]}).Get(ctx, nil)
	}
	return &out, nil
}
