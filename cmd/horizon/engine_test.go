package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/workflows"
)

// The engine's "not found" is said one way by every command: no such run,
// or a run that has ended; anything else goes on unchanged.
func TestRunError(t *testing.T) {
	other := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want string // "" : err unchanged
	}{
		{"ended", fmt.Errorf("update: %w", serviceerror.NewNotFound("workflow execution already completed")), "pause run-1: the run has ended; `horizon status run-1` shows how"},
		{"unknown", fmt.Errorf("describe run run-1: %w", serviceerror.NewNotFound("workflow not found for ID: run-1")), `no run "run-1" in this engine`},
		{"other", other, ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runError("pause", "run-1", tt.err)
			if tt.want == "" {
				require.Equal(t, tt.err, got)
				return
			}
			require.ErrorContains(t, got, tt.want)
			require.Equal(t, ExitUsage, exitCode(got))
		})
	}
}

// A run that refuses a verb (its validator's reason) is bad input, and the
// reason is printed as the workflow wrote it; an ended run is runError's
// to say.
func TestVerbErrors(t *testing.T) {
	err := verbError(&core.RefusedError{Op: workflows.UpdateApprove, ID: "run-1", Reason: "not waiting for approval"})
	require.Equal(t, ExitUsage, exitCode(err))
	require.Equal(t, "approve run-1: not waiting for approval", err.Error())

	ended := &core.EndedError{Op: workflows.UpdateApprove, ID: "run-1"}
	require.Equal(t, error(ended), verbError(ended), "an ended run is runError's to say")
	err = runError(workflows.UpdateApprove, "run-1", verbError(ended))
	require.Equal(t, ExitUsage, exitCode(err))
	require.ErrorContains(t, err, "approve run-1: the run has ended")

	err = verbError(fmt.Errorf("unblock run-1: %w", errors.New("boom")))
	require.Equal(t, ExitUsage, exitCode(err))
	require.Equal(t, "unblock run-1: boom", err.Error())
}
