package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/advisor"
	"github.com/horizon/horizon/horizon"
)

var deliveredConcern = horizon.AdviceRecord{ID: "r1.1", Review: 1, Severity: horizon.SeverityConcern, Delivered: horizon.SeverityConcern,
	Note: "loop.txt lacks a newline", Evidence: &horizon.AdviceEvidence{File: "loop.txt", Line: 1, ObservedFact: "`written`"},
	Verdict: horizon.AdviceDelivered, Confirmed: true, Message: "msg_1"}

// The advisor's watchdog beside a loop's activations (advisor.enabled):
// each activation is watched from its own prompt on, the judge's state
// goes from one watch to the next, the notes and their cost are the
// loop's, and a blocker that woke the session after a report has the
// activation wait for the turn that answers it.
func TestLoopAdvisor(t *testing.T) {
	cont := func(string) activities.LoopActivationOutput {
		return activities.LoopActivationOutput{Context: 100, Report: report(horizon.ReportContinue, "more"), Usage: horizon.Usage{Cost: 0.01}}
	}
	for _, tc := range []struct {
		name     string
		settings activities.AdvisorSettings
		plan     *activities.LoopPlan
		max      int
		// watch answers the watch of activation k; nil: never called.
		watch func(k int) activities.AdvisorOutput
		turn  func(k int, in activities.LoopActivationInput) activities.LoopActivationOutput
		check func(t *testing.T, w *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult)
	}{
		{
			name: "a delivered note is counted, its cost the loop's", max: 2,
			settings: activities.AdvisorSettings{Enabled: true, Model: "fake/adv", Timeout: time.Minute, ReviewInterval: 1},
			watch: func(k int) activities.AdvisorOutput {
				out := activities.AdvisorOutput{Usage: horizon.Usage{Cost: 0.002}, Transcript: "/home/runs/loop-1/transcripts/loop-activation-" + string(rune('0'+k)) + "-advice.md",
					Carry: &activities.AdvisorCarry{State: advisor.State{Reviews: k}, Earlier: []string{"review " + string(rune('0'+k))}}}
				if k == 1 {
					out.Records = []horizon.AdviceRecord{deliveredConcern, refutedNote}
				}
				return out
			},
			turn: func(k int, _ activities.LoopActivationInput) activities.LoopActivationOutput {
				out := cont("")
				if k == 2 {
					out.Report = report(horizon.ReportSatisfied, "done")
				}
				return out
			},
			check: func(t *testing.T, w *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult) {
				require.Len(t, watched, 2)
				for i, in := range watched {
					k := i + 1
					require.Equal(t, "fake/adv", in.Model)
					require.Equal(t, "fake/m", in.WorkerModel)
					require.Equal(t, "loop-1", in.RunID)
					require.Equal(t, k, in.Attempt)
					require.Equal(t, "GOAL: make it pass", in.Brief)
					require.Equal(t, "/lanes/_loops/loop-1", in.Lane)
					require.NotNil(t, in.Loop)
					require.Equal(t, activities.LoopSessionTitle("loop-1"), in.Loop.Title)
					require.Equal(t, horizon.LoopMarker("loop-1", k, 2), in.Loop.Turn)
					require.Equal(t, k, in.Loop.Activation)
				}
				require.Nil(t, watched[0].Loop.Carry)
				require.Equal(t, 1, watched[1].Loop.Carry.State.Reviews, "the second watch goes on from the first")
				require.Equal(t, []string{"review 1"}, watched[1].Loop.Carry.Earlier)

				require.Equal(t, horizon.LoopSatisfied, res.Status)
				require.Equal(t, &horizon.AdviceCounts{Delivered: 1, Refuted: 1}, res.Notes)
				require.Len(t, res.Advice, 2)
				require.Equal(t, activities.LoopAdvice{Activation: 1, File: "/home/runs/loop-1/transcripts/loop-activation-1-advice.md",
					Records: []horizon.AdviceRecord{deliveredConcern, refutedNote}}, res.Advice[0])
				require.Empty(t, res.Advice[1].Records)
				require.InDelta(t, 2*0.01+2*0.002, res.Cost, 1e-9, "the watchdog's reviews count toward the loop's spend")
				require.Equal(t, res.Notes, w.ends[0].Notes, "FinishLoop records the counts")
			},
		},
		{
			name: "a blocker woke the session after the report: its answer is the activation's", max: 1,
			settings: activities.AdvisorSettings{Enabled: true, Model: "fake/adv", Timeout: time.Minute},
			watch: func(int) activities.AdvisorOutput {
				return activities.AdvisorOutput{Records: []horizon.AdviceRecord{wokeBlocker}, WokeAfterReport: true}
			},
			turn: func(_ int, in activities.LoopActivationInput) activities.LoopActivationOutput {
				if in.Prior != nil {
					return activities.LoopActivationOutput{Report: report(horizon.ReportSatisfied, "fixed after the advice"), Usage: horizon.Usage{Cost: 0.004}}
				}
				return cont("")
			},
			check: func(t *testing.T, w *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult) {
				require.Len(t, watched, 1, "the answering turn is not watched again")
				require.Len(t, w.inputs, 2)
				require.Nil(t, w.inputs[0].Prior)
				require.Equal(t, &horizon.Usage{Cost: 0.01}, w.inputs[1].Prior)
				require.Equal(t, "ses_1", w.inputs[1].SessionID)
				require.Equal(t, 1, w.inputs[1].Activation, "the same activation: its marker finds the turn")
				require.Equal(t, horizon.LoopSatisfied, res.Status)
				require.Equal(t, 1, res.Activations)
				require.Equal(t, "fixed after the advice", res.Report.Summary)
				require.InDelta(t, 0.014, res.Cost, 1e-9)
				require.Equal(t, &horizon.AdviceCounts{Delivered: 1, Woke: 1}, res.Notes)
			},
		},
		{
			name: "no watchdog model: off, and said so", max: 1,
			settings: activities.AdvisorSettings{Enabled: true, Timeout: time.Minute},
			turn:     func(int, activities.LoopActivationInput) activities.LoopActivationOutput { return cont("") },
			check: func(t *testing.T, _ *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult) {
				require.Empty(t, watched)
				require.Equal(t, horizon.LoopLimitReached, res.Status)
				require.Len(t, res.Advice, 1)
				require.Equal(t, horizon.AdviceFailed, res.Advice[0].Records[0].Verdict)
				require.Contains(t, res.Advice[0].Records[0].Reason, "no advisor.watchdog_model and no analyze model")
				require.Equal(t, &horizon.AdviceCounts{Failed: 1}, res.Notes)
			},
		},
		{
			name: "the auditor's model reviews without advisor.watchdog_model", max: 1,
			settings: activities.AdvisorSettings{Enabled: true, Timeout: time.Minute},
			plan: &activities.LoopPlan{Agent: activities.AgentWorker, Model: "fake/m", Dir: "/lanes/_loops/loop-1", Branch: activities.LoopBranch("loop-1"),
				Base: "abc", ContextLimit: 100000, Review: "fake/analyze"},
			watch: func(int) activities.AdvisorOutput { return activities.AdvisorOutput{} },
			turn:  func(int, activities.LoopActivationInput) activities.LoopActivationOutput { return cont("") },
			check: func(t *testing.T, _ *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult) {
				require.Len(t, watched, 1)
				require.Equal(t, "fake/analyze", watched[0].Model)
				require.Equal(t, &horizon.AdviceCounts{}, res.Notes)
			},
		},
		{
			name: "advisor off: no watch, no advice in the results", max: 1,
			turn: func(int, activities.LoopActivationInput) activities.LoopActivationOutput { return cont("") },
			check: func(t *testing.T, _ *loopWorld, watched []activities.AdvisorInput, res activities.LoopResult) {
				require.Empty(t, watched)
				require.Nil(t, res.Notes)
				require.Empty(t, res.Advice)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &loopWorld{plan: tc.plan}
			w.turn = func(_ context.Context, k int) (activities.LoopActivationOutput, error) {
				w.mu.Lock()
				in := w.inputs[len(w.inputs)-1]
				w.mu.Unlock()
				return tc.turn(k, in), nil
			}
			e := w.env(t)
			var (
				mu      sync.Mutex
				watched []activities.AdvisorInput
			)
			e.OnActivity(a.AdvisorWatch, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.AdvisorInput) (activities.AdvisorOutput, error) {
					mu.Lock()
					defer mu.Unlock()
					watched = append(watched, in)
					require.NotNil(t, tc.watch, "no watch expected")
					return tc.watch(in.Loop.Activation), nil
				}).Maybe()
			in := loopIn(tc.max, false)
			in.Limits.Advisor = tc.settings
			e.ExecuteWorkflow(LoopWorkflowName, in)
			require.True(t, e.IsWorkflowCompleted())
			require.NoError(t, e.GetWorkflowError())
			var res activities.LoopResult
			require.NoError(t, e.GetWorkflowResult(&res))
			tc.check(t, w, watched, res)
		})
	}
}

