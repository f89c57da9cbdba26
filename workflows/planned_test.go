package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// world scripts the activities of a planned run: the lead's plan and
// decompositions, and per feature the worker's reports, gate verdicts and
// audits (a feature without a script gets satisfied / pass / accept).
type world struct {
	t    *testing.T
	mu   sync.Mutex
	plan horizon.PlanBlock
	// parts is the lead's decomposition, by feature.
	parts   map[string]horizon.PlanBlock
	reports map[string][]*horizon.Report
	gates   map[string][]string
	audits  map[string][]string
	// trees and failing script a failing gate's tree and failing set, by
	// feature (default: a fresh tree per attempt, failing Test<feature>).
	trees   map[string][]string
	failing map[string][][]string
	// sessionErrs are errors the worker's sessions fail with, by feature
	// (a nil error: the session runs as scripted).
	sessionErrs map[string][]error
	// what happened
	briefs      map[string][]string
	commits     []string
	plans       []horizon.Plan
	decisions   []horizon.Decision
	handoffs    []horizon.Status
	integration int
	// pre, when set, is what preflight resolves (else one unmetered model).
	pre *activities.PreflightOutput
	// leads are the lead's sessions: "<feature> <model> <task queue>".
	leads []string
	// research are the researcher's calls; researchErr, when set, is what
	// they fail with.
	research    []activities.ResearchInput
	researchErr error
	// fullAudits are audits with findings and criteria, by feature (before
	// audits' bare verdicts); dispositions the lead's answers when asked
	// to decide findings, by feature.
	fullAudits   map[string][]*horizon.Audit
	dispositions map[string][][]horizon.Disposition
	// models are the worker sessions' models, by feature.
	models map[string][]string
}

func newWorld(t *testing.T, plan horizon.PlanBlock) *world {
	return &world{
		t: t, plan: plan, parts: map[string]horizon.PlanBlock{}, reports: map[string][]*horizon.Report{},
		gates: map[string][]string{}, audits: map[string][]string{}, briefs: map[string][]string{}, sessionErrs: map[string][]error{},
		trees: map[string][]string{}, failing: map[string][][]string{},
		fullAudits: map[string][]*horizon.Audit{}, dispositions: map[string][][]horizon.Disposition{}, models: map[string][]string{},
	}
}

// next pops a feature's scripted value, or returns def.
func next[T any](m map[string][]T, key string, def T) T {
	s := m[key]
	if len(s) == 0 {
		return def
	}
	m[key] = s[1:]
	return s[0]
}

