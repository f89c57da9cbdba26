package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// churn is a roadmap a person edits every day: lines in file order.
type churn struct{ lines []string }

func (c *churn) text() string { return strings.Join(c.lines, "\n") + "\n" }

func (c *churn) drop(id string) {
	c.lines = slices.DeleteFunc(c.lines, func(l string) bool { return strings.Contains(l, "{#"+id+"}") })
}

func (c *churn) tick(id string) {
	for i, l := range c.lines {
		if strings.Contains(l, "{#"+id+"}") {
			c.lines[i] = strings.Replace(l, "- [ ]", "- [x]", 1)
		}
	}
}

// historyCount counts the commands one history of the supervisor issues
// (its activities, children and timers): the test environment does not
// expose the event count, and each command costs a handful of events.
type historyCount struct{ activities, children, timers int }

func (h historyCount) commands() int { return h.activities + h.children + h.timers }

// TestSupervisorLivesThroughRoadmapChurn drives three months of a person
// editing the roadmap every day: three items added, one of them run, one
// removed and one ticked before the supervisor takes them up, details of
// the first rewritten, and old done items deleted. Every history stays
// small (continue-as-new within its loop bound), each kept item is
// decomposed and run exactly once, and removed or ticked ones never are.
func TestSupervisorLivesThroughRoadmapChurn(t *testing.T) {
	w := newRepoWorld(t, "")
	rm := &churn{lines: []string{"# Roadmap"}}
	in := supervisorInput()
	// Not a multiple of the fake run's hour, so the supervisor's own
	// timers are told apart from its runs'.
	in.Poll, in.LoopsPerHistory = 90*time.Minute, 100
	const days = 90
	day := 0
	var counts []historyCount
	for day < days {
		var s testsuite.WorkflowTestSuite
		e := w.env(&s)
		var h historyCount
		e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			if info.WorkflowType != nil && info.WorkflowType.Name == SupervisorWorkflowName {
				h.activities++
			}
		})
		e.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { h.children++ })
		e.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
			if d == in.Poll {
				h.timers++
			}
		})
		for d := 1; d <= 30; d++ {
			at := time.Duration(d)*24*time.Hour - 2*time.Hour
			// The person adds three items...
			e.RegisterDelayedCallback(func() {
				if day >= days {
					return
				}
				day++
				w.mu.Lock()
				defer w.mu.Unlock()
				rm.lines = append(rm.lines,
					fmt.Sprintf("- [ ] keep %d {#keep%d}", day, day), "  the first version of the details",
					fmt.Sprintf("- [ ] drop %d {#drop%d}", day, day),
					fmt.Sprintf("- [ ] tick %d {#tick%d}", day, day))
				if day > 3 {
					rm.drop(fmt.Sprintf("keep%d", day-3)) // done long ago: its record stays
				}
				w.roadmap = rm.text()
			}, at)
			// ...and a minute later, while the first is taken up, changes
			// their mind on the other two and rewrites the first's details.
			e.RegisterDelayedCallback(func() {
				w.mu.Lock()
				defer w.mu.Unlock()
				rm.drop(fmt.Sprintf("drop%d", day))
				rm.tick(fmt.Sprintf("tick%d", day))
				for i, l := range rm.lines {
					if l == "  the first version of the details" {
						rm.lines[i] = "  details rewritten"
					}
				}
				w.roadmap = rm.text()
			}, at+time.Minute)
		}
		e.ExecuteWorkflow(SupervisorWorkflowName, in)
		require.True(t, e.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		require.ErrorAs(t, e.GetWorkflowError(), &can, "history %d ends by continuing as new", len(counts)+1)
		var next SupervisorInput
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
		counts = append(counts, h)
		in = next
		require.Less(t, len(counts), 400, "no end in sight")
	}
	require.Greater(t, len(counts), 10, "three months span many histories")
	for i, h := range counts {
		// 100 loop turns, each at most a roadmap read, a timer, a sync and
		// a run with its landing: a few hundred commands, a few thousand
		// events, far below Temporal's 50K-event limit.
		require.LessOrEqual(t, h.commands(), 4*in.LoopsPerHistory, "history %d: %+v", i+1, h)
	}

	decomposed := map[string]int{}
	for _, g := range w.decomposed {
		decomposed[strings.SplitN(g, "\n", 2)[0]]++
	}
	for title, n := range decomposed {
		require.Equal(t, 1, n, "%s decomposed once", title)
		require.True(t, strings.HasPrefix(title, "keep "), "%s was removed or ticked before it was taken up", title)
	}
	ran := map[string]int{}
	for _, r := range w.runs {
		ran[r.Goal]++
	}
	for g, n := range ran {
		require.Equal(t, 1, n, "%s ran once", g)
	}
	require.GreaterOrEqual(t, len(ran), days-1, "every day's kept item ran (the last may still be under way)")
	done := 0
	for _, r := range in.Carry.Items {
		require.True(t, strings.HasPrefix(r.Item, "keep"), r.Item)
		if r.Stage == horizon.StageDone {
			done++
		}
	}
	require.GreaterOrEqual(t, done, days-1)
	require.LessOrEqual(t, len(in.Carry.Runs), 200, "the carried state stays bounded")
}

