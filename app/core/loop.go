package core

// Loops: the one way a surface starts and reads `horizon loop`. A loop is a
// LoopWorkflow whose workflow ID is the loop's ID; what it stands at is its
// query while it runs and its result (or its failure's details) once it
// ended.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// Loops starts and reads loops.
type Loops struct {
	Client    client.Client
	TaskQueue string
	PaidQueue string
	// Spend is the ceilings every loop's turns observe (spend.*).
	Spend workflows.SpendLimits
}

// LoopRequest is one loop to start.
type LoopRequest struct {
	Prompt     string
	Repo       string // the repository's root
	BaseCommit string // its HEAD: where the lane is cut
	Role       string // a leaderboard role
	Model      string // models.default ("": the role decides)
	ModelsFile string
	Max        int
	CompactAt  float64
	Gate       bool
	// ContextLimit is the model's window in tokens (--context-limit);
	// 0: OpenCode's catalog, which must know it.
	ContextLimit int
	Limits       workflows.Limits
}

// NewLoopID is a fresh loop ID, also its workflow ID: "loop-" and the UTC
// start time and random hex.
func NewLoopID() string { return "loop-" + NewTaskID() }

// IsLoopID reports whether id names a loop rather than a run.
func IsLoopID(id string) bool { return strings.HasPrefix(id, "loop-") }

// Start checks the request and starts the loop's workflow; it returns the
// loop's ID.
func (l Loops) Start(ctx context.Context, req LoopRequest) (string, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return "", fmt.Errorf("loop: %w", ErrEmptyPrompt)
	}
	if err := horizon.CheckLoop(req.Max, req.CompactAt); err != nil {
		return "", err
	}
	if req.ContextLimit < 0 {
		return "", fmt.Errorf("loop: --context-limit %d: %w (a window in tokens, or 0 for OpenCode's catalog)", req.ContextLimit, horizon.ErrLoopLimits)
	}
	role, err := horizon.ParseLoopRole(req.Role)
	if err != nil {
		return "", err
	}
	id := NewLoopID()
	in := workflows.LoopWorkflowInput{
		Loop: activities.LoopInput{ID: id, Prompt: strings.TrimSpace(req.Prompt), Repo: req.Repo, BaseCommit: req.BaseCommit, Role: string(role),
			Model: req.Model, ModelsFile: req.ModelsFile, Max: req.Max, CompactAt: req.CompactAt, Gate: req.Gate, ContextLimit: req.ContextLimit},
		Limits: req.Limits, PaidQueue: l.PaidQueue, Spend: l.Spend,
	}
	_, err = l.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                l.TaskQueue,
		StaticSummary:            "loop: " + oneLine(req.Prompt, 180),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflows.LoopWorkflowName, in)
	if err != nil {
		return "", fmt.Errorf("start loop %s: %w", id, err)
	}
	return id, nil
}

// State is where loop id stands, and whether it has ended.
func (l Loops) State(ctx context.Context, id string) (activities.LoopResult, bool, error) {
	var res activities.LoopResult
	desc, err := l.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return res, false, fmt.Errorf("loop %s: %w", id, err)
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		v, err := l.Client.QueryWorkflow(ctx, id, "", workflows.QueryLoop)
		if err != nil {
			return res, false, fmt.Errorf("loop %s: %w", id, err)
		}
		return res, false, v.Get(&res)
	}
	err = l.Client.GetWorkflow(ctx, id, "").Get(ctx, &res)
	if err == nil {
		return res, true, nil
	}
	// A cancelled or failed loop carries its result as the details.
	var canceled *temporal.CanceledError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &canceled) && canceled.HasDetails():
		err = canceled.Details(&res)
	case errors.As(err, &app) && app.HasDetails():
		err = app.Details(&res)
	default:
		res = activities.LoopResult{Loop: id, Status: horizon.LoopFailed, Error: err.Error()}
		if errors.As(err, &canceled) {
			res.Status = horizon.LoopCancelled
		}
		err = nil
	}
	return res, true, err
}

// Wait polls loop id until it ends, calling onState whenever its
// activation, compactions or status change; it returns the end.
func (l Loops) Wait(ctx context.Context, id string, onState func(activities.LoopResult)) (activities.LoopResult, error) {
	var last activities.LoopResult
	for {
		st, ended, err := l.State(ctx, id)
		var nf *serviceerror.NotFound
		switch {
		case err != nil && ctx.Err() != nil:
			return last, ctx.Err()
		case errors.As(err, &nf):
			return last, err
		}
		if err == nil {
			if st.Activations != last.Activations || st.Compactions != last.Compactions || st.Status != last.Status {
				onState(st)
			}
			last = st
			if ended {
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
