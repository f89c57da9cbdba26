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

// changeLoop is the verified-change loop of one feature: each step is routed
// (route.go), then a worker changes the lane, the gate runs, an
// independent auditor judges the change and, accepted, it is committed
// onto the integration branch. Whether a change is done is decided by the
// gate and the auditor, never by the worker. The one-feature run and
// FeatureWorkflow each drive a loop; what happens on a typed blocker is
// theirs to say (onBlocker).
type changeLoop struct {
	s          *runStatus
	runID      string
	goal       string // the run's goal, for the reader
	repo       string
	baseCommit string // where the lane's changes are measured from
	job        job
	setup      Setup
	limits     Limits
	paidQueue  string
	throttleAt float64
	// prior is what the run spent before this feature (and on the lead's
	// decompositions of it): ceilings and the ladder weigh the run's spend.
	prior float64
	lane  activities.Lane
	// deadline is the run's budget deadline (zero: none); every activity
	// of the loop, its retries included, ends by it (budgeted).
	deadline time.Time
	// onBlocker takes a typed blocker with evidence; done ends the loop.
	onBlocker func(ctx workflow.Context, b horizon.Blocker) (done bool, err error)
	// onDecide records a decision (nil: the owner keeps none).
	onDecide func(ctx workflow.Context, what, why string, evidence ...string)
}

// bound bounds an activity of the loop by the run's deadline.
func (l *changeLoop) bound(ctx workflow.Context, o workflow.ActivityOptions) workflow.ActivityOptions {
	return budgeted(ctx, l.deadline, o)
}

// project is what the lane's sessions need to offer the trusted
// repository's own specialists (nil: it is not trusted).
func (l *changeLoop) project() *activities.ProjectSpecialists {
	p := l.limits.Specialists
	if p == nil {
		return nil
	}
	c := *p
	c.Repo = l.repo
	return &c
}

// spent is the run's spend so far, as ceilings and the ladder see it.
func (l *changeLoop) spent() float64 { return l.prior + l.s.state.Usage.Cost }

// ready waits until the next step may start: while a person has paused
// the run, and while its spend is at or over its ceiling, until the
// set-ceiling update raises (or removes) it. Pausing is not failing: the
// run keeps its place and costs nothing while it waits. This is where the
// run's own ceiling stops it; route pauses for what only the ladder
// weighs (the day's spend, the throttle).
func (l *changeLoop) ready(ctx workflow.Context) error {
	if err := l.s.holdIfPaused(ctx); err != nil {
		return err
	}
	st := &l.s.state
	over := func() bool { return st.Ceiling > 0 && l.spent() >= st.Ceiling }
	if !over() {
		return nil
	}
	reason := fmt.Sprintf("spend ceiling $%.4f reached ($%.4f spent); raise it with `horizon set-ceiling %s USD`", st.Ceiling, l.spent(), st.RunID)
	l.s.notifySpend(ctx, l.job.id, reason, st.Ceiling, st.DayCeiling)
	return l.s.waitIn(ctx, horizon.PhasePaused, reason, func() bool { return !over() }, 0)
}

// step routes and runs attempt n (or a retrieval step before it, which
// returns attempted=false). done is true once the change is committed or
// the loop must stop (a blocker its owner takes over).
func (l *changeLoop) step(ctx workflow.Context, n int, prev *horizon.Attempt, guidance string, strategy horizon.Strategy) (attempted, done bool, err error) {
	st := &l.s.state
	p, err := l.route(ctx)
	if err != nil {
		return false, false, err
	}
	if p.retrieve {
		return false, false, l.retrieve(ctx, n, prev, p)
	}
	p = l.researchModel(ctx, p, strategy)
	p = l.quickModel(ctx, p, prev)
	at := horizon.Attempt{
		N: n, Applier: p.applier, Route: p.reason, Model: p.model, Guidance: guidance, Strategy: strategy,
		Outcome: horizon.OutcomeRunning, StartedAt: workflow.Now(ctx),
	}
	if p.routed {
		at.Tier = p.tier.String()
	}
	st.Attempts = append(st.Attempts, at)
	done, err = l.attempt(ctx, n, prev, p)
	cur := st.Current()
	cur.EndedAt = workflow.Now(ctx)
	if err == nil {
		cur.Triggers = triggers(l.job.card(), st.Baseline, prev, cur, l.setup.LocalContext)
	}
	st.Recount()
	return true, done, err
}