// A loop's watchdog runs where the loop's session is, as a run's does:
// on the host queue of the worker that runs the activation, following the
// session when a retry runs it on another worker (the old watchdog
// cancelled, its move recorded first among the activation's notes; a late
// word of an earlier try and a retry on the same worker move nothing).
// An activation that never says where it runs is not watched, and the
// loop's results say why.
func TestLoopAdvisorWatchRunsOnSessionHost(t *testing.T) {
	stale := horizon.AdviceRecord{ID: "r1.1", Review: 1, Note: "from the lost worker", Verdict: horizon.AdviceDelivered}
	for _, tc := range []struct {
		name    string
		words   []hostWord
		watched []string // the queues a watchdog was scheduled on, in order
		advice  []horizon.AdviceRecord
	}{
		{
			name:    "on the session's worker",
			words:   []hostWord{{time.Minute, hostB, "horizon@b:2", 1}},
			watched: []string{hostB},
			advice:  []horizon.AdviceRecord{deliveredConcern},
		},
		{
			name:    "follows the session to another worker",
			words:   hostMoves,
			watched: []string{hostA, hostB},
			advice: []horizon.AdviceRecord{{ID: "r0", Verdict: horizon.AdviceFailed,
				Reason: "the watchdog moved with the activation from horizon@a:1 to horizon@b:2; its reviews on horizon@a:1 are not recorded"}, deliveredConcern},
		},
		{
			name:   "never told where the session runs",
			advice: []horizon.AdviceRecord{{ID: "r0", Verdict: horizon.AdviceFailed, Reason: "the watchdog never started: the activation did not say which worker ran it"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &loopWorld{untold: true, after: 10 * time.Minute}
			w.turn = func(context.Context, int) (activities.LoopActivationOutput, error) {
				return activities.LoopActivationOutput{Report: report(horizon.ReportSatisfied, "done"), Usage: horizon.Usage{Cost: 0.01}}, nil
			}
			e := w.env(t)
			started, last := watchHosts(e, activities.LoopFeature, 1, tc.words, stale, deliveredConcern)
			in := loopIn(1, false)
			in.Limits.Advisor = activities.AdvisorSettings{Enabled: true, Model: "fake/adv", Timeout: time.Minute}
			e.ExecuteWorkflow(LoopWorkflowName, in)
			require.True(t, e.IsWorkflowCompleted())
			require.NoError(t, e.GetWorkflowError())
			var res activities.LoopResult
			require.NoError(t, e.GetWorkflowResult(&res))
			require.Equal(t, horizon.LoopSatisfied, res.Status)
			require.Len(t, w.inputs, 1)
			require.True(t, w.inputs[0].Watched, "the activation is told to say where it runs")
			require.Equal(t, tc.watched, *started, "the queues the watchdogs were scheduled on")
			if len(tc.watched) > 0 {
				require.Equal(t, hostB, last(), "the last watchdog ran on the session's worker")
			}
			require.Len(t, res.Advice, 1)
			require.Equal(t, 1, res.Advice[0].Activation)
			require.Equal(t, tc.advice, res.Advice[0].Records)
		})
	}
}
