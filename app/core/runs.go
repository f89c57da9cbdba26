package core

// The verbs on runs: the one way a surface starts, steers and cancels a
// run (workflows.RunWorkflowTypes) or a PlanWorkflow.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// Runs changes horizon's runs in one namespace; new ones go to TaskQueue.
type Runs struct {
	Client    client.Client
	Namespace string
	TaskQueue string
}

// Approve lets a run waiting at a checkpoint go on. A non-empty
// a.Subject must name the checkpoint, so a late approval cannot pass the
// next one.
func (r Runs) Approve(ctx context.Context, id string, a workflows.Approve) (*horizon.RunState, error) {
	return update[horizon.RunState](ctx, r.Client, id, workflows.UpdateApprove, a)
}

// Unblock puts a blocked feature ("" for a one-feature run) back in line
// with the person's note.
func (r Runs) Unblock(ctx context.Context, id string, u workflows.Unblock) (*horizon.RunState, error) {
	return update[horizon.RunState](ctx, r.Client, id, workflows.UpdateUnblock, u)
}

// Skip leaves a planned run's feature out with a person's note.
func (r Runs) Skip(ctx context.Context, id string, sk workflows.Skip) (*horizon.RunState, error) {
	return update[horizon.RunState](ctx, r.Client, id, workflows.UpdateSkip, sk)
}

// Pause holds a run before its next attempt.
func (r Runs) Pause(ctx context.Context, id string) (*horizon.RunState, error) {
	return update[horizon.RunState](ctx, r.Client, id, workflows.UpdatePause)
}

// Resume lets a paused run go on.
func (r Runs) Resume(ctx context.Context, id string) (*horizon.RunState, error) {
	return update[horizon.RunState](ctx, r.Client, id, workflows.UpdateResume)
}

// SetCeiling sets a run's spend ceiling in USD, or with day the daily
// ceiling it observes.
func (r Runs) SetCeiling(ctx context.Context, id string, usd float64, day bool) (*horizon.RunState, error) {
	name := workflows.UpdateSetCeiling
	if day {
		name = workflows.UpdateSetDayCeiling
	}
	return update[horizon.RunState](ctx, r.Client, id, name, usd)
}

// Cancel asks the engine to cancel a running workflow; it stops in the
// background. The engine accepts cancelling a closed one silently: that
// is refused here (*EndedError), like an update to it.
func (r Runs) Cancel(ctx context.Context, id string) error {
	desc, err := r.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return &NotFoundError{ID: id}
		}
		return fmt.Errorf("describe run %s: %w", id, err)
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return &EndedError{Op: "cancel", ID: id}
	}
	if err := r.Client.CancelWorkflow(ctx, id, ""); err != nil {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	return nil
}

// Start starts a run of in (its RunID set), with the search attributes
// when the namespace knows them.
func (r Runs) Start(ctx context.Context, in workflows.RunInput) error {
	withSA := HasSearchAttributes(ctx, r.Client, r.Namespace)
	err := r.start(ctx, in, withSA)
	if err != nil && withSA && strings.Contains(err.Error(), "search attribute") {
		// Registered but not yet known to the frontend (its namespace
		// cache lags a moment): the run goes without them.
		err = r.start(ctx, in, false)
	}
	if err != nil {
		return fmt.Errorf("start run %s: %w", in.RunID, err)
	}
	return nil
}

func (r Runs) start(ctx context.Context, in workflows.RunInput, withSA bool) error {
	var sa temporal.SearchAttributes
	if withSA {
		in.SearchAttributes = true
		sa = temporal.NewSearchAttributes(workflows.SearchRepo.ValueSet(in.Repo), workflows.SearchStatus.ValueSet(string(horizon.StatusRunning)))
	}
	typ, arg := in.Start()
	_, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		TypedSearchAttributes:    sa,
		ID:                       in.RunID,
		TaskQueue:                r.TaskQueue,
		StaticSummary:            summary(in.Goal, 200),
		StaticDetails:            fmt.Sprintf("Goal:\n\n%s\n\nRepository `%s` at `%s` (%s). Accepted work lands on `%s`.", in.Goal, in.Repo, in.BaseCommit, in.BaseRef, horizon.IntegrationBranch(in.RunID)),
		Memo:                     map[string]any{workflows.MemoGoal: in.Goal, workflows.MemoRepo: in.Repo},
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, typ, arg)
	return err
}

// StartPlan starts planning a goal without running it; the handle's Get
// gives the workflows.PlanResult (or the failure with it as details).
func (r Runs) StartPlan(ctx context.Context, in workflows.PlanInput) (client.WorkflowRun, error) {
	h, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: in.RunID, TaskQueue: r.TaskQueue, StaticSummary: "plan: " + summary(in.Goal, 190),
	}, workflows.PlanWorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start planning: %w", err)
	}
	return h, nil
}

// HasSearchAttributes reports whether the namespace knows HorizonRepo and
// HorizonStatus (a remote cluster may not: runs then go without them).
func HasSearchAttributes(ctx context.Context, c client.Client, namespace string) bool {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return false
	}
	custom := resp.GetCustomAttributes()
	_, repo := custom[workflows.SearchRepo.GetName()]
	_, status := custom[workflows.SearchStatus.GetName()]
	return repo && status
}

// summary folds whitespace and cuts a text to n runes, for summaries.
func summary(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