// attempt runs change → gate → auditor → commit, each ending the attempt
// when it says no. It returns done=true once the change is committed, or
// once the owner of the loop took over a blocker and ends the loop.
func (l *changeLoop) attempt(ctx workflow.Context, n int, prev *horizon.Attempt, p plan) (bool, error) {
	l.s.phase(ctx, horizon.PhaseWorking)
	reported, err := l.change(ctx, n, prev, p)
	if b, ok := l.refused(err); ok {
		return l.onBlocker(ctx, b)
	}
	if err != nil {
		return false, err
	}
	if reported {
		if b, ok := l.blocker(); ok {
			return l.onBlocker(ctx, b)
		}
	}
	if b, ok := l.askedBlocker(ctx); ok {
		return l.onBlocker(ctx, b)
	}
	if !reported {
		return false, nil
	}
	if passed, err := l.gate(ctx, n); err != nil || !passed {
		return false, err
	}
	accepted, err := l.audit(ctx, n)
	if b, ok := l.refused(err); ok {
		return l.onBlocker(ctx, b)
	}
	if err != nil {
		return false, err
	}
	b, ok, err := l.dispose(ctx, n)
	if b2, refused := l.refused(err); refused {
		return l.onBlocker(ctx, b2)
	}
	if err != nil {
		return false, err
	}
	if ok {
		return l.onBlocker(ctx, b)
	}
	if !accepted {
		return false, nil
	}
	if err := l.commit(ctx, n); err != nil {
		return false, err
	}
	return true, nil
}

// change has the tier's applier change the lane: codemods at T0, else a
// worker session (at T2 briefed by the reader's diagnosis). reported is
// false when the worker gave no valid report: a protocol error, which is
// not gated.
func (l *changeLoop) change(ctx workflow.Context, n int, prev *horizon.Attempt, p plan) (reported bool, err error) {
	if p.routed && p.tier == ladder.T0 {
		return true, l.codemods(ctx, n)
	}
	guidance := l.s.state.Current().Guidance
	if p.routed && p.tier == ladder.T2 {
		if guidance, err = l.diagnose(ctx, n, prev, routed(p)); err != nil {
			return false, err
		}
	}
	if guidance, err = l.research(ctx, n, prev, p, guidance); err != nil {
		return false, err
	}
	var work activities.SessionOutput
	opts := l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("worker · %s · attempt %d · %s", l.job.id, n, p.model), p.queue))
	in := activities.SessionInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Role: horizon.RoleWorker, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		Model: p.model, Prompt: horizon.WorkerBrief(l.job.task, n, l.s.state.MaxAttempts, prev, guidance), Title: l.goal,
		Consults: l.authority().consults(l.spent()),
	}
	if p.applier == activities.ApplierOpenCode {
		in.Project = l.project()
	}
	g := routed(p)
	w, err := l.watchedSession(ctx, g, opts, in, &work, n, prev)
	if w != nil && l.endWatch(ctx, w, err == nil) {
		// A blocker woke the worker after its report: the report that
		// answers it replaces the old one.
		prior := work
		in.ResumeSessionID, in.PriorUsage = prior.SessionID, prior.Usage
		work = activities.SessionOutput{}
		err = g.call(ctx, opts, a.AgentSession, in, &work)
		work.Usage = prior.Usage.Add(work.Usage)
		work.Asked = append(prior.Asked, work.Asked...)
	}
	if err != nil {
		if why, ok := sessionFailed(err); ok {
			// The step failed on what it was asked: the attempt ends
			// without a report, and the next one starts afresh.
			c := l.s.state.Current()
			c.Outcome, c.ProtocolError = horizon.OutcomeProtocolError, why
			return false, nil
		}
		return false, err
	}
	c := l.s.state.Current()
	c.WorkerSession, c.Resumed, c.Report, c.ProtocolError = work.SessionID, work.Resumed, work.Report, work.ProtocolError
	c.Asked = horizon.NewAsks(append(c.Asked, work.Asked...))
	c.Moved = appendMoved(c.Moved, work.Moved)
	c.Consults = append(c.Consults, work.Consults...)
	c.Usage = c.Usage.Add(work.Usage)
	if work.ProtocolError != "" {
		c.Outcome = horizon.OutcomeProtocolError
		return false, nil
	}
	return true, nil
}

