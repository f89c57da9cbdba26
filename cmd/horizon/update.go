package main

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
)

// update sends an update to workflow id, waits until it completes and
// decodes its answer. Errors come as the engine gave them; each caller
// says them its way (updateError).
func update[T any](ctx context.Context, c client.Client, id, name string, args ...any) (*T, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, err
	}
	var v T
	if err := h.Get(ctx, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// updateRun sends a validated update to a run and returns its new state.
// A rejected update (the validator's reason) is bad input.
func updateRun(ctx context.Context, c client.Client, id, name string, args ...any) (*horizon.RunState, error) {
	s, err := update[horizon.RunState](ctx, c, id, name, args...)
	if err != nil {
		return nil, updateError(id, name, err)
	}
	return s, nil
}

// updateError says why a run refused an update, as bad input (exit 2): a
// validator's reason ("not waiting for approval") is printed as the
// workflow wrote it, without the failure's type and retry annotations. The
// engine's "not found" goes on unchanged: withRun says it (runError).
func updateError(id, name string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return usagef("%s %s: %s", name, id, app.Message())
	}
	return usageError{fmt.Errorf("%s %s: %w", name, id, err)}
}