func (w *world) env() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	registerRuns(e)
	e.RegisterWorkflowWithOptions(FeatureWorkflow, workflow.RegisterOptions{Name: FeatureWorkflowName})
	e.RegisterActivity(&activities.Activities{})
	pre := activities.PreflightOutput{
		Gate: ".horizon/verify.sh", Models: map[horizon.Role]string{horizon.RoleWorker: "fake/m", horizon.RoleAuditor: "fake/m"},
	}
	if w.pre != nil {
		pre = *w.pre
	}
	e.OnActivity(a.Preflight, mock.Anything, mock.Anything).Return(pre, nil)
	e.OnActivity(a.PrepareLane, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.LaneInput) (activities.Lane, error) {
		return activities.Lane{Path: "/lanes/run-1/" + in.Feature, Branch: horizon.LaneBranch(in.RunID, in.Feature), Base: "base-" + in.Feature}, nil
	})
	e.OnActivity(a.PrepareIntegration, mock.Anything, mock.Anything).Return(activities.Lane{Path: "/lanes/run-1/_integration", Base: "tip"}, nil)
	e.OnActivity(a.RunGate, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.GateInput) (horizon.GateRun, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		v := "pass"
		switch in.Feature {
		case "baseline":
		case "integration":
			w.integration++
			v = next(w.gates, "integration", "pass")
		default:
			v = next(w.gates, in.Feature, "pass")
		}
		g := horizon.GateRun{ReceiptID: fmt.Sprintf("r-%s-%d", in.Feature, in.Attempt), Verdict: v, Command: ".horizon/verify.sh", Tree: fmt.Sprintf("tree-%s-%d", in.Feature, in.Attempt)}
		if v != "pass" {
			g.ExitCode, g.Failing, g.Tail = 1, []string{"Test" + in.Feature}, "FAIL Test"+in.Feature
			g.FailingKnown = true
			g.Failing = next(w.failing, in.Feature, g.Failing)
			g.Tree = next(w.trees, in.Feature, g.Tree)
		}
		return g, nil
	})
	e.OnActivity(a.AgentSession, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.SessionInput) (activities.SessionOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		use := horizon.Usage{Input: 100, Output: 10, Cost: 0.01}
		switch in.Role {
		case "lead":
			w.leads = append(w.leads, fmt.Sprintf("%s %s %s", in.Feature, in.Model, activity.GetInfo(ctx).TaskQueue))
			if in.Purpose == activities.PurposeDispositions {
				w.briefs["lead "+in.Feature] = append(w.briefs["lead "+in.Feature], in.Prompt)
				return activities.SessionOutput{SessionID: "ses_lead_d", Dispositions: next(w.dispositions, in.Feature, nil), Usage: use}, nil
			}
			b := w.plan
			if in.Feature != "plan" {
				b = w.parts[in.Feature]
			}
			p, err := horizon.PlanFromBlock(in.Goal, b)
			if err != nil {
				return activities.SessionOutput{SessionID: "ses_lead", ProtocolError: err.Error(), Usage: use}, nil
			}
			return activities.SessionOutput{SessionID: "ses_lead", Plan: &p, Usage: use}, nil
		case "auditor":
			w.briefs["auditor "+in.Feature] = append(w.briefs["auditor "+in.Feature], in.Prompt)
			if au := next(w.fullAudits, in.Feature, nil); au != nil {
				return activities.SessionOutput{SessionID: "ses_a", Audit: au, Usage: use}, nil
			}
			return activities.SessionOutput{SessionID: "ses_a", Audit: &horizon.Audit{Verdict: horizon.AuditVerdict(next(w.audits, in.Feature, "accept"))}, Usage: use}, nil
		}
		if err := next(w.sessionErrs, in.Feature, nil); err != nil {
			return activities.SessionOutput{}, err
		}
		w.briefs[in.Feature] = append(w.briefs[in.Feature], in.Prompt)
		w.models[in.Feature] = append(w.models[in.Feature], in.Model)
		rep := next(w.reports, in.Feature, &horizon.Report{Status: "satisfied", Summary: "done"})
		if rep.Status == "" {
			return activities.SessionOutput{SessionID: "ses_w_" + in.Feature, ProtocolError: "protocol_error: no ```horizon-report block in the final message", Usage: use}, nil
		}
		return activities.SessionOutput{SessionID: "ses_w_" + in.Feature, Report: rep, Usage: use}, nil
	})
	e.OnActivity(a.Research, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ResearchInput) (activities.ResearchOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.research = append(w.research, in)
		if w.researchErr != nil {
			return activities.ResearchOutput{}, w.researchErr
		}
		return activities.ResearchOutput{
			Text: "Atoi takes no leading plus (https://pkg.go.dev/strconv).", Path: horizon.ResearchPath(in.RunID, in.Feature),
			Sources: []horizon.Source{{URL: "https://pkg.go.dev/strconv", OK: true}, {URL: "https://go.dev/doc", Error: "dial tcp: connection refused"}},
			Usage:   horizon.Usage{Input: 40, Output: 4, Cost: 0.003},
		}, nil
	})
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.CommitInput) (activities.CommitOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.commits = append(w.commits, in.Feature)
		return activities.CommitOutput{Commit: "c-" + in.Feature, Branch: horizon.IntegrationBranch(in.RunID)}, nil
	})
	e.OnActivity(a.SavePlan, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PlanArtifacts) (activities.PlanArtifactsOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.plans = append(w.plans, in.Plan)
		for _, d := range in.Decisions {
			require.NoError(w.t, d.Validate())
			require.Equal(w.t, len(w.decisions)+1, d.Seq, "decisions are numbered in order, each written once")
			w.decisions = append(w.decisions, d)
		}
		return activities.PlanArtifactsOutput{Decisions: len(w.decisions)}, nil
	})
	e.OnActivity(a.WriteHandoff, mock.Anything, mock.Anything).Return(func(_ context.Context, st horizon.RunState) (activities.HandoffOutput, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.handoffs = append(w.handoffs, st.Status)
		return activities.HandoffOutput{Path: "/runs/run-1/handoff.md"}, nil
	})
	return e
}

func (w *world) decided(what string) bool {
	for _, d := range w.decisions {
		if strings.Contains(d.What, what) {
			return true
		}
	}
	return false
}