// refused reads a provider's refusal (activities.ErrTypeProviderRefused)
// off a session's error: the attempt ends blocked with the blocker the
// activity built from the provider's words, and the loop's owner takes it
// over like a worker's blocker. Retrying cannot lift it; a person can.
func (l *changeLoop) refused(err error) (horizon.Blocker, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeProviderRefused {
		return horizon.Blocker{}, false
	}
	var b horizon.Blocker
	if app.Details(&b) != nil || b.Type == "" {
		nb, nerr := horizon.NewBlocker(horizon.BlockerUnavailableService, "the model provider refused the session: "+app.Message())
		if nerr != nil {
			return horizon.Blocker{}, false
		}
		b = nb
	}
	if c := l.s.state.Current(); c != nil {
		c.Outcome = horizon.OutcomeBlocked
	}
	return b, true
}

// sessionFailed reads a session that failed on its own content
// (activities.ErrTypeSessionFailed) off err, with why.
func sessionFailed(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ErrTypeSessionFailed {
		return "the session failed: " + app.Message(), true
	}
	return "", false
}

// codemods applies the repository's deterministic codemods: no model, no
// session; the gate and the auditor judge the result like any other.
func (l *changeLoop) codemods(ctx workflow.Context, n int) error {
	var cm activities.CodemodOutput
	if err := execute(ctx, l.bound(ctx, gitOptions(fmt.Sprintf("codemods · %s · attempt %d", l.job.id, n))), a.Codemod, activities.CodemodInput{
		RunID: l.runID, Attempt: n, Lane: l.lane.Path,
	}, &cm); err != nil {
		return err
	}
	c := l.s.state.Current()
	c.Report = &horizon.Report{Status: horizon.ReportSatisfied, Summary: fmt.Sprintf("codemods made %d changes in %d files", cm.Applied, len(cm.Files))}
	if len(cm.Problems) > 0 {
		c.Report.Summary += "; skipped: " + strings.Join(cm.Problems, "; ")
	}
	return nil
}

// diagnose has the reader tier (text only, no lane writes) say what to
// change; its text is the worker's guidance.
func (l *changeLoop) diagnose(ctx workflow.Context, n int, prev *horizon.Attempt, g grant) (string, error) {
	var d activities.DiagnoseOutput
	if err := g.call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("reader · %s · attempt %d", l.job.id, n), g.queue)), a.Diagnose, activities.DiagnoseInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Goal: l.goal, Lane: l.lane.Path, BaseCommit: l.baseCommit, Prev: prev,
	}, &d); err != nil {
		return "", err
	}
	c := l.s.state.Current()
	c.Guidance, c.Usage = d.Text, c.Usage.Add(d.Usage)
	return d.Text, nil
}

// research has the researcher (read-only, webfetch allowed) look up the
// facts before the worker of an attempt under the research recovery
// strategy; its notes, their file and their sources join the worker's
// guidance, and the attempt records them (Attempt.Research). A research
// that fails on its own content leaves the worker the strategy's guidance
// alone; an outage is waited out like any session's.
func (l *changeLoop) research(ctx workflow.Context, n int, prev *horizon.Attempt, p plan, guidance string) (string, error) {
	c := l.s.state.Current()
	if !p.routed || c == nil || c.Strategy != horizon.StrategyResearch ||
		version(ctx, changeResearchNotes, 1) < 1 {
		return guidance, nil
	}
	var r activities.ResearchOutput
	err := routed(p).call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("researcher · %s · attempt %d · %s", l.job.id, n, p.model), p.queue)), a.Research, activities.ResearchInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Task: l.job.task, Lane: l.lane.Path, BaseCommit: l.baseCommit, Prev: prev, Model: p.model,
	}, &r)
	c = l.s.state.Current()
	if err != nil {
		why, ok := sessionFailed(err)
		if !ok {
			return guidance, err
		}
		c.Research = &horizon.ResearchNote{Error: why}
		return guidance, nil
	}
	c.Research = &horizon.ResearchNote{Path: r.Path, Sources: r.Sources}
	c.Usage = c.Usage.Add(r.Usage)
	guidance = strings.TrimSpace(strings.TrimSpace(guidance) + "\n\n" + horizon.ResearchGuidance(r.Path, r.Text, r.Sources))
	c.Guidance = guidance
	return guidance, nil
}

