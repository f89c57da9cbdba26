package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// RunInput starts a run. Limits are captured here, at start, so that a
// configuration change on the daemon does not alter a run in flight.
type RunInput struct {
	RunID      string
	Goal       string
	Repo       string
	BaseRef    string
	BaseCommit string
	// Model, when set, serves every role; otherwise Preflight resolves
	// each role from the leaderboard (ModelsFile, or the bundled one).
	Model       string
	ModelsFile  string
	MaxAttempts int
	Limits      Limits
	// Ceiling is the run's spend ceiling in USD (0: none); DayCeiling bounds
	// all runs' spend per UTC day (0: none); ThrottleAt is the fraction of a
	// ceiling from which only local tiers are used.
	Ceiling    float64
	DayCeiling float64
	ThrottleAt float64
	// Kind is the card's kind for the ladder: mechanical, bounded or open.
	Kind string
	// SearchAttributes says the namespace has HorizonRepo and HorizonStatus:
	// the run keeps HorizonStatus current.
	SearchAttributes bool
	// PaidQueue is the task queue of metered agent sessions; its pollers
	// run one activity at a time, so across all runs only one paid call is
	// in flight. Empty: sessions use the run's own queue.
	PaidQueue string

	// Planned makes the lead plan the goal into milestones and features,
	// each run by a FeatureWorkflow child; otherwise the goal is one
	// feature (the verified-change loop runs here, up to MaxAttempts).
	Planned bool
	// Autonomy says where a planned run waits for `horizon approve`.
	Autonomy horizon.Autonomy
	// Interval is recovery_escalation_interval: attempts per recovery
	// strategy before the next one is tried (0: the default).
	Interval int
	// BudgetTime and BudgetSpend are the planned run's hard stop (0: none).
	BudgetTime  time.Duration
	BudgetSpend float64
	// FeaturesPerHistory, when positive, continues the run as new after
	// that many features in one history (besides when Temporal suggests
	// it); it keeps histories short and lets tests cross the boundary.
	FeaturesPerHistory int
	// Carry is the state carried across continue-as-new.
	Carry *Carry

	// Plan, when set, is the run's plan, made ahead by the lead (a
	// supervisor's decomposition of a roadmap item): the run skips its own
	// planning. PlanApproved says a person approved it already.
	Plan         *horizon.Plan
	PlanApproved bool
	// Supervisor is the workflow ID of the supervisor that started the
	// run: the run tells it of each status change (SignalRunStatus).
	Supervisor string
}

// Limits bound the run's activities.
type Limits struct {
	SessionTimeout   time.Duration
	HeartbeatTimeout time.Duration
	GateTimeout      time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.SessionTimeout <= 0 {
		l.SessionTimeout = 45 * time.Minute
	}
	if l.HeartbeatTimeout <= 0 {
		l.HeartbeatTimeout = 30 * time.Second
	}
	if l.GateTimeout <= 0 {
		l.GateTimeout = 10 * time.Minute
	}
	return l
}

// Activity options, stated once. Agent sessions heartbeat their session ID:
// after a crash the retry continues that session. Bad input is never
// retried. Gate runs retry only on infrastructure errors (a red gate is a
// result, not an error).
func sessionOptions(l Limits, summary, queue string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: l.SessionTimeout,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // let the activity abort the OpenCode session
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel},
		},
	}
}

func gateOptions(l Limits, summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: l.GateTimeout + time.Minute,
		HeartbeatTimeout:    l.HeartbeatTimeout,
		WaitForCancellation: true, // the gate's process group is killed before the run ends
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput},
		},
	}
}

// gitHeartbeat is the heartbeat timeout of the activities under
// gitOptions: they heartbeat while they run (activities.keepAlive), so a
// daemon that dies during one (a lane commit, plan.json) has it retried
// after this, not after the whole start-to-close timeout. Replay does not
// compare activity options, so runs in flight are unaffected.
const gitHeartbeat = 30 * time.Second

func gitOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    gitHeartbeat,
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadInput, activities.ErrTypeUnknownModel, activities.ErrTypeNoChanges},
		},
	}
}

