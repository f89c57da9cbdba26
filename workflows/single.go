package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// singleRun is a SingleRunWorkflow (or a RunWorkflow without Planned), a
// run whose goal is one feature: preflight, a lane and the baseline gate,
// then the verified-change loop up to MaxAttempts, each failed attempt's
// evidence handed to the next. A typed blocker pauses the run until a
// person unblocks it.
type singleRun struct {
	s          *runStatus
	in         SingleRunInput
	changeLoop *changeLoop // built once preflight has resolved the models
	// note is a person's unblock note, handed to the next attempt.
	note string
}

// newSingleRun registers the run's handlers: the controls, unblock, and
// approve (which a one-feature run refuses: it has no checkpoints).
func newSingleRun(ctx workflow.Context, in SingleRunInput, s *runStatus) (*singleRun, error) {
	r := &singleRun{s: s, in: in}
	if err := registerControls(ctx, s, nil); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateUnblock, r.unblock,
		workflow.UpdateHandlerOptions{Validator: r.validateUnblock}); err != nil {
		return nil, fmt.Errorf("register unblock update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove, r.approve,
		workflow.UpdateHandlerOptions{Validator: r.validateApprove}); err != nil {
		return nil, fmt.Errorf("register approve update: %w", err)
	}
	s.publish(ctx)
	return r, nil
}

func (r *singleRun) run(ctx workflow.Context) (*horizon.RunState, error) {
	if err := r.prepare(ctx); err != nil {
		return r.s.fail(ctx, err)
	}
	st := &r.s.state
	for n := 1; n <= st.MaxAttempts; {
		if err := r.changeLoop.ready(ctx); err != nil {
			return r.s.fail(ctx, err)
		}
		prev, guidance := previous(st.Attempts)
		if r.note != "" {
			guidance = strings.TrimSpace(r.note + "\n\n" + guidance)
			r.note = ""
		}
		attempted, done, err := r.changeLoop.step(ctx, n, prev, guidance, "")
		if attempted {
			n++
		}
		if err != nil {
			return r.s.fail(ctx, err)
		}
		if done {
			return r.s.finish(ctx)
		}
		if attempted {
			r.s.publish(ctx)
		}
	}
	return r.s.end(ctx, horizon.ReasonMaxAttempts, fmt.Sprintf("no accepted change after %d attempts", st.MaxAttempts))
}

// prepare runs preflight, builds the loop with the models it resolved,
// prepares the lane and runs the baseline gate, which tells pre-existing
// failures from regressions.
func (r *singleRun) prepare(ctx workflow.Context) error {
	st, in := &r.s.state, r.in
	var pre activities.PreflightOutput
	if err := execute(ctx, gitOptions("preflight: repo, gate, models"), a.Preflight, activities.PreflightInput{
		RunID: in.RunID, Repo: in.Repo, BaseCommit: in.BaseCommit, Model: in.Model, ModelsFile: in.ModelsFile,
		GateCommands: in.Limits.GateCommands,
	}, &pre); err != nil {
		return err
	}
	models := pre.Models
	if models == nil { // a history from before role resolution
		models = map[horizon.Role]string{horizon.RoleWorker: in.Model, horizon.RoleAuditor: in.Model}
	}
	st.Models, st.Model, st.Gate = models, models[horizon.RoleWorker], pre.GateRecord
	r.changeLoop = &changeLoop{
		s: r.s, runID: in.RunID, goal: in.Goal, repo: in.Repo, baseCommit: in.BaseCommit,
		job:    job{id: DefaultFeature, task: in.Goal, kind: in.Kind, lineCeiling: in.LineCeiling},
		setup:  Setup{Models: models, Paid: pre.Paid, Tiers: pre.Tiers, LocalContext: pre.LocalContext, Local: pre.Local, Gate: pre.GateRecord},
		limits: in.Limits.withDefaults(), paidQueue: in.PaidQueue, throttleAt: in.ThrottleAt,
		onBlocker: r.waitUnblocked,
	}

	r.s.phase(ctx, horizon.PhaseLane)
	if err := execute(ctx, gitOptions("lane "+DefaultFeature), a.PrepareLane, activities.LaneInput{
		RunID: in.RunID, Feature: DefaultFeature, Repo: in.Repo, BaseCommit: in.BaseCommit,
		Project: r.changeLoop.project(),
	}, &r.changeLoop.lane); err != nil {
		return err
	}
	st.Lane, st.LaneBranch = r.changeLoop.lane.Path, r.changeLoop.lane.Branch

	// Runs started before the baseline existed replay without it.
	if workflow.GetVersion(ctx, changeBaselineGate, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	r.s.phase(ctx, horizon.PhaseBaseline)
	var baseline horizon.GateRun
	if err := execute(ctx, gateOptions(r.changeLoop.limits, "baseline gate · "+DefaultFeature), a.RunGate, judged(ctx, activities.GateInput{
		RunID: in.RunID, Feature: DefaultFeature, Attempt: 0, Repo: in.Repo, Lane: r.changeLoop.lane.Path, BaseCommit: in.BaseCommit, Timeout: r.changeLoop.limits.GateTimeout,
	}, pre.GateRecord, r.changeLoop.limits, nil), &baseline); err != nil {
		return err
	}
	st.Baseline = &baseline
	return nil
}

// waitUnblocked is the loop's onBlocker: the run reads blocked (status,
// HorizonStatus and a handoff for the person who must act) and waits,
// costing nothing, for the unblock update; its note goes to the next
// attempt. A typed blocker pauses the feature, it does not fail it.
func (r *singleRun) waitUnblocked(ctx workflow.Context, b horizon.Blocker) (bool, error) {
	st := &r.s.state
	st.Blocker, st.Status, st.ReasonKind = &b, horizon.StatusBlocked, horizon.ReasonBlocked
	reason := fmt.Sprintf("blocked (%s): %s; `horizon unblock %s %s --note \"...\"` lets it go on", b.Type, b.Evidence, st.RunID, st.Feature)
	r.s.notifyBlocked(ctx, st.Feature, countAttempts(st.Attempts), b)
	return false, r.s.waitIn(ctx, st.Phase, reason, func() bool { return st.Blocker == nil }, 0)
}

func (r *singleRun) unblock(ctx workflow.Context, u Unblock) (*horizon.RunState, error) {
	st := &r.s.state
	st.Blocker = nil
	r.note = fmt.Sprintf("A person unblocked this feature (it was blocked: %s). Their note: %s", st.Reason, u.Note)
	r.s.publish(ctx)
	return st, nil
}

func (r *singleRun) validateUnblock(u Unblock) error {
	st := &r.s.state
	if st.Blocker == nil {
		return fmt.Errorf("run %s is not blocked", st.RunID)
	}
	if u.Feature != "" && u.Feature != st.Feature {
		return fmt.Errorf("feature %q: this run's feature is %s", u.Feature, st.Feature)
	}
	if strings.TrimSpace(u.Note) == "" {
		return errNoNote
	}
	return nil
}

// approve is never reached: nothing sets a checkpoint in a one-feature
// run, so validateApprove refuses every approval.
func (r *singleRun) approve(workflow.Context, Approve) (*horizon.RunState, error) {
	return &r.s.state, nil
}

func (r *singleRun) validateApprove(ap Approve) error { return checkApproval(&r.s.state, ap) }

// errNoNote refuses an unblock that does not say what changed.
var errNoNote = errors.New("a note is required: say what changed (a credential added, a service back) so the next attempt knows")
