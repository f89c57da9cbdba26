package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
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
	notifyDaily(ctx, out, runs, byRun)
	return &out, nil
}

// notifyDaily tells a person that the report is written (with its path)
// and, per run, what stalled. The report's date is the subject: a retried
// or re-run pass for the same day resends the same event IDs.
func notifyDaily(ctx workflow.Context, out activities.DailyOutput, runs []string, byRun map[string][]horizon.Stall) {
	for _, id := range runs {
		var lines []string
		for _, s := range byRun[id] {
			what := "the run"
			if s.Feature != "" {
				what = "feature " + s.Feature
			}
			lines = append(lines, fmt.Sprintf("%s: %s after %d attempts", what, s.Kind, s.Attempts))
		}
		var goal string
		if ss := byRun[id]; len(ss) > 0 {
			goal = ss[0].Goal
		}
		sendNotify(ctx, activities.NotifyInput{
			Kind: notify.Stalled, RunID: id, Subject: out.Date, Title: goal,
			Text:    fmt.Sprintf("run %s%s is stalled: %s (daily report %s)", id, activities.Named(goal), strings.Join(lines, "; "), out.Markdown),
			Details: map[string]string{"report": out.Markdown},
		})
	}
	text := "daily report " + out.Date + ": " + out.Markdown
	if out.Summary != "" {
		text = out.Summary + "\n" + text
	}
	sendNotify(ctx, activities.NotifyInput{
		Kind: notify.DailyReport, Subject: out.Date, Text: text, Title: out.Date,
		Details: map[string]string{"report": out.Markdown, "json": out.JSON, "date": out.Date},
	})
}