// RunWorkflow drives one goal as a single feature through the verified-change
// loop: lane → worker → gate → auditor → commit, with each failed attempt's
// evidence handed to the next, up to MaxAttempts.
func RunWorkflow(ctx workflow.Context, in RunInput) (*horizon.RunState, error) {
	r := &run{in: in, limits: in.Limits.withDefaults(), dayCeiling: in.DayCeiling, indexed: horizon.StatusRunning}
	r.state = horizon.RunState{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseRef: in.BaseRef, BaseCommit: in.BaseCommit,
		Branch: horizon.IntegrationBranch(in.RunID), Feature: DefaultFeature, Model: in.Model,
		MaxAttempts: in.MaxAttempts, Status: horizon.StatusRunning, Phase: horizon.PhasePreflight,
		StartedAt: workflow.Now(ctx), UpdatedAt: workflow.Now(ctx), Attempts: []horizon.Attempt{},
	}
	if r.state.MaxAttempts < 1 {
		r.state.MaxAttempts = 1
	}
	r.state.Ceiling, r.state.DayCeiling = in.Ceiling, in.DayCeiling
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (*horizon.RunState, error) { return &r.state, nil }); err != nil {
		return nil, fmt.Errorf("register status query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetCeiling,
		func(ctx workflow.Context, usd float64) (*horizon.RunState, error) {
			r.state.Ceiling = usd
			r.forward(ctx)
			r.publish(ctx)
			return &r.state, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(usd float64) error {
			if usd < 0 {
				return fmt.Errorf("ceiling %g: must be 0 (none) or positive", usd)
			}
			if usd != 0 && usd <= r.state.Usage.Cost {
				return fmt.Errorf("ceiling $%.4f is not above what the run has spent ($%.4f)", usd, r.state.Usage.Cost)
			}
			return nil
		}},
	); err != nil {
		return nil, fmt.Errorf("register set-ceiling update: %w", err)
	}
	for _, u := range []struct {
		name   string
		paused bool
	}{{UpdatePause, true}, {UpdateResume, false}} {
		paused := u.paused
		if err := workflow.SetUpdateHandler(ctx, u.name, func(ctx workflow.Context) (*horizon.RunState, error) {
			r.state.Paused = paused
			r.forward(ctx)
			r.publish(ctx)
			return &r.state, nil
		}); err != nil {
			return nil, fmt.Errorf("register %s update: %w", u.name, err)
		}
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateUnblock,
		func(ctx workflow.Context, u Unblock) (*horizon.RunState, error) {
			if r.pl != nil {
				r.unblockPlanned(ctx, u)
				return &r.state, nil
			}
			r.state.Blocker = nil
			r.unblockNote = fmt.Sprintf("A person unblocked this feature (it was blocked: %s). Their note: %s", r.state.Reason, u.Note)
			r.publish(ctx)
			return &r.state, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(u Unblock) error {
			if r.pl != nil {
				if strings.TrimSpace(u.Note) == "" {
					return errors.New("a note is required: say what changed (a credential added, a service back) so the next attempt knows")
				}
				_, err := r.unblockFeature(u)
				return err
			}
			if r.state.Blocker == nil {
				return fmt.Errorf("run %s is not blocked", r.state.RunID)
			}
			if u.Feature != "" && u.Feature != r.state.Feature {
				return fmt.Errorf("feature %q: this run's feature is %s", u.Feature, r.state.Feature)
			}
			if strings.TrimSpace(u.Note) == "" {
				return errors.New("a note is required: say what changed (a credential added, a service back) so the next attempt knows")
			}
			return nil
		}},
	); err != nil {
		return nil, fmt.Errorf("register unblock update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetDayCeiling,
		func(ctx workflow.Context, usd float64) (*horizon.RunState, error) {
			r.dayCeiling, r.state.DayCeiling = usd, usd
			r.forward(ctx)
			r.publish(ctx)
			return &r.state, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(usd float64) error {
			if usd < 0 {
				return fmt.Errorf("daily ceiling %g: must be 0 (none) or positive", usd)
			}
			return nil
		}},
	); err != nil {
		return nil, fmt.Errorf("register set-day-ceiling update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove,
		func(ctx workflow.Context, ap Approve) (*horizon.RunState, error) {
			r.approve(ctx, ap)
			r.publish(ctx)
			return &r.state, nil
		},
		workflow.UpdateHandlerOptions{Validator: r.approveCheck},
	); err != nil {
		return nil, fmt.Errorf("register approve update: %w", err)
	}
	r.publish(ctx)
	if in.Planned {
		r.pl = &planner{}
		return r.planned(ctx)
	}
	return r.loop(ctx)
}

type run struct {
	in     RunInput
	limits Limits
	state  horizon.RunState
	models map[string]string   // role → provider/model, from preflight
	paid   map[string]bool     // role → its model is metered
	tiers  ladder.Availability // nil for runs from before the ladder
	// dayCeiling is the daily ceiling, from the input or set-ceiling --day.
	dayCeiling float64
	// localContext is the local model's context window (0: unknown).
	localContext int
	// indexed is the status last written to the HorizonStatus attribute.
	indexed horizon.Status
	// unblockNote is a person's unblock note, handed to the next attempt.
	unblockNote string

	// A feature of a planned run (FeatureWorkflow) also has:
	feature string   // its ID ("": DefaultFeature)
	task    string   // its brief text ("": the goal)
	title   string   // its commit subject ("": the goal's first line)
	paths   []string // its allow-list, for the ladder's card
	prior   float64  // what the run spent before this feature
	child   bool     // a typed blocker ends the feature workflow instead of waiting
	blocked *horizon.Blocker
	// featureIn is the feature as the run handed it over; setup is what
	// preflight resolved (the lead's model, for decompositions).
	featureIn horizon.Feature
	setup     *Setup

	// A planned run (RunWorkflow with Planned) has:
	pl *planner
}

func (r *run) fid() string {
	if r.feature != "" {
		return r.feature
	}
	return DefaultFeature
}

func (r *run) taskText() string {
	if r.task != "" {
		return r.task
	}
	return r.in.Goal
}

// spent is the run's spend so far, as ceilings and the ladder see it.
func (r *run) spent() float64 { return r.prior + r.state.Usage.Cost }

// queue is the task queue for a role's sessions: the paid queue for
// metered models, the run's own otherwise ("" means the workflow's queue).
func (r *run) queue(role string) string {
	if r.paid[role] && r.in.PaidQueue != "" {
		return r.in.PaidQueue
	}
	return ""
}

var a *activities.Activities

func (r *run) loop(ctx workflow.Context) (*horizon.RunState, error) {
	st := &r.state
	var pre activities.PreflightOutput
	if err := r.exec(ctx, gitOptions("preflight: repo, gate, models"), a.Preflight, activities.PreflightInput{
		RunID: r.in.RunID, Repo: r.in.Repo, BaseCommit: r.in.BaseCommit, Model: r.in.Model, ModelsFile: r.in.ModelsFile,
	}, &pre); err != nil {
		return r.fail(ctx, err)
	}
	r.models = pre.Models
	if r.models == nil { // a history from before role resolution
		r.models = map[string]string{"worker": r.in.Model, "auditor": r.in.Model}
	}
	st.Models, st.Model = r.models, r.models["worker"]
	r.paid = pre.Paid
	r.tiers, r.localContext = pre.Tiers, pre.LocalContext

	r.phase(ctx, horizon.PhaseLane)
	var lane activities.Lane
	if err := r.exec(ctx, gitOptions("lane "+DefaultFeature), a.PrepareLane, activities.LaneInput{
		RunID: r.in.RunID, Feature: DefaultFeature, Repo: r.in.Repo, BaseCommit: r.in.BaseCommit,
	}, &lane); err != nil {
		return r.fail(ctx, err)
	}
	st.Lane, st.LaneBranch = lane.Path, lane.Branch

	// The baseline tells pre-existing failures from regressions. Runs
	// started before it existed replay without it.
	if workflow.GetVersion(ctx, changeBaselineGate, workflow.DefaultVersion, 1) >= 1 {
		r.phase(ctx, horizon.PhaseBaseline)
		var baseline horizon.GateRun
		if err := r.exec(ctx, gateOptions(r.limits, "baseline gate · "+DefaultFeature), a.RunGate, activities.GateInput{
			RunID: r.in.RunID, Feature: DefaultFeature, Attempt: 0, Repo: r.in.Repo, Lane: lane.Path, BaseCommit: r.in.BaseCommit, Timeout: r.limits.GateTimeout,
		}, &baseline); err != nil {
			return r.fail(ctx, err)
		}
		st.Baseline = &baseline
	}

	for n := 1; n <= st.MaxAttempts; {
		if err := r.holdIfPaused(ctx); err != nil {
			return r.fail(ctx, err)
		}
		if err := r.underCeiling(ctx); err != nil {
			return r.fail(ctx, err)
		}
		prev, guidance := r.previous()
		if r.unblockNote != "" {
			guidance = strings.TrimSpace(r.unblockNote + "\n\n" + guidance)
			r.unblockNote = ""
		}
		attempted, done, err := r.step(ctx, n, lane, prev, guidance, "")
		if attempted {
			n++
		}
		if err != nil {
			return r.fail(ctx, err)
		}
		if done {
			return r.finish(ctx)
		}
		if attempted {
			r.publish(ctx)
		}
	}
	st.End(horizon.StatusFailed, horizon.ReasonMaxAttempts, fmt.Sprintf("no accepted change after %d attempts", st.MaxAttempts), workflow.Now(ctx))
	r.handoff(ctx)
	r.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunFailed, nil, *st)
}

// step routes and runs attempt n (or a retrieval step before it, which
// returns attempted=false). done is true once the change is committed or
// the run must stop (blocked).
func (r *run) step(ctx workflow.Context, n int, lane activities.Lane, prev *horizon.Attempt, guidance string, strategy horizon.Strategy) (attempted, done bool, err error) {
	st := &r.state
	p := plan{model: r.models["worker"], queue: r.queue("worker"), applier: activities.ApplierOpenCode}
	if r.tiers != nil {
		dec, err := r.route(ctx)
		if err != nil {
			return false, false, err
		}
		if dec.Action == ladder.ActionRetrieve {
			return false, false, r.retrieve(ctx, n, lane, prev, dec)
		}
		p = plan{routed: true, tier: dec.Tier, model: dec.Model, applier: dec.Applier, reason: dec.Reason}
		if dec.Tier.Paid() {
			p.queue = r.in.PaidQueue
		}
	}
	at := horizon.Attempt{
		N: n, Applier: p.applier, Route: p.reason, Model: p.model, Guidance: guidance, Strategy: strategy,
		Outcome: horizon.OutcomeRunning, StartedAt: workflow.Now(ctx),
	}
	if p.routed {
		at.Tier = p.tier.String()
	}
	st.Attempts = append(st.Attempts, at)
	done, err = r.attempt(ctx, n, lane, prev, p)
	cur := st.Current()
	cur.EndedAt = workflow.Now(ctx)
	if err == nil {
		cur.Triggers = triggers(r.card(), st.Baseline, prev, cur, r.localContext)
	}
	st.Recount()
	return true, done, err
}

// attempt runs worker → gate → auditor (→ commit). It returns done=true once
// the change is committed, or once the run must stop (blocked).
func (r *run) attempt(ctx workflow.Context, n int, lane activities.Lane, prev *horizon.Attempt, p plan) (bool, error) {
	st := &r.state
	cur := func() *horizon.Attempt { return st.Current() }

	r.phase(ctx, horizon.PhaseWorking)
	if p.routed && p.tier == ladder.T0 {
		// Deterministic codemods: no model, no session; the gate and the
		// auditor judge the result like any other attempt.
		var cm activities.CodemodOutput
		if err := r.exec(ctx, gitOptions(fmt.Sprintf("codemods · %s · attempt %d", r.fid(), n)), a.Codemod, activities.CodemodInput{
			RunID: r.in.RunID, Attempt: n, Lane: lane.Path,
		}, &cm); err != nil {
			return false, err
		}
		c := cur()
		c.Report = &horizon.Report{Status: "satisfied", Summary: fmt.Sprintf("codemods made %d changes in %d files", cm.Applied, len(cm.Files))}
		if len(cm.Problems) > 0 {
			c.Report.Summary += "; skipped: " + strings.Join(cm.Problems, "; ")
		}
	} else {
		guidance := cur().Guidance
		if p.routed && p.tier == ladder.T2 {
			var d activities.DiagnoseOutput
			if err := r.exec(ctx, sessionOptions(r.limits, fmt.Sprintf("reader · %s · attempt %d", r.fid(), n), r.in.PaidQueue), a.Diagnose, activities.DiagnoseInput{
				RunID: r.in.RunID, Attempt: n, Goal: r.in.Goal, Lane: lane.Path, BaseCommit: r.in.BaseCommit, Prev: prev,
			}, &d); err != nil {
				return false, err
			}
			c := cur()
			c.Guidance, c.Usage = d.Text, c.Usage.Add(d.Usage)
			guidance = d.Text
		}
		var work activities.SessionOutput
		err := r.exec(ctx, sessionOptions(r.limits, fmt.Sprintf("worker · %s · attempt %d · %s", r.fid(), n, p.model), p.queue), a.AgentSession, activities.SessionInput{
			RunID: r.in.RunID, Feature: r.fid(), Attempt: n, Role: "worker", Lane: lane.Path, BaseCommit: r.in.BaseCommit,
			Model: p.model, Prompt: horizon.WorkerBrief(r.taskText(), n, st.MaxAttempts, prev, guidance),
		}, &work)
		if err != nil {
			return false, err
		}
		c := cur()
		c.WorkerSession, c.Resumed, c.Report, c.ProtocolError = work.SessionID, work.Resumed, work.Report, work.ProtocolError
		c.Usage = c.Usage.Add(work.Usage)
		if work.ProtocolError != "" {
			c.Outcome = horizon.OutcomeProtocolError
			return false, nil
		}
	}
	c := cur()
	if rep := c.Report; rep != nil && rep.Status == "blocked" {
		// Only a typed blocker with concrete evidence stops the run; any
		// other claim of being blocked is recorded and the gate decides.
		b, err := horizon.CheckReportBlocker(*rep)
		if err == nil {
			c.Outcome = horizon.OutcomeBlocked
			if r.child {
				// A planned run's feature hands the blocker to the run,
				// which goes on with the features that do not depend on it.
				r.blocked = &b
				return true, nil
			}
			// A typed blocker pauses the feature, it does not fail it: the
			// run waits (costing nothing) for a person to unblock it.
			if werr := r.waitUnblocked(ctx, b); werr != nil {
				return false, werr
			}
			return false, nil
		}
		rep.Summary = strings.TrimSpace(rep.Summary + " (blocker not accepted: " + err.Error() + ")")
	}

	r.phase(ctx, horizon.PhaseGate)
	var gateRun horizon.GateRun
	if err := r.exec(ctx, gateOptions(r.limits, fmt.Sprintf("gate · %s · attempt %d", r.fid(), n)), a.RunGate, activities.GateInput{
		RunID: r.in.RunID, Feature: r.fid(), Attempt: n, Repo: r.in.Repo, Lane: lane.Path, BaseCommit: r.in.BaseCommit, Timeout: r.limits.GateTimeout,
	}, &gateRun); err != nil {
		return false, err
	}
	c = cur()
	c.Gate = &gateRun
	if !gateRun.Passed() {
		c.Outcome = horizon.OutcomeGateFailed
		return false, nil
	}

	r.phase(ctx, horizon.PhaseAudit)
	var audit activities.SessionOutput
	if err := r.exec(ctx, sessionOptions(r.limits, fmt.Sprintf("auditor · %s · attempt %d", r.fid(), n), r.queue("auditor")), a.AgentSession, activities.SessionInput{
		RunID: r.in.RunID, Feature: r.fid(), Attempt: n, Role: "auditor", Lane: lane.Path, BaseCommit: r.in.BaseCommit,
		Model: r.models["auditor"], Prompt: horizon.AuditBrief(r.taskText(), n, &gateRun, horizon.DiffPlaceholder),
	}, &audit); err != nil {
		return false, err
	}
	c = cur()
	c.AuditorSession = audit.SessionID
	c.Usage = c.Usage.Add(audit.Usage)
	c.Audit = audit.Audit
	if audit.ProtocolError != "" {
		// An auditor that does not deliver a verdict has not accepted.
		c.Audit = &horizon.Audit{Verdict: "reject", Findings: []horizon.Finding{{Severity: "concern", Note: "the auditor gave no valid verdict: " + audit.ProtocolError}}}
	}
	if !c.Audit.Accepted() {
		c.Outcome = horizon.OutcomeRejected
		return false, nil
	}

	r.phase(ctx, horizon.PhaseCommit)
	var commit activities.CommitOutput
	if err := r.exec(ctx, gitOptions("commit "+r.fid()+" onto "+st.Branch), a.CommitFeature, activities.CommitInput{
		RunID: r.in.RunID, Feature: r.fid(), Attempt: n, Repo: r.in.Repo, Lane: lane.Path, BaseCommit: r.in.BaseCommit,
		Message: r.commitMessage(),
	}, &commit); err != nil {
		return false, err
	}
	c = cur()
	c.Outcome = horizon.OutcomeAccepted
	st.Commit = commit.Commit
	return true, nil
}

// waitUnblocked records a typed blocker and waits for the unblock update;
// its note becomes guidance for the next attempt. The run reads blocked
// meanwhile (status and HorizonStatus), and a handoff is written so the
// person who must act sees what and why.
func (r *run) waitUnblocked(ctx workflow.Context, b horizon.Blocker) error {
	st := &r.state
	phase := st.Phase
	st.Blocker, st.Status, st.ReasonKind = &b, horizon.StatusBlocked, horizon.ReasonBlocked
	st.Reason = fmt.Sprintf("blocked (%s): %s; `horizon unblock %s %s --note \"...\"` lets it go on", b.Type, b.Evidence, st.RunID, st.Feature)
	r.handoff(ctx)
	r.publish(ctx)
	if err := workflow.Await(ctx, func() bool { return st.Blocker == nil }); err != nil {
		return err
	}
	st.Status, st.ReasonKind, st.Reason, st.Phase = horizon.StatusRunning, "", "", phase
	r.publish(ctx)
	return nil
}

// holdIfPaused waits while a person has paused the run.
func (r *run) holdIfPaused(ctx workflow.Context) error {
	st := &r.state
	if !st.Paused {
		return nil
	}
	phase := st.Phase
	st.Phase = horizon.PhasePaused
	st.Reason = fmt.Sprintf("paused by `horizon pause`; `horizon resume %s` lets it go on", st.RunID)
	r.publish(ctx)
	// A planned run's budget deadline ends a pause too (single runs have
	// no budget: this is a plain Await for them).
	if err := r.awaitOrDeadline(ctx, func() bool { return !st.Paused }); err != nil {
		return err
	}
	st.Phase, st.Reason = phase, ""
	r.publish(ctx)
	return nil
}

// underCeiling pauses the run while its spend is at or over its ceiling,
// until the set-ceiling update raises (or removes) it. Pausing is not
// failing: the run keeps its place and costs nothing while it waits.
func (r *run) underCeiling(ctx workflow.Context) error {
	st := &r.state
	over := func() bool { return st.Ceiling > 0 && r.spent() >= st.Ceiling }
	if !over() {
		return nil
	}
	phase := st.Phase
	st.Phase = horizon.PhasePaused
	st.Reason = fmt.Sprintf("spend ceiling $%.4f reached ($%.4f spent); raise it with `horizon set-ceiling %s USD`", st.Ceiling, r.spent(), st.RunID)
	r.publish(ctx)
	if err := r.awaitOrDeadline(ctx, func() bool { return !over() }); err != nil {
		return err
	}
	st.Phase, st.Reason = phase, ""
	r.publish(ctx)
	return nil
}

func (r *run) exec(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	actx := workflow.WithActivityOptions(ctx, opts)
	var args []any
	if in != nil {
		args = append(args, in)
	}
	f := workflow.ExecuteActivity(actx, fn, args...)
	if out == nil {
		return f.Get(actx, nil)
	}
	return f.Get(actx, out)
}

func (r *run) phase(ctx workflow.Context, p horizon.Phase) {
	r.state.Phase = p
	r.publish(ctx)
}

// publish refreshes the run's Markdown in the Temporal UI, and its
// HorizonStatus search attribute when the status changed.
func (r *run) publish(ctx workflow.Context) {
	r.state.UpdatedAt = workflow.Now(ctx)
	workflow.SetCurrentDetails(ctx, r.state.Markdown())
	if r.in.SearchAttributes && r.state.Status != r.indexed {
		if err := workflow.UpsertTypedSearchAttributes(ctx, SearchStatus.ValueSet(string(r.state.Status))); err != nil {
			workflow.GetLogger(ctx).Warn("upsert HorizonStatus", "Error", err)
		}
		r.indexed = r.state.Status
	}
}

func (r *run) finish(ctx workflow.Context) (*horizon.RunState, error) {
	st := &r.state
	if st.Status == horizon.StatusBlocked {
		r.handoff(ctx)
		return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
	}
	st.End(horizon.StatusCompleted, "", "", workflow.Now(ctx))
	r.handoff(ctx)
	r.publish(ctx)
	return st, nil
}

// fail ends the run after an activity error: cancellation, bad input or an
// error that outlived its retries.
func (r *run) fail(ctx workflow.Context, err error) (*horizon.RunState, error) {
	st := &r.state
	if c := st.Current(); c != nil && c.Outcome == horizon.OutcomeRunning {
		c.Outcome = ""
	}
	var blocked *temporal.ApplicationError
	if errors.As(err, &blocked) && blocked.Type() == FailureRunBlocked {
		r.handoff(ctx)
		return nil, temporal.NewNonRetryableApplicationError(st.Reason, FailureRunBlocked, nil, *st)
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || temporal.IsCanceledError(err) || ctx.Err() != nil {
		st.End(horizon.StatusCancelled, horizon.ReasonCancelled, "cancelled", workflow.Now(ctx))
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		r.handoff(dctx)
		r.publish(dctx)
		return nil, temporal.NewCanceledError(*st)
	}
	var app *temporal.ApplicationError
	kind, typ := horizon.ReasonError, FailureRunFailed
	if errors.As(err, &app) && (app.Type() == activities.ErrTypeBadInput || app.Type() == activities.ErrTypeUnknownModel) {
		kind, typ = horizon.ReasonBadInput, FailureBadInput
	}
	st.End(horizon.StatusFailed, kind, rootMessage(err), workflow.Now(ctx))
	r.handoff(ctx)
	r.publish(ctx)
	return nil, temporal.NewNonRetryableApplicationError(st.Reason, typ, nil, *st)
}

// handoff writes runs/<run>/handoff.md at the run's end. It never changes
// how a run ends: a failure to write it is logged and the state says so.
func (r *run) handoff(ctx workflow.Context) {
	if workflow.GetVersion(ctx, changeHandoff, workflow.DefaultVersion, 1) < 1 {
		return
	}
	var out activities.HandoffOutput
	if err := r.exec(ctx, gitOptions("handoff"), a.WriteHandoff, r.state, &out); err != nil {
		workflow.GetLogger(ctx).Warn("handoff not written", "Error", err)
		return
	}
	r.state.Handoff = out.Path
}

// rootMessage digs the activity's own message out of Temporal's wrapping.
func rootMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return "timed out: " + to.Error()
	}
	return err.Error()
}

// commitMessage is the accepted change's commit message: a feature's
// title and task, or a single-feature run's goal.
func (r *run) commitMessage() string {
	if r.title != "" {
		subject, _, _ := strings.Cut(commitMessage(r.title), "\n")
		return subject + "\n\n" + r.taskText()
	}
	return commitMessage(r.in.Goal)
}

func commitMessage(goal string) string {
	line := goal
	for i, ch := range goal {
		if ch == '\n' {
			line = goal[:i]
			break
		}
	}
	if len(line) > 72 {
		line = line[:69] + "..."
	}
	return line + "\n\n" + goal
}
