package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/workflows"
)

// update sends an update to workflow id, waits until it completes and
// decodes its answer. The engine's errors come back typed (updateError),
// so no surface has to know the engine's.
func update[T any](ctx context.Context, c client.Client, id, name string, args ...any) (*T, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, updateError(id, name, err)
	}
	var v T
	if err := h.Get(ctx, &v); err != nil {
		return nil, updateError(id, name, err)
	}
	return &v, nil
}

// updateError types why a workflow refused an update: an unknown ID
// (*NotFoundError), one that has ended (*EndedError, the engine's "not
// found" that says "completed"), a validator's reason (*RefusedError,
// without the failure's type and retry annotations). Anything else is
// wrapped with the update's name.
func updateError(id, name string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		if strings.Contains(nf.Error(), "completed") {
			return &EndedError{Op: name, ID: id}
		}
		return &NotFoundError{ID: id}
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.Type() == workflows.ErrTypeUnknownEntry {
			return &EntryNotFoundError{RefusedError{Op: name, ID: id, Reason: app.Message()}}
		}
		return &RefusedError{Op: name, ID: id, Reason: app.Message()}
	}
	return fmt.Errorf("%s %s: %w", name, id, err)
}