// blocker reads a worker's claim to be blocked. Only a typed blocker with
// concrete evidence stops the attempt (ok); any other claim is recorded
// and the gate decides.
func (l *changeLoop) blocker() (horizon.Blocker, bool) {
	c := l.s.state.Current()
	rep := c.Report
	if rep == nil || rep.Status != horizon.ReportBlocked {
		return horizon.Blocker{}, false
	}
	b, err := horizon.CheckReportBlocker(*rep)
	if err != nil {
		rep.Summary = strings.TrimSpace(rep.Summary + " (blocker not accepted: " + err.Error() + ")")
		return horizon.Blocker{}, false
	}
	c.Outcome = horizon.OutcomeBlocked
	return b, true
}

// askedBlocker turns the worker's questions and denied permissions into a
// typed blocker (horizon.AskBlocker: asked again on a later attempt, or
// asked and then reported blocked), so a worker that needs a person
// pauses the feature instead of burning attempts. The attempt still
// records what it asked when it goes on.
func (l *changeLoop) askedBlocker(ctx workflow.Context) (horizon.Blocker, bool) {
	st := &l.s.state
	c := st.Current()
	if c == nil || len(c.Asked) == 0 {
		return horizon.Blocker{}, false
	}
	b, ok := horizon.AskBlocker(st.Attempts[:len(st.Attempts)-1], *c)
	if !ok || version(ctx, changeAskedBlocker, 1) < 1 {
		return horizon.Blocker{}, false
	}
	c.Outcome = horizon.OutcomeBlocked
	return b, true
}

// gate runs the repository's gate on the lane; its receipt is evidence.
func (l *changeLoop) gate(ctx workflow.Context, n int) (passed bool, err error) {
	l.s.phase(ctx, horizon.PhaseGate)
	var g horizon.GateRun
	if err := execute(ctx, l.bound(ctx, gateOptions(l.limits, fmt.Sprintf("gate · %s · attempt %d", l.job.id, n))), a.RunGate, judged(ctx, activities.GateInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Repo: l.repo, Lane: l.lane.Path, BaseCommit: l.baseCommit, Timeout: l.limits.GateTimeout,
	}, l.setup.Gate, l.limits, l.s.state.Baseline), &g); err != nil {
		return false, err
	}
	c := l.s.state.Current()
	c.Gate = &g
	// Judged is the one verdict: exit 0 and no failing test vanished.
	if !g.Passed() {
		c.Outcome = horizon.OutcomeGateFailed
		return false, nil
	}
	return true, nil
}

