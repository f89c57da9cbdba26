package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// SupervisorInput starts (or continues) the supervisor of one repository.
type SupervisorInput struct {
	ID   string
	Repo string
	// Base is the person's branch the roadmap is read from and
	// horizon/roadmap is kept up to.
	Base    string
	Roadmap string
	// Autonomy applies to decomposed plans (semi and supervised wait for
	// `horizon approve` before a plan runs) and to their runs.
	Autonomy       horizon.Autonomy
	MaxActiveRuns  int
	DecomposeAhead int
	// Poll is how often an idle supervisor reads the roadmap again, and
	// how often a merge conflict is retried (default 10 minutes).
	Poll time.Duration
	// DecomposeTimeout bounds one decomposition (the lead's PlanWorkflow
	// child): past it the child is cancelled and the item counts as a
	// failed decomposition (supervisor.decompose_timeout, default 2h).
	DecomposeTimeout time.Duration
	// Run is the template of every run: models, limits, ceilings, queues,
	// budgets. RunID, Goal, Repo, BaseRef, BaseCommit and Plan are set
	// per run.
	Run RunInput
	// LoopsPerHistory, when positive, continues the supervisor as new
	// after that many turns of its loop (besides when Temporal suggests
	// it), so tests cross the boundary.
	LoopsPerHistory int
	// Carry is the state carried across continue-as-new; Decompose the
	// decompositions asked for and not yet done.
	Carry     *horizon.SupervisorState
	Decompose int
}

// RunStatusSignal is what a supervised run tells its supervisor when its
// status changes (SignalRunStatus).
type RunStatusSignal struct {
	RunID  string
	Status horizon.Status
	Reason string
	// Stalled, when set, says the daily pass found the run stalled.
	Stalled string
}

// QueueMove is the argument of UpdateQueueMove.
type QueueMove struct {
	ID  string
	Top bool
}

const (
	defaultSupervisorPoll = 10 * time.Minute
	// defaultDecomposeTimeout is SupervisorInput.DecomposeTimeout's
	// default: a lead that has no plan in two hours waits on something
	// (an unreachable model) that the next try may not.
	defaultDecomposeTimeout = 2 * time.Hour
	// stopGrace is how long a stopping supervisor waits for a cancelled
	// decomposition to end before it ends itself (the engine then
	// terminates the child); stopAnswer how long the stop update waits
	// for the supervisor to end before it says what it still waits for.
	stopGrace  = 20 * time.Second
	stopAnswer = 30 * time.Second
	// supervisorLoops bounds one history's turns of the loop when
	// Temporal does not suggest continuing as new first.
	supervisorLoops = 500
)

// supervisor is one repository's SupervisorWorkflow: it runs the queue one
// planned run at a time (MaxActiveRuns), decomposes the next roadmap item
// when the queue drains (and DecomposeAhead items when the nightly
// schedule asks), and lands each completed run's commits on
// horizon/roadmap, so the next run builds on them.
type supervisor struct {
	in SupervisorInput
	st horizon.SupervisorState
	// changed counts handler calls and signals: the loop waits for it to move.
	changed int
	// statuses are run status changes not yet handled by the loop.
	statuses []RunStatusSignal
	stopping bool
	loops    int
	// decomp is the decomposition in flight (nil: none); aside says
	// decompositions run beside the loop now (changeDecomposeAside), and
	// asideErr is what ended them with an error the loop must return.
	decomp   *decomposition
	aside    bool
	asideErr error
	// stopEnds: the stop update cancels a decomposition and waits for the
	// end (changeStopEnds); ended: the loop is done.
	stopEnds bool
	ended    bool
	// doing is the step the loop waits on (an activity's summary, a run's
	// start), for a stop's answer; "" when it waits on nothing.
	doing string
}

// decomposition is the lead's decomposition of one roadmap item in
// flight: its PlanWorkflow child, since when, and how it was cut short.
type decomposition struct {
	item, title, planID string
	since, deadline     time.Time
	cancel              workflow.CancelFunc
	// stopped: cancelled by `horizon supervisor stop`; timedOut: by its
	// deadline.
	stopped, timedOut bool
}