func plannedInput() PlannedRunInput {
	return PlannedRunInput{RunBase: input().RunBase, Interval: 1}
}

func block(milestones ...horizon.PlanBlockMilestone) horizon.PlanBlock {
	return horizon.PlanBlock{Milestones: milestones, Ambiguity: "LOW", Assumptions: []string{"add.sh is POSIX sh"}}
}

func ms(title string, fs ...horizon.PlanBlockFeature) horizon.PlanBlockMilestone {
	return horizon.PlanBlockMilestone{Title: title, Features: fs}
}

func ft(id string, deps ...string) horizon.PlanBlockFeature {
	return horizon.PlanBlockFeature{ID: id, Title: "feature " + id, Acceptance: []string{id + " works"}, Kind: "bounded", DependsOn: deps}
}

func statuses(p *horizon.Plan) map[string]horizon.FeatureStatus {
	out := map[string]horizon.FeatureStatus{}
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			out[f.ID] = f.Status
		}
	}
	return out
}

func query(t *testing.T, e *testsuite.TestWorkflowEnvironment) horizon.RunState {
	t.Helper()
	v, err := e.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var s horizon.RunState
	require.NoError(t, v.Get(&s))
	return s
}

func planResult(t *testing.T, e *testsuite.TestWorkflowEnvironment) (*horizon.RunState, error) {
	return result(t, &env{TestWorkflowEnvironment: e})
}

// A three-feature plan over two milestones runs its features in order,
// each committed once, then the integration gate, then the handoff.
func TestPlanThreeFeaturesInOrder(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2", "f1")), ms("docs", ft("f3"))))
	w.audits["f2"] = []string{"reject", "accept"}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []string{"f1", "f2", "f3"}, w.commits, "in plan order, each once")
	require.Equal(t, map[string]horizon.FeatureStatus{"f1": horizon.FeatureAccepted, "f2": horizon.FeatureAccepted, "f3": horizon.FeatureAccepted}, statuses(s.Plan))
	f2, _ := s.Plan.Feature("f2")
	require.Equal(t, 2, f2.AttemptCount(), "the rejected attempt is kept")
	require.Equal(t, []string{"r-f2-1", "r-f2-2"}, f2.ReceiptIDs)
	require.Equal(t, "c-f2", f2.Commit)
	require.Contains(t, w.briefs["f2"][0], "Feature f2: feature f2")
	require.Contains(t, w.briefs["f2"][1], "Recovery strategy", "with interval 1 the second attempt has the next strategy")
	require.Equal(t, 1, w.integration)
	require.True(t, s.Integration.Passed())
	require.Equal(t, []horizon.Status{horizon.StatusCompleted}, w.handoffs)
	require.True(t, w.decided("planned 2 milestones, 3 features"))
	require.True(t, w.decided("assumed: add.sh is POSIX sh"))
	require.True(t, w.decided("integration gate passed"))
	last := w.plans[len(w.plans)-1]
	require.True(t, last.Done(), "plan.json ends with every feature accepted")
	// Usage: the lead's plan + 4 worker/auditor pairs.
	require.InDelta(t, 0.01+4*0.02, s.Usage.Cost, 1e-9)
}

// A feature that keeps failing goes through the strategies (interval 1:
// one attempt each), then the lead decomposes it and its parts succeed.
func TestPlanRotationThenDecomposition(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2", "f1"))))
	w.gates["f1"] = []string{"fail", "fail", "fail"}
	w.parts["f1"] = block(ms("parts of f1", ft("p1"), ft("p2", "p1")))
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, horizon.FeatureDecomposed, f1.Status)
	var strategies []horizon.Strategy
	for _, at := range f1.Attempts {
		strategies = append(strategies, at.Strategy)
	}
	require.Equal(t, []horizon.Strategy{horizon.StrategyFocusedCorrection, horizon.StrategyReplan, horizon.StrategyResearch}, strategies)
	require.Contains(t, w.briefs["f1"][1], "Recovery strategy: "+horizon.StrategyReplan.Title())
	require.Contains(t, w.briefs["f1"][2], "Recovery strategy: "+horizon.StrategyResearch.Title())
	require.Contains(t, w.briefs["f1"][1], "FAIL Testf1", "the failed attempt's evidence feeds the next")
	p2, _ := s.Plan.Feature("f1.2")
	require.Equal(t, []string{"f1.1"}, p2.DependsOn, "the parts' own order survives the renaming")
	require.Equal(t, []string{"f1.1", "f1.2", "f2"}, w.commits, "f2 waited for every part of f1")
	require.True(t, w.decided("decomposed f1 into f1.1, f1.2"))
	require.True(t, w.decided("recovery strategy for f1: "+horizon.StrategyResearch.Title()))
	require.Equal(t, 2, s.Plan.Revision)
}

