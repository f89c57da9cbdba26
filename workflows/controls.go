package workflows

import (
	"fmt"
	"math"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/horizon"
)

// controls are the handlers every run has for a person's commands: the
// status query, pause and resume, the run's and the day's ceilings. A
// planned run forwards each change to its running feature (forward).
type controls struct {
	s       *runStatus
	forward func(ctx workflow.Context) // nil: no feature to tell
}

// registerControls registers the status query and the control updates.
func registerControls(ctx workflow.Context, s *runStatus, forward func(workflow.Context)) error {
	c := &controls{s: s, forward: forward}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, c.status); err != nil {
		return fmt.Errorf("register status query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetCeiling, c.setCeiling,
		workflow.UpdateHandlerOptions{Validator: c.validateCeiling}); err != nil {
		return fmt.Errorf("register set-ceiling update: %w", err)
	}
	if err := workflow.SetUpdateHandler(ctx, UpdatePause, c.pause); err != nil {
		return fmt.Errorf("register %s update: %w", UpdatePause, err)
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateResume, c.resume); err != nil {
		return fmt.Errorf("register %s update: %w", UpdateResume, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetDayCeiling, c.setDayCeiling,
		workflow.UpdateHandlerOptions{Validator: c.validateDayCeiling}); err != nil {
		return fmt.Errorf("register set-day-ceiling update: %w", err)
	}
	workflow.Go(ctx, c.receiveStalled)
	return nil
}

// receiveStalled takes the daily pass's stall flags: the run shows them
// (status, HorizonStalled) and keeps going; its supervisor is told, so
// the roadmap item reads stalled.
func (c *controls) receiveStalled(ctx workflow.Context) {
	ch := workflow.GetSignalChannel(ctx, SignalStalled)
	for {
		var sig StalledSignal
		ch.Receive(ctx, &sig)
		st := &c.s.state
		st.Stalled = sig.Stalls
		if c.s.index {
			if err := workflow.UpsertTypedSearchAttributes(ctx, SearchStalled.ValueSet(len(sig.Stalls) > 0)); err != nil {
				workflow.GetLogger(ctx).Warn("upsert HorizonStalled", "Error", err)
			}
		}
		if c.s.supervisor != "" && len(sig.Stalls) > 0 {
			workflow.SignalExternalWorkflow(ctx, c.s.supervisor, "", SignalRunStatus, RunStatusSignal{
				RunID: st.RunID, Status: st.Status, Reason: st.Reason, Stalled: sig.Stalls[0].Detail,
			})
		}
		c.s.publish(ctx)
	}
}

func (c *controls) status() (*horizon.RunState, error) { return &c.s.state, nil }

func (c *controls) pause(ctx workflow.Context) (*horizon.RunState, error) {
	c.s.state.Paused = true
	return c.changed(ctx)
}

func (c *controls) resume(ctx workflow.Context) (*horizon.RunState, error) {
	c.s.state.Paused = false
	return c.changed(ctx)
}

func (c *controls) setCeiling(ctx workflow.Context, usd float64) (*horizon.RunState, error) {
	c.s.state.Ceiling = usd
	return c.changed(ctx)
}

// validateCeiling refuses a ceiling the run has already spent: it would
// pause the run at once.
func (c *controls) validateCeiling(usd float64) error {
	if err := checkDollars("ceiling", usd); err != nil {
		return err
	}
	if usd != 0 && usd <= c.s.state.Usage.Cost {
		return fmt.Errorf("ceiling $%.4f is not above what the run has spent ($%.4f)", usd, c.s.state.Usage.Cost)
	}
	return nil
}

func (c *controls) setDayCeiling(ctx workflow.Context, usd float64) (*horizon.RunState, error) {
	c.s.state.DayCeiling = usd
	return c.changed(ctx)
}

func (c *controls) validateDayCeiling(usd float64) error {
	return checkDollars("daily ceiling", usd)
}

// checkDollars refuses what is not an amount of dollars: a negative
// amount, and NaN and ±Inf, which compare false with everything (NaN would
// pass every later check and never pause the run) and cannot be written to
// the run's JSON state.
func checkDollars(what string, usd float64) error {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return fmt.Errorf("%s %g: not a number of dollars; give 0 (none) or a positive amount such as 5 or 2.50", what, usd)
	}
	if usd < 0 {
		return fmt.Errorf("%s %g: must be 0 (none) or positive", what, usd)
	}
	return nil
}

// changed tells the running feature (if any) and shows the new state.
func (c *controls) changed(ctx workflow.Context) (*horizon.RunState, error) {
	if c.forward != nil {
		c.forward(ctx)
	}
	c.s.publish(ctx)
	return &c.s.state, nil
}

// registerCeilings registers the status query (phase paused and why,
// at a ceiling) and the two ceiling updates (set-ceiling, and
// with --day set-day-ceiling) on a workflow that is not a run but pays
// for metered calls (a plan, a loop, a task): a pause of the spend
// authority there ends the same way, with `horizon set-ceiling`.
func registerCeilings(ctx workflow.Context, s *runStatus) error {
	c := &controls{s: s}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, c.status); err != nil {
		return fmt.Errorf("register status query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetCeiling, c.setCeiling,
		workflow.UpdateHandlerOptions{Validator: c.validateCeiling}); err != nil {
		return fmt.Errorf("register set-ceiling update: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetDayCeiling, c.setDayCeiling,
		workflow.UpdateHandlerOptions{Validator: c.validateDayCeiling}); err != nil {
		return fmt.Errorf("register set-day-ceiling update: %w", err)
	}
	return nil
}