// SupervisorWorkflow supervises one repository until `horizon supervisor
// stop`, continuing as new so it can live for months.
func SupervisorWorkflow(ctx workflow.Context, in SupervisorInput) (*horizon.SupervisorState, error) {
	s, err := newSupervisor(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.run(ctx)
}

func newSupervisor(ctx workflow.Context, in SupervisorInput) (*supervisor, error) {
	if in.MaxActiveRuns <= 0 {
		in.MaxActiveRuns = 1
	}
	if in.DecomposeAhead <= 0 {
		in.DecomposeAhead = 1
	}
	if in.Poll <= 0 {
		in.Poll = defaultSupervisorPoll
	}
	if in.DecomposeTimeout <= 0 {
		in.DecomposeTimeout = defaultDecomposeTimeout
	}
	s := &supervisor{in: in}
	if in.Carry != nil {
		s.st = *in.Carry
		s.st.Histories++
	} else {
		s.st = horizon.SupervisorState{
			ID: in.ID, Repo: in.Repo, Base: in.Base, Roadmap: in.Roadmap, Autonomy: in.Autonomy,
			Status: horizon.SupervisorRunning, Runs: []horizon.SupervisedRun{}, Histories: 1, StartedAt: workflow.Now(ctx),
		}
	}
	if err := s.register(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// run is the supervisor's loop: handle what the runs said, then start
// queued work, decompose the roadmap when the queue drains, or wait.
func (s *supervisor) run(ctx workflow.Context) (*horizon.SupervisorState, error) {
	if err := s.sync(ctx, ""); err != nil {
		return nil, err
	}
	for {
		s.loops++
		if s.asideErr != nil {
			return nil, s.asideErr
		}
		if err := s.handleStatuses(ctx); err != nil {
			return nil, err
		}
		switch {
		case s.stopping:
			return s.stop(ctx), nil
		case s.st.Status == horizon.SupervisorPaused:
			s.wait(ctx, "paused; `horizon supervisor resume` lets it go on", 0)
			continue
		case !s.aside && s.continueSuggested(ctx):
			// Never with a decomposition in flight: the child would be
			// terminated with this history.
			return nil, s.continueAsNew(ctx)
		}
		if s.st.ActiveRuns() < s.in.MaxActiveRuns {
			if e, ok := s.st.Runnable(); ok {
				if err := s.startRun(ctx, e); err != nil {
					return nil, err
				}
				continue
			}
		}
		if s.aside {
			// One decomposition at a time; the loop goes on beside it.
			s.wait(ctx, s.idleReason(), s.in.Poll)
			continue
		}
		if ahead := s.decomposeWanted(); ahead > 0 {
			if wait := s.decomposeBackoff(ctx); wait > 0 {
				s.wait(ctx, fmt.Sprintf("%d decompositions failed in a row: the next waits until %s (run.stall_backoff)",
					s.st.DecomposeFailures, s.st.DecomposeAfter.UTC().Format("15:04:05 UTC")), wait)
				continue
			}
			s.in.Decompose = 0
			n, err := s.decomposeAhead(ctx, ahead)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				continue
			}
		}
		s.wait(ctx, s.idleReason(), s.in.Poll)
	}
}

// stop ends the supervisor: a decomposition beside the loop was
// cancelled by the stop (decompose) and is given stopGrace to end; then
// the supervisor is stopped and ends once every handler (the stop update
// waiting for this end) has finished. Runs it started go on.
func (s *supervisor) stop(ctx workflow.Context) *horizon.SupervisorState {
	if s.aside {
		_, _ = workflow.AwaitWithTimeout(ctx, stopGrace, func() bool { return !s.aside })
	}
	s.st.Status = horizon.SupervisorStopped
	s.st.Waiting, s.st.WaitingSince = "", time.Time{}
	s.ended = true
	s.publish(ctx)
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return &s.st
}

// stopWaitsFor says what a stopping supervisor still waits for before it
// ends ("" when nothing).
func (s *supervisor) stopWaitsFor() string {
	switch {
	case s.ended:
		return ""
	case s.decomp != nil:
		return fmt.Sprintf("the cancelled decomposition of %s (workflow %s) to end", s.decomp.item, s.decomp.planID)
	case s.doing != "":
		return s.doing + " to finish"
	}
	return "its loop to take up the stop"
}

// decomposeWanted is how many items to have decomposed now: the nightly
// schedule's DecomposeAhead, or one when the queue has drained and a slot
// is free.
func (s *supervisor) decomposeWanted() int {
	switch {
	case s.in.Decompose > 0:
		return s.in.DecomposeAhead
	case s.st.Queue.Len() == 0 && s.st.ActiveRuns() < s.in.MaxActiveRuns:
		return 1
	}
	return 0
}

// idleReason says what an idle supervisor waits for.
func (s *supervisor) idleReason() string {
	switch {
	case s.st.RoadmapError != "":
		return "the roadmap has an error: " + s.st.RoadmapError
	case len(s.st.AwaitingApproval()) > 0:
		var ids []string
		for _, e := range s.st.AwaitingApproval() {
			ids = append(ids, e.ID)
		}
		return fmt.Sprintf("plans wait for approval: %s (`horizon approve --repo %s ID`)", strings.Join(ids, ", "), s.st.Repo)
	case s.decomp != nil:
		d := s.decomp
		return fmt.Sprintf("the lead decomposes %s (%s) since %s; it is cancelled at %s if it has no plan by then (supervisor.decompose_timeout); queued goals start meanwhile",
			d.item, d.title, d.since.UTC().Format("15:04:05 UTC"), d.deadline.UTC().Format("15:04:05 UTC"))
	case s.st.ActiveRuns() > 0:
		return "a run is in progress"
	}
	return "the queue is empty and every roadmap item is taken up; add work with `horizon queue add` or the roadmap"
}

// wait publishes why the supervisor waits and sleeps until a handler or
// signal changes something, or poll passes (0: no timer).
func (s *supervisor) wait(ctx workflow.Context, why string, poll time.Duration) {
	seen := s.changed
	s.st.Waiting, s.st.WaitingSince = why, workflow.Now(ctx)
	s.publish(ctx)
	cond := func() bool { return s.changed != seen }
	if poll > 0 {
		_, _ = workflow.AwaitWithTimeout(ctx, poll, cond)
	} else {
		_ = workflow.Await(ctx, cond)
	}
	s.st.Waiting, s.st.WaitingSince = "", time.Time{}
}

// continueSuggested: time for a fresh history. Never with an update in
// flight; supervised runs are separate workflows, so they do not hold it.
func (s *supervisor) continueSuggested(ctx workflow.Context) bool {
	limit := s.in.LoopsPerHistory
	if limit <= 0 {
		limit = supervisorLoops
	}
	return workflow.GetInfo(ctx).GetContinueAsNewSuggested() || s.loops >= limit
}

func (s *supervisor) continueAsNew(ctx workflow.Context) error {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	// Signals delivered but not yet read would be lost with this history.
	for _, name := range []string{SignalRunStatus, SignalDecompose} {
		ch := workflow.GetSignalChannel(ctx, name)
		for {
			if name == SignalRunStatus {
				var sig RunStatusSignal
				if !ch.ReceiveAsync(&sig) {
					break
				}
				s.statuses = append(s.statuses, sig)
				continue
			}
			var n int
			if !ch.ReceiveAsync(&n) {
				break
			}
			s.in.Decompose = max(s.in.Decompose, n, 1)
		}
	}
	if err := s.handleStatuses(ctx); err != nil {
		return err
	}
	next := s.in
	st := s.st
	next.Carry = &st
	return workflow.NewContinueAsNewError(ctx, SupervisorWorkflowName, next)
}

// publish shows the state in the Temporal UI.
func (s *supervisor) publish(ctx workflow.Context) {
	s.st.UpdatedAt = workflow.Now(ctx)
	workflow.SetCurrentDetails(ctx, s.st.Markdown())
}

// activity runs one activity with options.
func (s *supervisor) activity(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	s.doing = opts.Summary
	defer func() { s.doing = "" }()
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), fn, in).Get(ctx, out)
}