// A typed blocker pauses its feature; an independent feature completes
// meanwhile; the run reads blocked once nothing is runnable; unblock with
// a note resumes the feature, whose next brief has the note.
func TestPlanBlockerPausesOneFeature(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"), ft("f3", "f1"))))
	w.reports["f1"] = []*horizon.Report{{Status: "blocked", Blocker: &horizon.Blocker{Type: "missing_credential", Evidence: "STRIPE_KEY is unset in the environment"}}}
	e := w.env()
	var waiting horizon.RunState
	var refused []error
	cb := &testsuite.TestUpdateCallback{OnReject: func(err error) { refused = append(refused, err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		waiting = query(t, e)
		e.UpdateWorkflow(UpdateUnblock, "wrong", cb, Unblock{Feature: "f2", Note: "x"})
		e.UpdateWorkflow(UpdateUnblock, "ok", cb, Unblock{Note: "STRIPE_KEY added to the daemon's environment"})
	}, time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusBlocked, waiting.Status)
	require.Equal(t, horizon.FeatureBlocked, statuses(waiting.Plan)["f1"])
	require.Equal(t, horizon.FeatureAccepted, statuses(waiting.Plan)["f2"], "the independent feature completed while f1 was blocked")
	require.Equal(t, horizon.FeaturePending, statuses(waiting.Plan)["f3"], "f3 depends on f1 and waits")
	require.Contains(t, waiting.Reason, "horizon unblock run-1 FEATURE")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].Error(), `"f2" is not blocked`)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, []string{"f2", "f1", "f3"}, w.commits)
	require.Contains(t, w.briefs["f1"][1], "STRIPE_KEY added to the daemon's environment")
	require.Equal(t, []horizon.Status{horizon.StatusBlocked, horizon.StatusCompleted}, w.handoffs)
	require.True(t, w.decided("paused f1 on a missing_credential blocker"))
	require.True(t, w.decided("unblocked f1"))
}

// Under semi autonomy the run waits before the second milestone until a
// person approves it; an approval naming another checkpoint is refused.
func TestPlanSemiWaitsAtMilestone(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1")), ms("docs", ft("f2"))))
	e := w.env()
	var waiting horizon.RunState
	var refused []error
	cb := &testsuite.TestUpdateCallback{OnReject: func(err error) { refused = append(refused, err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}
	e.RegisterDelayedCallback(func() {
		waiting = query(t, e)
		e.UpdateWorkflow(UpdateApprove, "wrong", cb, Approve{Subject: "m3"})
		e.UpdateWorkflow(UpdateApprove, "ok", cb, Approve{Subject: "m2", Note: "docs are fine to write"})
	}, time.Hour)
	in := plannedInput()
	in.Autonomy = horizon.AutonomySemi
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.NotNil(t, waiting.Waiting)
	require.Equal(t, horizon.CheckpointMilestone, waiting.Waiting.Kind)
	require.Equal(t, "m2", waiting.Waiting.Subject)
	require.Equal(t, "milestone m2 (docs): 1 feature", waiting.Waiting.Summary)
	require.Equal(t, horizon.PhaseApproval, waiting.Phase)
	require.Equal(t, horizon.FeatureAccepted, statuses(waiting.Plan)["f1"])
	require.Equal(t, horizon.FeaturePending, statuses(waiting.Plan)["f2"], "nothing of m2 ran before the approval")
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].Error(), `not "m3"`)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Nil(t, s.Waiting)
	require.True(t, w.decided("approved milestone m2"))

	// Nothing waits in full autonomy: approve is refused.
	w2 := newWorld(t, block(ms("core", ft("f1")), ms("docs", ft("f2"))))
	e2 := w2.env()
	var refused2 []error
	e2.RegisterDelayedCallback(func() {
		e2.UpdateWorkflow(UpdateApprove, "x", &testsuite.TestUpdateCallback{OnReject: func(err error) { refused2 = append(refused2, err) }, OnAccept: func() {}, OnComplete: func(any, error) {}}, Approve{})
	}, 0)
	e2.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s2, err := planResult(t, e2)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s2.Status)
	require.Len(t, refused2, 1)
	require.ErrorContains(t, refused2[0], "not waiting for approval")
}

