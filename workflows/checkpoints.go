package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// checkpoints are where a planned run waits for a person: approvals the
// autonomy level asks for (the plan, a milestone, a feature) and typed
// blockers with nothing else runnable. Approvals and unblock notes are
// carried across continue-as-new (Carry).
type checkpoints struct {
	s     *runStatus
	rec   *record
	carry *Carry
	// changed counts approvals and unblocks, to wake a waiting run.
	changed int
	// unblockRunning hands a person's unblock to the running feature
	// when that one backs off, stalled (it is not blocked yet).
	unblockRunning func(ctx workflow.Context, note string)
	// rule passes milestone checkpoints without a person (passByRule).
	rule horizon.MilestoneRule
}

// approvePlan waits at the plan's checkpoint if the autonomy level wants
// a person there; waited says it did (the caller looks again).
func (c *checkpoints) approvePlan(ctx workflow.Context) (waited bool, err error) {
	st := &c.s.state
	if !c.needs(horizon.CheckpointPlan, "plan") {
		return false, nil
	}
	return true, c.await(ctx, horizon.CheckpointPlan, "plan",
		fmt.Sprintf("the plan (ambiguity %s): %s, %s", st.Plan.Ambiguity, horizon.Plural(len(st.Plan.Milestones), "milestone"), horizon.Plural(st.Plan.Counts().Work(), "feature")))
}

// approveWork waits at the checkpoint before milestone m (not the first)
// or before feature f's first attempt, if the autonomy level wants one.
func (c *checkpoints) approveWork(ctx workflow.Context, mi int, m horizon.Milestone, f horizon.Feature) (waited bool, err error) {
	if mi > 0 && m.Status == horizon.MilestonePending && c.needs(horizon.CheckpointMilestone, m.ID) {
		if c.passByRule(ctx, m, c.s.state.Plan.Milestones[mi-1]) {
			return false, nil
		}
		return true, c.await(ctx, horizon.CheckpointMilestone, m.ID, fmt.Sprintf("milestone %s (%s): %s", m.ID, m.Title, horizon.Plural(len(m.Features), "feature")))
	}
	if f.Status != horizon.FeatureRunning && len(f.Attempts) == 0 && c.needs(horizon.CheckpointFeature, f.ID) {
		return true, c.await(ctx, horizon.CheckpointFeature, f.ID, fmt.Sprintf("feature %s: %s", f.ID, f.Title))
	}
	return false, nil
}

// passByRule approves milestone m's checkpoint without a person when the
// run's rule allows it (horizon.MilestoneRule), recording the approval as
// a decision with its reason.
func (c *checkpoints) passByRule(ctx workflow.Context, m, prev horizon.Milestone) bool {
	st := &c.s.state
	ok, why := c.rule.Passes(st.Autonomy, *st.Plan, prev)
	if !ok || version(ctx, changeMilestoneRule, 1) < 1 {
		return false
	}
	c.carry.Approved = append(c.carry.Approved, m.ID)
	c.rec.decide(ctx, "", fmt.Sprintf("approved milestone %s by rule", m.ID), why)
	return true
}

// needs: the autonomy level wants a person at this checkpoint and nobody
// approved it yet.
func (c *checkpoints) needs(kind horizon.CheckpointKind, subject string) bool {
	st := &c.s.state
	return st.Autonomy.NeedsApproval(kind, *st.Plan) && !slices.Contains(c.carry.Approved, subject)
}

// await waits at a checkpoint for `horizon approve` (or the budget's
// deadline, which the caller's next check turns into the stop).
func (c *checkpoints) await(ctx workflow.Context, kind horizon.CheckpointKind, subject, summary string) error {
	st := &c.s.state
	st.Waiting = &horizon.Checkpoint{Kind: kind, Subject: subject, Summary: summary, Since: workflow.Now(ctx)}
	reason := fmt.Sprintf("waiting for approval of %s (autonomy %s); `horizon approve %s` lets it go on", summary, st.Autonomy, st.RunID)
	c.s.notifyApproval(ctx, st.Waiting)
	return c.s.waitIn(ctx, horizon.PhaseApproval, reason, func() bool { return st.Waiting == nil }, 0)
}

func (c *checkpoints) validateApprove(ap Approve) error { return checkApproval(&c.s.state, ap) }

// approve records a person's approval of the checkpoint waited at.
func (c *checkpoints) approve(ctx workflow.Context, ap Approve) (*horizon.RunState, error) {
	st := &c.s.state
	w := st.Waiting
	c.carry.Approved = append(c.carry.Approved, w.Subject)
	why := "approved by a person"
	if n := strings.TrimSpace(ap.Note); n != "" {
		why += ": " + n
	}
	c.rec.decide(ctx, "", fmt.Sprintf("approved %s %s", w.Kind, w.Subject), why)
	st.Waiting = nil
	c.changed++
	c.s.publish(ctx)
	return st, nil
}

