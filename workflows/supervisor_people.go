package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// people are a supervisor's handlers for what a person asks of it: the
// status query, the queue's updates, approvals of decomposed plans, pause,
// resume and stop. Each changes the state and wakes the loop.
type people struct{ s *supervisor }

// register installs the supervisor's query, updates and signals.
func (s *supervisor) register(ctx workflow.Context) error {
	h := people{s: s}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, h.status); err != nil {
		return fmt.Errorf("register status query: %w", err)
	}
	updates := []struct {
		name     string
		handler  any
		validate any
	}{
		{UpdateQueueAdd, h.queueAdd, h.queueAddCheck},
		{UpdateQueueRemove, h.queueRemove, h.queueEntryCheck},
		{UpdateQueueMove, h.queueMove, h.queueMoveCheck},
		{UpdateApprove, h.approve, h.approveCheck},
		{UpdatePause, h.pause, nil},
		{UpdateResume, h.resume, nil},
		{UpdateStop, h.stop, nil},
	}
	for _, u := range updates {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler, workflow.UpdateHandlerOptions{Validator: u.validate}); err != nil {
			return fmt.Errorf("register %s update: %w", u.name, err)
		}
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, SignalRunStatus)
		for {
			var sig RunStatusSignal
			ch.Receive(ctx, &sig)
			s.statuses = append(s.statuses, sig)
			s.changed++
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, SignalDecompose)
		for {
			var n int
			ch.Receive(ctx, &n)
			s.in.Decompose = max(s.in.Decompose, n, 1)
			s.changed++
		}
	})
	return nil
}

func (h people) status() (*horizon.SupervisorState, error) { return &h.s.st, nil }

func (h people) queueAddCheck(e horizon.QueueEntry) error {
	q := horizon.Queue{Entries: slices.Clone(h.s.st.Queue.Entries), Seq: h.s.st.Queue.Seq}
	e.Kind = horizon.EntryGoal
	_, err := q.Add(e)
	return err
}

func (h people) queueAdd(ctx workflow.Context, e horizon.QueueEntry) (horizon.QueueEntry, error) {
	e.Kind, e.Plan, e.AddedAt = horizon.EntryGoal, nil, workflow.Now(ctx)
	added, err := h.s.st.Queue.Add(e)
	if err != nil {
		return horizon.QueueEntry{}, err
	}
	h.s.changed++
	h.s.publish(ctx)
	return added, nil
}

// ErrTypeUnknownEntry types a validator's refusal of a queue entry ID the
// queue does not hold, so readers can answer "not found" rather than
// "refused".
const ErrTypeUnknownEntry = "UnknownQueueEntry"

func (h people) queueEntryCheck(id string) error {
	if _, ok := h.s.st.Queue.Get(id); !ok {
		return temporal.NewApplicationError(fmt.Sprintf("no queue entry %q in %s's queue: `horizon queue list --repo %s` shows them", id, h.s.st.Repo, h.s.st.Repo), ErrTypeUnknownEntry)
	}
	return nil
}

func (h people) queueRemove(ctx workflow.Context, id string) (*horizon.SupervisorState, error) {
	if _, err := h.s.st.Queue.Remove(id); err != nil {
		return nil, err
	}
	h.s.changed++
	h.s.publish(ctx)
	return &h.s.st, nil
}

func (h people) queueMoveCheck(m QueueMove) error {
	if !m.Top {
		return errors.New("queue move: say where (--top)")
	}
	return h.queueEntryCheck(m.ID)
}

func (h people) queueMove(ctx workflow.Context, m QueueMove) (*horizon.SupervisorState, error) {
	if err := h.s.st.Queue.MoveTop(m.ID); err != nil {
		return nil, err
	}
	h.s.changed++
	h.s.publish(ctx)
	return &h.s.st, nil
}

func (h people) approveCheck(ap Approve) error {
	e, ok := h.s.st.Queue.Get(ap.Subject)
	if !ok {
		return fmt.Errorf("no queued plan %q in %s's queue", ap.Subject, h.s.st.Repo)
	}
	if !h.s.st.NeedsApproval(e) {
		return fmt.Errorf("%s does not wait for approval (autonomy %s)", e.ID, h.s.st.Autonomy)
	}
	return nil
}

func (h people) approve(ctx workflow.Context, ap Approve) (*horizon.SupervisorState, error) {
	e, _ := h.s.st.Queue.Get(ap.Subject)
	h.s.st.Approved = append(h.s.st.Approved, e.ID)
	h.s.changed++
	h.s.publish(ctx)
	return &h.s.st, nil
}

func (h people) pause(ctx workflow.Context) (*horizon.SupervisorState, error) {
	h.s.st.Status = horizon.SupervisorPaused
	h.s.changed++
	h.s.publish(ctx)
	return &h.s.st, nil
}

func (h people) resume(ctx workflow.Context) (*horizon.SupervisorState, error) {
	if h.s.st.Status == horizon.SupervisorPaused {
		h.s.st.Status = horizon.SupervisorRunning
	}
	h.s.changed++
	h.s.publish(ctx)
	return &h.s.st, nil
}

// stop ends the supervisor. It answers once the supervisor has ended
// (a decomposition in flight is cancelled first), or after stopAnswer
// with the state saying what the supervisor still waits for (Waiting:
// "stopping: ..."), e.g. a gate on a merge. Histories from before
// changeStopEnds answer at once, as they did.
func (h people) stop(ctx workflow.Context) (*horizon.SupervisorState, error) {
	s := h.s
	s.stopping = true
	s.changed++
	if workflow.GetVersion(ctx, changeStopEnds, workflow.DefaultVersion, 1) < 1 {
		return &s.st, nil
	}
	s.stopEnds = true
	if ok, _ := workflow.AwaitWithTimeout(ctx, stopAnswer, func() bool { return s.ended }); ok {
		return &s.st, nil
	}
	st := s.st
	st.Waiting, st.WaitingSince = "stopping: it waits for "+s.stopWaitsFor(), workflow.Now(ctx)
	return &st, nil
}