// The run budget is the one hard stop: spend (a feature that never
// passes) and time (a checkpoint nobody approves) each end the run with a
// reason that says so, and a handoff.
func TestPlanBudgetStops(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	w.gates["f1"] = []string{"fail", "fail", "fail", "fail", "fail", "fail", "fail", "fail", "fail", "fail"}
	e := w.env()
	in := plannedInput()
	in.BudgetSpend = 0.05
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.Error(t, err)
	require.Equal(t, horizon.StatusFailed, s.Status)
	require.Equal(t, horizon.ReasonBudget, s.ReasonKind)
	require.Contains(t, s.Reason, "spend limit $0.0500 reached")
	f1, _ := s.Plan.Feature("f1")
	require.Equal(t, 4, f1.AttemptCount(), "plan $0.01 + four failing attempts of $0.01 reach $0.05")
	require.Empty(t, w.commits)
	require.Equal(t, []horizon.Status{horizon.StatusFailed}, w.handoffs)
	require.True(t, w.decided("stopped the run"))

	w2 := newWorld(t, horizon.PlanBlock{Milestones: []horizon.PlanBlockMilestone{ms("core", ft("f1"))}, Ambiguity: "HIGH"})
	e2 := w2.env()
	in2 := plannedInput()
	in2.Autonomy, in2.BudgetTime = horizon.AutonomySupervised, 2*time.Hour
	e2.ExecuteWorkflow(PlannedRunWorkflow, in2)
	s2, err := planResult(t, e2)
	require.Error(t, err)
	require.Equal(t, horizon.ReasonBudget, s2.ReasonKind)
	require.Contains(t, s2.Reason, "time limit 2h0m0s reached")
	require.Empty(t, w2.briefs, "no feature ran: the HIGH-ambiguity plan was never approved")
}

// Continue-as-new between features carries the plan, receipts, decisions
// and approvals; the next history does not redo an accepted feature. A
// run goes on as the type it runs as: a PlannedRunWorkflow as one, a
// planned run recorded as a RunWorkflow as a RunWorkflow with its
// RunInput.
func TestPlanContinueAsNewCarriesState(t *testing.T) {
	planned := plannedInput()
	planned.FeaturesPerHistory = 1
	legacy := planned.runInput()
	legacy.MaxAttempts = 3
	for _, tt := range []struct {
		name     string
		workflow any
		in       any
		// carried decodes the continue-as-new input and returns it with
		// its Carry.
		carried func(t *testing.T, decode func(any) error) (any, *Carry)
	}{
		{PlannedRunWorkflowName, PlannedRunWorkflow, planned, func(t *testing.T, decode func(any) error) (any, *Carry) {
			var next PlannedRunInput
			require.NoError(t, decode(&next))
			return next, next.Carry
		}},
		{RunWorkflowName, RunWorkflow, legacy, func(t *testing.T, decode func(any) error) (any, *Carry) {
			var next RunInput
			require.NoError(t, decode(&next))
			require.True(t, next.Planned)
			return next, next.Carry
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, block(ms("core", ft("f1"), ft("f2", "f1"))))
			e := w.env()
			e.ExecuteWorkflow(tt.workflow, tt.in)
			require.True(t, e.IsWorkflowCompleted())
			var can *workflow.ContinueAsNewError
			require.True(t, errors.As(e.GetWorkflowError(), &can), "got %v", e.GetWorkflowError())
			require.Equal(t, tt.name, can.WorkflowType.Name)
			next, carry := tt.carried(t, func(v any) error { return converter.GetDefaultDataConverter().FromPayloads(can.Input, v) })
			require.NotNil(t, carry)
			require.Equal(t, horizon.FeatureAccepted, statuses(carry.State.Plan)["f1"])
			require.Equal(t, 1, carry.Features)
			require.Equal(t, []string{"f1"}, w.commits)
			decisions := len(w.decisions)

			// The second history, with the carried input.
			e2 := w.env()
			e2.ExecuteWorkflow(tt.workflow, next)
			s, err := planResult(t, e2)
			require.NoError(t, err)
			require.Equal(t, horizon.StatusCompleted, s.Status)
			require.Equal(t, []string{"f1", "f2"}, w.commits, "f1 is not done twice")
			require.Equal(t, 1, s.Histories)
			require.NotNil(t, s.Baseline, "the baseline is carried, not rerun")
			require.Greater(t, len(w.decisions), decisions, "decision numbering continues")
			var app *temporal.ApplicationError
			require.False(t, errors.As(err, &app))
		})
	}
}