// sync brings horizon/roadmap up to the base branch (made from it the
// first time). A conflict or a red gate is a typed blocker for a person
// (BlockerMergeConflict), shown in status and on the roadmap item it
// holds (held, "" when none); it is tried again every Poll, and at once
// when a person calls the supervisor (`horizon supervisor resume` after
// merging by hand).
func (s *supervisor) sync(ctx workflow.Context, held string) error {
	for {
		b, err := s.mergeIn(ctx, s.st.Base)
		if err != nil {
			return err
		}
		if b == nil {
			s.unblock(ctx)
			return nil
		}
		s.block(ctx, b, held)
		s.wait(ctx, b.Text(), s.in.Poll)
		if s.stopping {
			return nil
		}
	}
}

// block records the supervisor's blocker, keeping when it began across
// tries, and puts it on the roadmap item it holds back.
func (s *supervisor) block(ctx workflow.Context, b *horizon.SupervisorBlocker, held string) {
	b.Since, b.Item = workflow.Now(ctx), held
	if prev := s.st.Blocker; prev != nil && prev.Branch == b.Branch {
		b.Since = prev.Since
	}
	if prev := s.st.Blocker; prev != nil && prev.Item != "" && prev.Item != held {
		s.clearItemBlocker(ctx, prev.Item)
	}
	s.st.Blocker = b
	if r, ok := s.st.Items.Find(held); ok && held != "" {
		bl := b.Blocker
		s.recordItem(ctx, horizon.ItemRecord{Item: held, Stage: r.Stage, Reason: b.Text(), Blocker: &bl})
	}
}