// awaitUnblock waits while nothing is runnable: what is left is blocked
// or depends on something blocked. The run reads blocked meanwhile and a
// handoff says who must do what.
func (c *checkpoints) awaitUnblock(ctx workflow.Context) error {
	st := &c.s.state
	var first *horizon.Blocker
	var ids []string
	for _, m := range st.Plan.Milestones {
		for _, f := range m.Features {
			if f.Status == horizon.FeatureBlocked {
				ids = append(ids, fmt.Sprintf("%s (%s: %s)", f.ID, f.Blocker.Type, f.Blocker.Evidence))
				if first == nil {
					first = f.Blocker
				}
			}
		}
	}
	reason := fmt.Sprintf("nothing runnable: blocked %s; `horizon unblock %s FEATURE --note \"...\"` lets a feature go on", strings.Join(ids, "; "), st.RunID)
	st.Blocker, st.Status, st.ReasonKind, st.Phase, st.Reason = first, horizon.StatusBlocked, horizon.ReasonBlocked, horizon.PhaseBlocked, reason
	// Nothing runs, so nothing backs off: a backoff shown now could only
	// be a late signal of a feature that has ended.
	st.Backoff = nil
	if err := c.rec.save(ctx); err != nil {
		return err
	}
	st.Phase = horizon.PhaseFeatures // where the run goes on once unblocked
	seen := c.changed
	return c.s.waitIn(ctx, horizon.PhaseBlocked, reason, func() bool { return c.changed != seen }, 0)
}

// validateUnblock wants a note and a feature that is blocked.
func (c *checkpoints) validateUnblock(u Unblock) error {
	if strings.TrimSpace(u.Note) == "" {
		return errNoNote
	}
	_, err := c.blockedFeature(u)
	return err
}

// unblock puts a blocked feature back in line with the person's note,
// which its next attempt receives.
func (c *checkpoints) unblock(ctx workflow.Context, u Unblock) (*horizon.RunState, error) {
	st := &c.s.state
	id, err := c.blockedFeature(u)
	if err != nil {
		return st, nil // the validator said so already
	}
	if c.carry.Unblocked == nil {
		c.carry.Unblocked = map[string]time.Time{}
	}
	c.carry.Unblocked[id] = workflow.Now(ctx)
	if bo := st.Backoff; bo != nil && bo.Feature == id {
		c.unblockRunning(ctx, strings.TrimSpace(u.Note))
		c.rec.decide(ctx, id, "unblocked "+id+" while it backed off, stalled", "a person's note: "+strings.TrimSpace(u.Note))
		return st, nil
	}
	if err := st.Plan.Unblock(id, u.Note); err != nil {
		return st, nil
	}
	if c.carry.Notes == nil {
		c.carry.Notes = map[string]string{}
	}
	c.carry.Notes[id] = strings.TrimSpace(u.Note)
	c.rec.decide(ctx, id, "unblocked "+id, "a person's note: "+strings.TrimSpace(u.Note))
	c.changed++
	return st, nil
}

// blockedFeature resolves which feature an unblock names.
func (c *checkpoints) blockedFeature(u Unblock) (string, error) {
	st := &c.s.state
	if st.Plan == nil {
		return "", fmt.Errorf("run %s has no plan yet, so nothing is blocked", st.RunID)
	}
	var blocked []string
	for _, m := range st.Plan.Milestones {
		for _, f := range m.Features {
			if f.Status == horizon.FeatureBlocked {
				blocked = append(blocked, f.ID)
			}
		}
	}
	if bo := st.Backoff; bo != nil && c.unblockRunning != nil {
		// A feature backing off, stalled, is not blocked yet; a person
		// who unblocks it cuts the wait short.
		blocked = append(blocked, bo.Feature)
	}
	switch {
	case len(blocked) == 0:
		return "", fmt.Errorf("run %s has no blocked feature", st.RunID)
	case u.Feature != "" && !slices.Contains(blocked, u.Feature):
		return "", fmt.Errorf("feature %q is not blocked; blocked: %s", u.Feature, strings.Join(blocked, ", "))
	case u.Feature != "":
		return u.Feature, nil
	case len(blocked) > 1:
		return "", fmt.Errorf("several features are blocked (%s): name one", strings.Join(blocked, ", "))
	}
	return blocked[0], nil
}

// errNotWaiting is the approve validator's answer when nothing waits.
var errNotWaiting = errors.New("not waiting for approval")

// checkApproval validates an approval against the checkpoint waited at.
func checkApproval(st *horizon.RunState, ap Approve) error {
	w := st.Waiting
	if w == nil {
		return fmt.Errorf("run %s is %s (%s): %w", st.RunID, st.Status, st.Phase, errNotWaiting)
	}
	if ap.Subject != "" && ap.Subject != w.Subject {
		return fmt.Errorf("run %s waits at %s %q, not %q", st.RunID, w.Kind, w.Subject, ap.Subject)
	}
	return nil
}