// Accepted features that break each other are caught by the gate on the
// integration branch: a repair feature is added and the run completes
// only once the gate passes there.
func TestPlanIntegrationGateAddsRepairFeature(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	w.gates["integration"] = []string{"fail", "pass"}
	e := w.env()
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, 2, w.integration)
	require.Equal(t, []string{"f1", "f2", "integration-1"}, w.commits)
	fix, ok := s.Plan.Feature("integration-1")
	require.True(t, ok)
	require.Contains(t, fix.Acceptance, "these checks pass again: Testintegration")
	require.True(t, w.decided("added feature integration-1"))

	// A gate that keeps failing there ends the run, said so.
	w2 := newWorld(t, block(ms("core", ft("f1"))))
	w2.gates["integration"] = []string{"fail", "fail", "fail"}
	e2 := w2.env()
	e2.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	s2, err := planResult(t, e2)
	require.Error(t, err)
	require.Equal(t, horizon.ReasonIntegration, s2.ReasonKind)
	require.Equal(t, 3, w2.integration)
	require.Equal(t, []horizon.Status{horizon.StatusFailed}, w2.handoffs)
}

// A model that never ends with a report block is not asked for ever: after
// maxProtocolErrors such attempts in a row the feature is blocked
// (platform_limit, the errors as evidence) and independent work goes on.
func TestPlanProtocolErrorsBlockTheFeature(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"), ft("f2"))))
	noBlock := &horizon.Report{} // the worker's final message had no report block
	for range maxProtocolErrors + 1 {
		w.reports["f1"] = append(w.reports["f1"], noBlock)
	}
	e := w.env()
	var waiting horizon.RunState
	e.RegisterDelayedCallback(func() { waiting = query(t, e); e.CancelWorkflow() }, time.Hour)
	e.ExecuteWorkflow(PlannedRunWorkflow, plannedInput())
	require.True(t, e.IsWorkflowCompleted())
	require.Len(t, w.briefs["f1"], maxProtocolErrors)
	require.Equal(t, horizon.StatusBlocked, waiting.Status)
	f1, _ := waiting.Plan.Feature("f1")
	require.Equal(t, horizon.FeatureBlocked, f1.Status)
	require.Equal(t, horizon.BlockerPlatformLimit, f1.Blocker.Type)
	require.Contains(t, f1.Blocker.Evidence, "without a valid horizon-report block")
	require.Equal(t, horizon.FeatureAccepted, statuses(waiting.Plan)["f2"])
}

// An attempt under the research recovery strategy runs on the research
// role's model of its tier, the attempts before it on the tier's build
// model.
func TestPlanResearchStrategyUsesTheResearchModel(t *testing.T) {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.gates["f1"] = []string{"fail", "fail"}
	tiers := ladder.Availability{}
	for k, v := range allTiers {
		tiers[k] = v
	}
	for _, tier := range []ladder.Tier{ladder.T1, ladder.T3} {
		r := tiers[tier]
		r.Research = r.Model + "-research"
		tiers[tier] = r
	}
	w.pre = &activities.PreflightOutput{
		Gate: ".horizon/verify.sh", Tiers: tiers,
		Models: map[horizon.Role]string{horizon.RoleWorker: "local/coder", horizon.RoleAuditor: "fake/m", horizon.RoleLead: "fake/m"},
	}
	e := w.env()
	in := plannedInput()
	in.Model = ""
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	f1, _ := s.Plan.Feature("f1")
	require.Len(t, f1.Attempts, 3)
	for i, at := range f1.Attempts {
		research := at.Strategy == horizon.StrategyResearch
		require.Equal(t, research, strings.HasSuffix(at.Model, "-research"), "attempt %d: strategy %s on %s", i+1, at.Strategy, at.Model)
	}
	require.Equal(t, horizon.StrategyResearch, f1.Attempts[2].Strategy)
}