// unblock clears a lifted blocker from the state and its item.
func (s *supervisor) unblock(ctx workflow.Context) {
	if s.st.Blocker == nil {
		return
	}
	if item := s.st.Blocker.Item; item != "" {
		s.clearItemBlocker(ctx, item)
	}
	s.st.Blocker = nil
}

// clearItemBlocker drops an item's blocker, its stage unchanged.
func (s *supervisor) clearItemBlocker(ctx workflow.Context, item string) {
	if r, ok := s.st.Items.Find(item); ok && r.Blocker != nil {
		s.recordItem(ctx, horizon.ItemRecord{Item: item, Stage: r.Stage})
	}
}

// mergeIn brings branch into horizon/roadmap: nothing when it is in
// already, a fast-forward when possible, else a merge that must pass the
// gate before it lands. When it could not (a conflict, a red gate) it
// returns the blocker saying why and what a person does; the branch is
// then left as it was.
func (s *supervisor) mergeIn(ctx workflow.Context, branch string) (*horizon.SupervisorBlocker, error) {
	var out activities.SyncOutput
	in := activities.RoadmapInput{Repo: s.st.Repo, Base: branch, Path: s.st.Roadmap}
	if err := s.activity(ctx, gitOptions("bring "+branch+" into horizon/roadmap"), a.SyncRoadmap, in, &out); err != nil {
		return nil, err
	}
	lift := fmt.Sprintf("merge it by hand: git switch %s && git merge %s, then `horizon supervisor resume --repo %s` (else it is tried again every %s)",
		activities.RoadmapBranch, branch, s.st.Repo, s.in.Poll)
	switch out.Action {
	case activities.SyncConflict:
		return &horizon.SupervisorBlocker{
			Blocker: horizon.Blocker{Type: horizon.BlockerMergeConflict, Evidence: fmt.Sprintf("%s does not merge into %s (conflict in %s)",
				branch, activities.RoadmapBranch, strings.Join(out.Conflict, ", "))},
			Branch: branch, Paths: slices.Clone(out.Conflict), Lift: lift,
		}, nil
	case activities.SyncMerge:
		s.st.Merges++
		limits := s.in.Run.Limits.withDefaults()
		var g horizon.GateRun
		if err := s.activity(ctx, gateOptions(limits, "gate · merge of "+branch), a.RunGate, activities.GateInput{
			RunID: s.st.ID, Feature: "merge", Attempt: s.st.Merges, Repo: s.st.Repo, Lane: out.MergeDir, BaseCommit: out.MergeCommit,
			Timeout: limits.GateTimeout, Commands: limits.GateCommands,
		}, &g); err != nil {
			return nil, err
		}
		if !g.Passed() {
			// The merge applies but breaks the gate: a conflict in
			// behaviour, which a retry finds again just the same.
			return &horizon.SupervisorBlocker{
				Blocker: horizon.Blocker{Type: horizon.BlockerMergeConflict, Evidence: fmt.Sprintf("the merge of %s into %s fails the gate (receipt %s: %s)",
					branch, activities.RoadmapBranch, g.ReceiptID, g.Verdict)},
				Branch: branch, Lift: lift,
			}, nil
		}
		if err := s.activity(ctx, gitOptions("land the merge on horizon/roadmap"), a.AdvanceRoadmap, activities.AdvanceInput{
			Repo: s.st.Repo, From: out.Tip, To: out.MergeCommit,
		}, &out.Tip); err != nil {
			return nil, err
		}
	}
	s.st.Tip = out.Tip
	return nil, nil
}