// audit has an independent auditor judge the gated change.
func (l *changeLoop) audit(ctx workflow.Context, n int) (accepted bool, err error) {
	l.s.phase(ctx, horizon.PhaseAudit)
	gateRun := l.s.state.Current().Gate
	ses, err := l.throttled(ctx, horizon.RoleAuditor, session{model: l.setup.Models[horizon.RoleAuditor], queue: l.setup.queue(horizon.RoleAuditor, l.paidQueue)}, l.setup.Paid[horizon.RoleAuditor])
	if err != nil {
		return false, err
	}
	var audit activities.SessionOutput
	brief := horizon.AuditBrief(l.job.task, n, gateRun, horizon.DiffPlaceholder, l.job.acceptance...)
	if adv := horizon.AdviceForAuditor(l.s.state.Current().Advice); adv != "" {
		brief += "\n## What the advisor told the worker during its session\n\nContext, not a verdict: judge the code.\n\n" + adv
	}
	if err := ses.call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("auditor · %s · attempt %d · %s", l.job.id, n, ses.model), ses.queue)), a.AgentSession, activities.SessionInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Role: horizon.RoleAuditor, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		Model: ses.model, Prompt: brief, Title: l.goal,
	}, &audit); err != nil {
		why, ok := sessionFailed(err)
		if !ok {
			return false, err
		}
		audit.ProtocolError = why // no verdict: not accepted, below
	}
	c := l.s.state.Current()
	c.AuditorSession, c.AuditorModel = audit.SessionID, ses.model
	c.Moved = appendMoved(c.Moved, audit.Moved)
	c.Usage = c.Usage.Add(audit.Usage)
	c.Audit = audit.Audit
	if audit.ProtocolError != "" {
		// An auditor that does not deliver a verdict has not accepted.
		c.Audit = &horizon.Audit{Verdict: horizon.VerdictReject, Findings: []horizon.Finding{{Severity: horizon.SeverityConcern, Note: "the auditor gave no valid verdict: " + audit.ProtocolError}}}
	}
	// Accepted only with every acceptance criterion met: a verdict
	// cannot accept what the feature's own receipt says is missing.
	if met := l.criteriaMet(); !c.Audit.Accepted() || !met {
		c.Outcome = horizon.OutcomeRejected
		return false, nil
	}
	return true, nil
}

// commit puts the accepted change onto the run's integration branch.
func (l *changeLoop) commit(ctx workflow.Context, n int) error {
	st := &l.s.state
	l.s.phase(ctx, horizon.PhaseCommit)
	var commit activities.CommitOutput
	if err := step(ctx, l.bound(ctx, gitOptions("commit "+l.job.id+" onto "+st.Branch)), a.CommitFeature, activities.CommitInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Repo: l.repo, Lane: l.lane.Path, BaseCommit: l.baseCommit,
		Message: l.job.commitMessage(),
	}, &commit); err != nil {
		return err
	}
	st.Current().Outcome = horizon.OutcomeAccepted
	st.Current().AlreadyDone = commit.AlreadyDone
	st.Commit = commit.Commit
	return nil
}

// job is the change a loop makes: the feature's ID, its brief text, its
// commit subject ("" for a one-feature run: the goal's first line) and its
// card for the ladder.
type job struct {
	id    string
	task  string
	title string
	kind  horizon.FeatureKind
	paths []string
	// acceptance are the feature's acceptance criteria, which the auditor
	// rates one by one (none for a one-feature run).
	acceptance []string
	// lineCeiling is run.line_ceiling: more changed lines raise
	// over_line_ceiling (0: none).
	lineCeiling int
}

// card is the ladder's view of the job: its kind (--kind or the plan's,
// bounded by default) and its allow-list (a planned feature's paths).
func (j job) card() ladder.Card { return card(j.id, j.kind, j.paths, j.lineCeiling) }

// commitMessage is the accepted change's commit message: a feature's
// title and task, or a one-feature run's goal.
func (j job) commitMessage() string {
	if j.title != "" {
		subject, _, _ := strings.Cut(commitMessage(j.title), "\n")
		return subject + "\n\n" + j.task
	}
	return commitMessage(j.task)
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

// appendMoved adds a session's move (activities.SessionOutput.Moved) to
// the attempt's record; state only, no command.
func appendMoved(have []string, moved string) []string {
	if moved == "" {
		return have
	}
	return append(have, moved)
}

// researchModel puts an attempt under the research recovery strategy on
// the research role's best model of its tier (zilX: research is its own
// role, ranked for external documentation and primary sources), when
// preflight found one; the tier's cost class, and so its queue, stay.
func (l *changeLoop) researchModel(ctx workflow.Context, p plan, strategy horizon.Strategy) plan {
	if !p.routed || strategy != horizon.StrategyResearch {
		return p
	}
	r := l.setup.Tiers[p.tier].Research
	if r == "" || r == p.model || version(ctx, changeResearchModel, 1) < 1 {
		return p
	}
	p.model = r
	p.reason += "; research strategy: the research role's model"
	return p
}
