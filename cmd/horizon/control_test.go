package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/workflows"
)

func TestApproveFlags(t *testing.T) {
	var gotID string
	var got approveOptions
	cmd := newApproveCmd(func(_ context.Context, id string, o approveOptions) error {
		gotID, got = id, o
		return nil
	})
	cmd.SetArgs([]string{"run-1", "--subject", "m2", "--note", "CSV first", "--json"})
	require.NoError(t, cmd.Execute())
	require.Equal(t, "run-1", gotID)
	require.Equal(t, approveOptions{subject: "m2", note: "CSV first", json: true}, got)

	cmd = newApproveCmd(func(context.Context, string, approveOptions) error { return nil })
	cmd.SetArgs([]string{})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	require.Error(t, cmd.Execute(), "RUN is required")
}

// unblock sends the feature it names, and refuses to go without a note.
func TestUnblockSendsFeature(t *testing.T) {
	var got workflows.Unblock
	run := func(_ context.Context, _ string, u workflows.Unblock) error { got = u; return nil }
	cmd := newUnblockCmd(run)
	cmd.SetArgs([]string{"run-1", "f3", "--note", "key added"})
	require.NoError(t, cmd.Execute())
	require.Equal(t, workflows.Unblock{Feature: "f3", Note: "key added"}, got)

	got = workflows.Unblock{}
	cmd = newUnblockCmd(run)
	cmd.SetArgs([]string{"run-1", "--note", "key added"})
	require.NoError(t, cmd.Execute())
	require.Equal(t, workflows.Unblock{Note: "key added"}, got)

	cmd = newUnblockCmd(run)
	cmd.SetArgs([]string{"run-1", "f3"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	require.ErrorContains(t, err, "--note is required")
	require.Equal(t, ExitUsage, exitCode(err))
}

// A run that refuses an update (its validator's reason) is bad input, and
// the reason is printed as the workflow wrote it.
func TestUpdateErrors(t *testing.T) {
	rejected := temporal.NewApplicationError("not waiting for approval", "*errors.errorString")
	err := updateError("run-1", workflows.UpdateApprove, fmt.Errorf("update: %w", rejected))
	require.Equal(t, ExitUsage, exitCode(err))
	require.Equal(t, "approve run-1: not waiting for approval", err.Error())

	err = updateError("run-1", workflows.UpdateApprove, serviceerror.NewNotFound("workflow execution already completed"))
	require.Equal(t, ExitUsage, exitCode(err))
	require.Contains(t, err.Error(), "the run has ended")

	err = updateError("run-9", workflows.UpdateApprove, serviceerror.NewNotFound("workflow not found for ID: run-9"))
	require.Equal(t, ExitUsage, exitCode(err))
	require.Contains(t, err.Error(), `no run "run-9"`)

	err = updateError("run-1", workflows.UpdateUnblock, errors.New("boom"))
	require.Equal(t, ExitUsage, exitCode(err))
	require.Equal(t, "unblock run-1: boom", err.Error())
}