// startRun starts a queued entry as a planned run from horizon/roadmap's
// tip. The run is a child that outlives the supervisor (abandoned on
// close): stopping the supervisor never stops a run.
func (s *supervisor) startRun(ctx workflow.Context, e horizon.QueueEntry) error {
	if err := s.sync(ctx, e.Item); err != nil || s.stopping {
		return err
	}
	if _, err := s.st.Queue.Remove(e.ID); err != nil {
		return nil // removed by a person meanwhile
	}
	now := workflow.Now(ctx)
	runID := supervisedRunID(s.st.ID, e.ID, now)
	s.st.Approved = slices.DeleteFunc(s.st.Approved, func(id string) bool { return id == e.ID })
	in := s.in.Run
	in.RunID, in.Goal, in.Repo, in.BaseRef, in.BaseCommit = runID, e.Goal, s.st.Repo, activities.RoadmapBranch, s.st.Tip
	in.Planned, in.Plan, in.Supervisor, in.Carry = true, e.Plan, s.st.ID, nil
	in.Autonomy = s.st.Autonomy
	if e.Autonomy != "" {
		in.Autonomy = e.Autonomy
	}
	// Approved here or under full autonomy: the run does not ask again.
	in.PlanApproved = e.Kind == horizon.EntryPlan
	if e.BudgetTime > 0 {
		in.BudgetTime = e.BudgetTime
	}
	if e.BudgetSpend > 0 {
		in.BudgetSpend = e.BudgetSpend
	}
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:        runID,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:     fmt.Sprintf("%s · %s", e.ID, e.Goal),
		Memo:              map[string]any{MemoGoal: e.Goal, MemoRepo: s.st.Repo},
	}
	if in.SearchAttributes {
		opts.TypedSearchAttributes = temporal.NewSearchAttributes(SearchRepo.ValueSet(s.st.Repo), SearchStatus.ValueSet(string(horizon.StatusRunning)))
	}
	// Supervisors that started runs as RunWorkflow go on doing so in the
	// history they did it in; from then on a run is a PlannedRunWorkflow.
	typ, arg := RunWorkflowName, any(in)
	if workflow.GetVersion(ctx, changeRunKinds, workflow.DefaultVersion, 1) >= 1 {
		typ, arg = in.Start()
	}
	child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), typ, arg)
	var started workflow.Execution
	s.doing = "the start of run " + runID
	err := child.GetChildWorkflowExecution().Get(ctx, &started)
	s.doing = ""
	if err != nil {
		return fmt.Errorf("start run %s of %s: %w", runID, e.ID, err)
	}
	// The run tells its status changes (SignalRunStatus); in this history
	// its end also comes as the child's result, a second path to the same
	// record when a signal is lost.
	workflow.Go(ctx, func(ctx workflow.Context) {
		s.statuses = append(s.statuses, childOutcome(ctx, runID, child))
		s.changed++
	})
	s.st.AddRun(horizon.SupervisedRun{RunID: runID, Entry: e.ID, Item: e.Item, Goal: e.Goal, From: s.st.Tip, Status: horizon.StatusRunning, StartedAt: now})
	if e.Item != "" {
		s.recordItem(ctx, horizon.ItemRecord{Item: e.Item, Stage: horizon.StageRunning, RunID: runID})
	}
	s.publish(ctx)
	return nil
}