// leadOnce is the lead's planning step that fails once (the model provider
// hiccups) and answers on its retry.
type leadOnce struct{ calls int }

func (l *leadOnce) Plan(context.Context, string) (string, error) {
	l.calls++
	if l.calls == 1 {
		return "", errors.New("model provider: 503 Service Unavailable")
	}
	return "planned", nil
}

// A decomposition whose roadmap read and whose lead each fail once is
// retried where it failed: the child is started once, the item is
// decomposed once, queued once and run once.
func TestSupervisorDecompositionRetriedIsDecomposedOnce(t *testing.T) {
	w := newRepoWorld(t, "- [ ] only item\n")
	w.readErr = 1
	lead := &leadOnce{}
	w.leadStep = "TestLeadPlan"
	w.register = func(e *testsuite.TestWorkflowEnvironment) {
		e.RegisterActivityWithOptions(lead.Plan, activity.RegisterOptions{Name: "TestLeadPlan"})
	}
	var s testsuite.WorkflowTestSuite
	e := w.env(&s)
	children := 0
	e.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		if info.WorkflowType.Name == PlanWorkflowName {
			children++
		}
	})
	stopAfter(e, 6*time.Hour)
	e.ExecuteWorkflow(SupervisorWorkflowName, supervisorInput())
	st := supervisorResult(t, e)

	require.Zero(t, w.readErr, "the failed roadmap read was retried")
	require.Equal(t, 2, lead.calls, "the lead's failed call was retried")
	require.Equal(t, 1, children, "the decomposition started once")
	require.Len(t, w.decomposed, 1)
	require.Equal(t, 1, st.Decompositions)
	require.Len(t, w.runs, 1)
	rec, _ := st.Items.Find(horizon.RoadmapItemID("only item"))
	require.Equal(t, horizon.StageDone, rec.Stage)
}

// The daily pass's report activity fails once (a git lock): it is retried
// in the same pass, and the pass writes one report, tells the stalled run
// once and sends one daily_report event.
func TestDailyPassRetriedWritesOneReport(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	e := ts.NewTestWorkflowEnvironment()
	e.RegisterWorkflow(DailyPassWorkflow)
	e.RegisterActivity(&activities.Activities{})
	var s sent
	s.capture(e)
	calls, reports := 0, 0
	e.OnActivity(a.DailyReport, mock.Anything, mock.Anything).Return(func(context.Context, activities.DailyInput) (activities.DailyOutput, error) {
		calls++
		if calls == 1 {
			return activities.DailyOutput{}, errors.New("git: index.lock exists")
		}
		reports++
		return activities.DailyOutput{
			Date: "2026-12-01", Markdown: "/home/reports/2026-12-01.md", JSON: "/home/reports/2026-12-01.json", Summary: "1 landed, 1 stalled",
			Stalled: []horizon.Stall{{RunID: "run-7", Feature: "f2", Kind: horizon.StallKind("same_failing"), Attempts: 6}},
		}, nil
	})
	signals := 0
	e.OnSignalExternalWorkflow(mock.Anything, "run-7", "", SignalStalled, mock.Anything).Return(func(_, _, _, _ string, _ any) error {
		signals++
		return nil
	})
	e.ExecuteWorkflow(DailyPassWorkflow, DailyPassInput{StallAttempts: 6})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var out activities.DailyOutput
	require.NoError(t, e.GetWorkflowResult(&out))

	require.Equal(t, 2, calls, "the failed report was retried")
	require.Equal(t, 1, reports, "one report")
	require.Equal(t, "/home/reports/2026-12-01.md", out.Markdown)
	require.Equal(t, 1, signals, "the stalled run is told once")
	require.Equal(t, []string{"stalled 2026-12-01", "daily_report 2026-12-01"}, s.kinds())
}
