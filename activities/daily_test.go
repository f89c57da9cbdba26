package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// fakeEngine answers the daily pass's reads and records the windows asked.
type fakeEngine struct {
	runs  []horizon.RunState
	since []time.Time
}

func (f *fakeEngine) RunsSince(_ context.Context, since time.Time) ([]horizon.RunState, error) {
	f.since = append(f.since, since)
	return f.runs, nil
}

func (f *fakeEngine) Supervisors(context.Context) ([]horizon.SupervisorState, error) { return nil, nil }

// A daily pass retried (same Until) writes the same report again; the next
// pass's window starts where the last one ended, so nothing is reported
// twice or missed.
func TestDailyReportIsIdempotentAndChained(t *testing.T) {
	eng := &fakeEngine{runs: []horizon.RunState{{RunID: "run-1", Repo: "/repo", Goal: "g", Status: horizon.StatusRunning, Attempts: []horizon.Attempt{}}}}
	a := &Activities{Home: t.TempDir(), Engine: eng}
	ctx := context.Background()
	day1 := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)

	first, err := a.DailyReport(ctx, DailyInput{Until: day1, StallAttempts: 6})
	require.NoError(t, err)
	require.Equal(t, "2026-12-01", first.Date)
	md1, err := os.ReadFile(first.Markdown)
	require.NoError(t, err)
	js1, err := os.ReadFile(first.JSON)
	require.NoError(t, err)

	again, err := a.DailyReport(ctx, DailyInput{Until: day1, StallAttempts: 6})
	require.NoError(t, err)
	require.Equal(t, first, again)
	md2, _ := os.ReadFile(again.Markdown)
	js2, _ := os.ReadFile(again.JSON)
	require.Equal(t, md1, md2, "a retried pass writes the same report")
	require.Equal(t, js1, js2)
	require.Equal(t, []time.Time{day1.Add(-24 * time.Hour), day1.Add(-24 * time.Hour)}, eng.since, "the first pass looks back a day, also when retried")

	day2 := day1.Add(24 * time.Hour)
	_, err = a.DailyReport(ctx, DailyInput{Until: day2, StallAttempts: 6})
	require.NoError(t, err)
	require.Equal(t, day1, eng.since[2], "the next pass starts where the last ended")
	entries, err := os.ReadDir(filepath.Join(a.Home, "reports"))
	require.NoError(t, err)
	require.Len(t, entries, 4, "two days, .md and .json each")

	_, err = (&Activities{Home: t.TempDir()}).DailyReport(ctx, DailyInput{Until: day1})
	require.ErrorContains(t, err, "no engine reader")
}