// childOutcome waits for a supervised run's end and says how it ended.
func childOutcome(ctx workflow.Context, runID string, child workflow.ChildWorkflowFuture) RunStatusSignal {
	var st horizon.RunState
	err := child.Get(ctx, &st)
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case err == nil:
	case errors.As(err, &app) && app.HasDetails() && app.Details(&st) == nil:
	case errors.As(err, &canceled):
		st.Status, st.Reason = horizon.StatusCancelled, "cancelled"
	default:
		st.Status, st.Reason = horizon.StatusFailed, rootMessage(err)
	}
	if !st.Status.Terminal() {
		st.Status = horizon.StatusFailed
	}
	return RunStatusSignal{RunID: runID, Status: st.Status, Reason: st.Reason}
}

// supervisedRunID names a run the supervisor starts: the time, a short
// mark of the supervisor (runs of two repositories never collide) and the
// queue entry.
func supervisedRunID(supervisor, entry string, now time.Time) string {
	mark := strings.TrimPrefix(supervisor, "supervisor-")
	if len(mark) > 4 {
		mark = mark[:4]
	}
	return fmt.Sprintf("run-%s-%s%s", now.UTC().Format("20060102-150405"), mark, entry)
}

// handleStatuses applies what supervised runs said: a completed run's
// commits land on horizon/roadmap; a blocked or ended run frees its slot
// and shows on its roadmap item.
func (s *supervisor) handleStatuses(ctx workflow.Context) error {
	for len(s.statuses) > 0 {
		sig := s.statuses[0]
		s.statuses = s.statuses[1:]
		r, ok := s.st.Run(sig.RunID)
		if !ok || r.Status == horizon.StatusCompleted {
			continue
		}
		if sig.Stalled != "" {
			if r.Item != "" {
				s.recordItem(ctx, horizon.ItemRecord{Item: r.Item, Stage: horizon.StageStalled, RunID: r.RunID, Reason: sig.Stalled})
			}
			continue
		}
		if r.Status == sig.Status {
			continue
		}
		r.Status, r.Reason = sig.Status, sig.Reason
		stage := horizon.StageRunning
		var blocker *horizon.Blocker
		switch sig.Status {
		case horizon.StatusCompleted:
			b, err := s.land(ctx, r)
			if err != nil {
				return err
			}
			stage, sig.Reason = horizon.StageDone, r.Reason
			if b != nil {
				stage, blocker = horizon.StageBlocked, &b.Blocker
			}
		case horizon.StatusBlocked, horizon.StatusFailed, horizon.StatusCancelled:
			stage = horizon.StageBlocked
			r.EndedAt = workflow.Now(ctx)
		}
		if r.Item != "" {
			s.recordItem(ctx, horizon.ItemRecord{Item: r.Item, Stage: stage, RunID: r.RunID, Reason: sig.Reason, Blocker: blocker})
		}
		s.publish(ctx)
	}
	return nil
}

// land puts a completed run's commits on horizon/roadmap: a fast-forward
// from the tip the run started at, or, when horizon/roadmap moved meanwhile
// (the base was merged in, another run landed), a merge of the run's
// branch that passes the gate. When the commits could not land it returns
// the blocker (the run's reason says it too, with what a person does).
func (s *supervisor) land(ctx workflow.Context, r *horizon.SupervisedRun) (*horizon.SupervisorBlocker, error) {
	r.EndedAt = workflow.Now(ctx)
	var tip string
	err := s.activity(ctx, gitOptions("land "+r.RunID+" on horizon/roadmap"), a.AdvanceRoadmap, activities.AdvanceInput{
		Repo: s.st.Repo, From: r.From, Run: r.RunID,
	}, &tip)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeBadInput {
		b, err := s.mergeIn(ctx, horizon.IntegrationBranch(r.RunID))
		if err != nil {
			return nil, err
		}
		if b != nil {
			// Nothing retries a landing: the person's merge is the landing.
			b.Since, b.Item = workflow.Now(ctx), r.Item
			b.Lift = fmt.Sprintf("merge it by hand: git switch %s && git merge %s", activities.RoadmapBranch, b.Branch)
			r.Reason = "its commits did not land on horizon/roadmap: " + b.Text()
			return b, nil
		}
		tip = s.st.Tip
	} else if err != nil {
		return nil, err
	}
	s.st.Tip, r.Landed = tip, tip
	return nil, nil
}