// researchWorld is a one-feature plan whose gate fails twice, so that its
// third attempt (interval 1) runs under the research strategy, routed by
// the ladder with a research model on its tier.
func researchWorld(t *testing.T) *world {
	w := newWorld(t, block(ms("core", ft("f1"))))
	w.gates["f1"] = []string{"fail", "fail"}
	tiers := ladder.Availability{}
	for k, v := range allTiers {
		tiers[k] = v
	}
	for _, tier := range []ladder.Tier{ladder.T1, ladder.T3} {
		r := tiers[tier]
		r.Research = r.Model + "-research"
		tiers[tier] = r
	}
	w.pre = &activities.PreflightOutput{
		Gate: ".horizon/verify.sh", Tiers: tiers,
		Models: map[horizon.Role]string{horizon.RoleWorker: "local/coder", horizon.RoleAuditor: "fake/m", horizon.RoleLead: "fake/m"},
	}
	return w
}

// An attempt under the research strategy first runs the researcher, on
// the research model, with the last attempt's evidence; the worker's
// brief cites the notes' file and their sources, fetched or failed, and
// the attempt records them. The attempts before it run no research.
func TestPlanResearchStrategyRunsTheResearcher(t *testing.T) {
	w := researchWorld(t)
	e := w.env()
	in := plannedInput()
	in.Model = ""
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)

	require.Len(t, w.research, 1, "only the research attempt researches")
	r := w.research[0]
	require.Equal(t, "f1", r.Feature)
	require.Equal(t, 3, r.Attempt)
	require.True(t, strings.HasSuffix(r.Model, "-research"), r.Model)
	require.Contains(t, r.Task, "Feature f1: feature f1")
	require.NotNil(t, r.Prev)
	require.Equal(t, 2, r.Prev.N, "the research reads the last attempt's evidence")
	require.Equal(t, "/lanes/run-1/f1", r.Lane)

	require.Len(t, w.briefs["f1"], 3)
	for _, b := range w.briefs["f1"][:2] {
		require.NotContains(t, b, "Research notes")
	}
	brief := w.briefs["f1"][2]
	require.Contains(t, brief, "Recovery strategy: "+horizon.StrategyResearch.Title())
	require.Contains(t, brief, "## Research notes (runs/"+s.RunID+"/research/f1.md)")
	require.Contains(t, brief, "Atoi takes no leading plus")
	require.Contains(t, brief, "Sources: https://pkg.go.dev/strconv (fetched); https://go.dev/doc (failed: dial tcp: connection refused)")

	f1, _ := s.Plan.Feature("f1")
	at := f1.Attempts[2]
	require.Equal(t, &horizon.ResearchNote{Path: "runs/" + s.RunID + "/research/f1.md", Sources: []horizon.Source{
		{URL: "https://pkg.go.dev/strconv", OK: true}, {URL: "https://go.dev/doc", Error: "dial tcp: connection refused"},
	}}, at.Research)
	require.Equal(t, "runs/"+s.RunID+"/research/f1.md, 2 sources (1 fetched)", at.Research.Summary())
	require.Contains(t, at.Guidance, "Research notes")
	require.Greater(t, at.Usage.Cost, 0.003, "the research's cost is the attempt's")
	require.Nil(t, f1.Attempts[0].Research)
	require.Nil(t, f1.Attempts[1].Research)
}

// A research that fails on its own content (a session fault) does not
// stop the attempt: the worker goes on with the strategy's guidance, and
// the attempt says why it has no notes.
func TestPlanResearchThatFailsLeavesTheWorkerTheStrategy(t *testing.T) {
	w := researchWorld(t)
	w.researchErr = temporal.NewNonRetryableApplicationError("ContextOverflowError: too long", activities.ErrTypeSessionFailed, nil)
	e := w.env()
	in := plannedInput()
	in.Model = ""
	e.ExecuteWorkflow(PlannedRunWorkflow, in)
	s, err := planResult(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.Len(t, w.research, 1)
	require.Len(t, w.briefs["f1"], 3)
	require.Contains(t, w.briefs["f1"][2], "Recovery strategy: "+horizon.StrategyResearch.Title())
	require.NotContains(t, w.briefs["f1"][2], "Research notes")
	f1, _ := s.Plan.Feature("f1")
	require.NotNil(t, f1.Attempts[2].Research)
	require.Contains(t, f1.Attempts[2].Research.Error, "too long")
	require.Equal(t, horizon.OutcomeAccepted, f1.Attempts[2].Outcome)
}
