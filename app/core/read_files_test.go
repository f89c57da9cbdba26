package core

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"

	"github.com/horizon/horizon/workflows"
)

// Each day of the ledger counts each key once; a day without a ledger
// spent nothing; the day ceiling is shown with each day.
func TestSpendDays(t *testing.T) {
	days, err := Spend{DataDir: "testdata/home", DayCeiling: 2}.Days(time.Date(2026, 3, 3, 23, 0, 0, 0, time.UTC), 4)
	require.NoError(t, err)
	require.Equal(t, []horizon.DaySpend{
		{Day: "2026-02-28", Ceiling: 2},
		{Day: "2026-03-01", Spent: 0.5, Ceiling: 2},
		{Day: "2026-03-02", Ceiling: 2},
		{Day: "2026-03-03", Spent: 2, Ceiling: 2, AtCeiling: true},
	}, days)
}

func TestReports(t *testing.T) {
	r := Reports{DataDir: "testdata/home"}
	latest, err := r.Latest()
	require.NoError(t, err)
	require.Equal(t, "2026-03-03", latest)
	md, err := r.Markdown("2026-03-02")
	require.NoError(t, err)
	require.Equal(t, "# Daily report 2026-03-02\n", string(md))
	js, err := r.JSON(latest)
	require.NoError(t, err)
	require.JSONEq(t, `{"date":"2026-03-03"}`, string(js))

	var nr *NoReportError
	_, err = r.Markdown("2026-01-01")
	require.ErrorAs(t, err, &nr)
	_, err = Reports{DataDir: t.TempDir()}.Latest()
	require.ErrorAs(t, err, &nr)
	require.Contains(t, err.Error(), "no daily report yet")
}

// The engine's errors of an update come back typed, so a surface can say
// them its way without knowing the engine's.
func TestUpdateError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"validator", fmt.Errorf("update: %w", temporal.NewApplicationError("not waiting for approval", "*errors.errorString")),
			&RefusedError{Op: "approve", ID: "run-1", Reason: "not waiting for approval"}},
		{"ended", serviceerror.NewNotFound("workflow execution already completed"), &EndedError{Op: "approve", ID: "run-1"}},
		{"unknown", serviceerror.NewNotFound("workflow not found for ID: run-1"), &NotFoundError{ID: "run-1"}},
		{"unknown queue entry", fmt.Errorf("update: %w", temporal.NewApplicationError("no queue entry \"q9\"", workflows.ErrTypeUnknownEntry)),
			&EntryNotFoundError{RefusedError{Op: "approve", ID: "run-1", Reason: "no queue entry \"q9\""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, updateError("run-1", "approve", tt.err))
		})
	}
	err := updateError("run-1", "unblock", errors.New("boom"))
	require.EqualError(t, err, "unblock run-1: boom")
}