// decomposeAhead has the lead decompose the next open roadmap items into
// plans and queues them; it returns how many it took up.
func (s *supervisor) decomposeAhead(ctx workflow.Context, ahead int) (int, error) {
	var text activities.RoadmapText
	if err := s.activity(ctx, gitOptions("read the roadmap"), a.ReadRoadmap, activities.RoadmapInput{
		Repo: s.st.Repo, Base: s.st.Base, Path: s.st.Roadmap,
	}, &text); err != nil {
		return 0, err
	}
	if !text.Found {
		s.st.RoadmapError = ""
		return 0, nil
	}
	// Histories recorded before Problem existed never carry one, so they
	// replay down the old path.
	if text.Problem != "" {
		s.st.RoadmapError = text.Problem
		return 0, nil
	}
	rm, err := horizon.ParseRoadmap(s.st.Roadmap, text.Text)
	if err != nil {
		s.st.RoadmapError = err.Error()
		return 0, nil
	}
	s.st.RoadmapError = ""
	items := horizon.NextToDecompose(rm, s.st.Items, s.st.Queue, ahead)
	if len(items) > 0 && workflow.GetVersion(ctx, changeDecomposeAside, workflow.DefaultVersion, 1) >= 1 {
		s.decomposeAside(ctx, items)
		return len(items), nil
	}
	for _, it := range items {
		if s.stopping && s.stopEnds {
			break // cancelled by the stop: take up no more
		}
		if err := s.decompose(ctx, it, false); err != nil {
			return 0, err
		}
	}
	return len(items), nil
}

// decomposeAside decomposes items one after the other beside the loop,
// which meanwhile starts queued goals and handles what runs and people
// say; the loop waits for it only to stop or continue as new.
func (s *supervisor) decomposeAside(ctx workflow.Context, items []horizon.RoadmapItem) {
	s.aside = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() {
			s.aside = false
			s.changed++
		}()
		for _, it := range items {
			if s.stopping {
				return
			}
			if err := s.decompose(ctx, it, true); err != nil {
				s.asideErr = err
				return
			}
			s.changed++
		}
	})
}

