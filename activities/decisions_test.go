package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
)

var decisionTime = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func decision(seq int, what string) horizon.Decision {
	return horizon.Decision{Seq: seq, At: decisionTime.Add(time.Duration(seq) * time.Minute), Feature: "f1", What: what, Why: "because " + what}
}

func seqs(t *testing.T, path string) []int {
	t.Helper()
	ds, err := ReadDecisions(path)
	require.NoError(t, err)
	var out []int
	for _, d := range ds {
		out = append(out, d.Seq)
	}
	return out
}

func TestSavePlanAppendsEachDecisionOnce(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	ctx := context.Background()
	p1 := horizon.Plan{Goal: "g", Revision: 1, Ambiguity: horizon.AmbiguityLow}
	p2 := p1
	p2.Revision = 2

	out, err := a.SavePlan(ctx, PlanArtifacts{RunID: testRun, Plan: p1, Decisions: []horizon.Decision{decision(1, "a"), decision(2, "b")}})
	require.NoError(t, err)
	require.Equal(t, 2, out.Decisions)
	require.Equal(t, filepath.Join(a.Home, "runs", testRun, "plan.json"), out.PlanPath)
	require.Equal(t, filepath.Join(a.Home, "runs", testRun, "decisions.jsonl"), out.DecisionsPath)

	// The workflow passes decisions it may have passed before, and a
	// retried activity passes the same ones again.
	for range 2 {
		out, err = a.SavePlan(ctx, PlanArtifacts{RunID: testRun, Plan: p2, Decisions: []horizon.Decision{decision(2, "b"), decision(3, "c"), decision(3, "c")}})
		require.NoError(t, err)
		require.Equal(t, 3, out.Decisions)
	}
	require.Equal(t, []int{1, 2, 3}, seqs(t, out.DecisionsPath))
	b, err := os.ReadFile(out.DecisionsPath)
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(b), "\n"), "one JSON object per line")

	var saved horizon.Plan
	b, err = os.ReadFile(out.PlanPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &saved))
	require.Equal(t, 2, saved.Revision, "plan.json holds the last plan")
	require.Contains(t, string(b), "\n  \"goal\": \"g\"", "indented")

	// No decisions: the plan is still written, the count read back.
	out, err = a.SavePlan(ctx, PlanArtifacts{RunID: testRun, Plan: p1})
	require.NoError(t, err)
	require.Equal(t, 3, out.Decisions)
}

func TestSavePlanRejectsBadDecisions(t *testing.T) {
	noWhy := decision(1, "a")
	noWhy.Why = " "
	noTime := decision(1, "a")
	noTime.At = time.Time{}
	tests := []struct {
		name string
		in   PlanArtifacts
		want string
	}{
		{name: "seq 0", in: PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{decision(0, "a")}}, want: "seq 0"},
		{name: "negative seq", in: PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{decision(1, "a"), decision(-1, "b")}}, want: "seq -1"},
		{name: "no why", in: PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{noWhy}}, want: "does not say why"},
		{name: "no time", in: PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{noTime}}, want: "no time"},
		{name: "no run", in: PlanArtifacts{}, want: "no run ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Home: t.TempDir()}
			_, err := a.SavePlan(context.Background(), tt.in)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, ErrTypeBadInput, appErr.Type())
			require.True(t, appErr.NonRetryable())
			require.ErrorContains(t, err, tt.want)
			require.NoDirExists(t, filepath.Join(a.Home, "runs", testRun), "nothing written")
		})
	}
}

func TestReadDecisions(t *testing.T) {
	line := func(d horizon.Decision) string {
		b, err := json.Marshal(d)
		require.NoError(t, err)
		return string(b)
	}
	d1, d2 := line(decision(1, "a")), line(decision(2, "b"))
	tests := []struct {
		name    string
		file    *string // nil: no file
		want    []int
		wantErr string
	}{
		{name: "missing file", file: nil, want: nil},
		{name: "empty file", file: ptr(""), want: nil},
		{name: "whole lines", file: ptr(d1 + "\n" + d2 + "\n"), want: []int{1, 2}},
		{name: "blank lines", file: ptr(d1 + "\n\n" + d2 + "\n"), want: []int{1, 2}},
		{name: "torn last line", file: ptr(d1 + "\n" + d2[:len(d2)/2]), want: []int{1}},
		{name: "last line whole but its newline lost", file: ptr(d1 + "\n" + d2), want: []int{1, 2}},
		{name: "bad middle line", file: ptr(d1 + "\n{not json\n" + d2 + "\n"), wantErr: "line 2"},
		{name: "bad last line with its newline", file: ptr(d1 + "\n{not json\n"), wantErr: "line 2"},
		{name: "decision without seq", file: ptr(`{"at":"2026-03-01T09:00:00Z","what":"a","why":"b"}` + "\n"), wantErr: "line 1"},
		{name: "decision without why", file: ptr(`{"seq":1,"at":"2026-03-01T09:00:00Z","what":"a"}` + "\n" + d2 + "\n"), wantErr: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "decisions.jsonl")
			if tt.file != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tt.file), 0o600))
			}
			ds, err := ReadDecisions(path)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorContains(t, err, path)
				return
			}
			require.NoError(t, err)
			var got []int
			for _, d := range ds {
				got = append(got, d.Seq)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// A crash tore the last append; the next SavePlan cuts the torn line off
// before appending, so it never ends up mid-file.
func TestSavePlanAfterTornWrite(t *testing.T) {
	tests := []struct {
		name string
		tail func(d2 string) string
	}{
		{name: "torn line", tail: func(d2 string) string { return d2[:len(d2)-5] }},
		{name: "newline lost", tail: func(d2 string) string { return d2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Home: t.TempDir()}
			out, err := a.SavePlan(context.Background(), PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{decision(1, "a")}})
			require.NoError(t, err)
			b, err := json.Marshal(decision(2, "b"))
			require.NoError(t, err)
			f, err := os.OpenFile(out.DecisionsPath, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(tt.tail(string(b)))
			require.NoError(t, err)
			require.NoError(t, f.Close())

			out, err = a.SavePlan(context.Background(), PlanArtifacts{RunID: testRun, Decisions: []horizon.Decision{decision(2, "b"), decision(3, "c")}})
			require.NoError(t, err)
			require.Equal(t, 3, out.Decisions)
			require.Equal(t, []int{1, 2, 3}, seqs(t, out.DecisionsPath))
		})
	}
}

func ptr(s string) *string { return &s }