// decompose has the lead plan one roadmap item (PlanWorkflow as a child)
// and queues the plan. The item is recorded as decomposing first, so it is
// never decomposed twice. A stop cancels the child (changeStopEnds);
// beside the loop (aside) the child has DecomposeTimeout to plan, after
// which it is cancelled and the item counts as a failed decomposition.
func (s *supervisor) decompose(ctx workflow.Context, it horizon.RoadmapItem, aside bool) error {
	s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Title: it.Title, Stage: horizon.StageDecomposing})
	s.publish(ctx)
	planID := fmt.Sprintf("%s.plan.%s", s.st.ID, it.ID)
	pctx, cancel := workflow.WithCancel(ctx)
	cctx := workflow.WithChildOptions(pctx, workflow.ChildWorkflowOptions{
		WorkflowID: planID, StaticSummary: "decompose · " + it.Title, WaitForCancellation: true,
	})
	d := &decomposition{item: it.ID, title: it.Title, planID: planID, since: workflow.Now(ctx), cancel: cancel}
	s.decomp = d
	defer func() { s.decomp = nil }()
	var res PlanResult
	child := workflow.ExecuteChildWorkflow(cctx, PlanWorkflowName, PlanInput{
		RunID: planID, Goal: it.Goal(), Repo: s.st.Repo, BaseCommit: s.st.Tip,
		Model: s.in.Run.Model, ModelsFile: s.in.Run.ModelsFile, Limits: s.in.Run.Limits,
		// The lead's sessions take the paid queue and observe the day's
		// ceiling (a decomposition is no run: the run ceiling is not its).
		PaidQueue: s.in.Run.PaidQueue, Spend: SpendLimits{DayCeiling: s.in.Run.DayCeiling, ThrottleAt: s.in.Run.ThrottleAt},
	})
	var deadline workflow.Future
	if aside {
		tctx, stopTimer := workflow.WithCancel(ctx)
		defer stopTimer()
		d.deadline = d.since.Add(s.in.DecomposeTimeout)
		deadline = workflow.NewTimer(tctx, s.in.DecomposeTimeout)
	}
	// Get alone, as before, unless a stop or the deadline comes first.
	_ = workflow.Await(ctx, func() bool {
		return child.IsReady() || (s.stopping && (aside || s.stopEnds)) || (deadline != nil && deadline.IsReady())
	})
	switch {
	case child.IsReady():
	case s.stopping && (aside || s.stopEnds):
		d.stopped = true
		cancel()
	case deadline != nil && deadline.IsReady():
		d.timedOut = true
		cancel()
	}
	err := child.Get(ctx, &res)
	s.st.Decompositions++
	if err != nil {
		switch {
		case d.stopped:
			s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Stage: horizon.StageBlocked, Reason: "decomposition cancelled: the supervisor stopped"})
		case d.timedOut:
			s.decomposeFailed(ctx)
			s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Stage: horizon.StageBlocked,
				Reason: fmt.Sprintf("decomposition failed: the lead had no plan within %s (supervisor.decompose_timeout), so it was cancelled", s.in.DecomposeTimeout)})
		default:
			s.decomposeFailed(ctx)
			s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Stage: horizon.StageBlocked, Reason: "decomposition failed: " + rootMessage(err)})
		}
		return nil
	}
	s.st.DecomposeFailures, s.st.DecomposeAfter = 0, time.Time{}
	plan := res.Plan
	e, err := s.st.Queue.Add(horizon.QueueEntry{Kind: horizon.EntryPlan, Goal: it.Title, Plan: &plan, Item: it.ID, AddedAt: workflow.Now(ctx)})
	if err != nil {
		s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Stage: horizon.StageBlocked, Reason: "its plan was not queued: " + err.Error()})
		return nil
	}
	s.recordItem(ctx, horizon.ItemRecord{Item: it.ID, Stage: horizon.StageQueued, Entry: e.ID})
	return nil
}

// changeDecomposeBackoff makes failing decompositions back off: a
// roadmap whose decompositions all fail waits longer and longer between
// them (run.stall_backoff) instead of taking every item up at once.
const changeDecomposeBackoff = "decompose-backoff"

// decomposeFailed counts a failed decomposition and sets when the next may
// start: 1 minute after the first failure in a row, doubling, capped,
// like a stalled feature's attempts.
func (s *supervisor) decomposeFailed(ctx workflow.Context) {
	s.st.DecomposeFailures++
	s.st.DecomposeAfter = workflow.Now(ctx).Add(s.in.Run.Stall.Delay(s.st.DecomposeFailures - 1))
}

// decomposeBackoff is how long the next decomposition must still wait
// after failed ones (0: it may start).
func (s *supervisor) decomposeBackoff(ctx workflow.Context) time.Duration {
	if s.st.DecomposeFailures == 0 {
		return 0
	}
	left := s.st.DecomposeAfter.Sub(workflow.Now(ctx))
	if left <= 0 || workflow.GetVersion(ctx, changeDecomposeBackoff, workflow.DefaultVersion, 1) < 1 {
		return 0
	}
	return left
}

// recordItem stores an item's record; a move the rules refuse is logged
// and ignored (the record stays as it was).
func (s *supervisor) recordItem(ctx workflow.Context, r horizon.ItemRecord) {
	r.At = workflow.Now(ctx)
	items, err := s.st.Items.Record(r)
	if err != nil {
		workflow.GetLogger(ctx).Warn("roadmap item record refused", "Item", r.Item, "Error", err)
		return
	}
	s.st.Items = items
}
