package console

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

func TestNotesOf(t *testing.T) {
	ev := &horizon.AdviceEvidence{File: "add.sh", Line: 3, ObservedFact: "`$1 - $2`"}
	recs := []horizon.AdviceRecord{
		{ID: "r1.1", Severity: horizon.SeverityBlocker, Delivered: horizon.SeverityBlocker, Note: "add.sh subtracts", Evidence: ev, Verdict: horizon.AdviceDelivered, Woke: true},
		{ID: "r1.2", Severity: horizon.SeverityBlocker, Delivered: horizon.SeverityConcern, Note: "run the tests", Verdict: horizon.AdviceDowngraded},
		{ID: "r1.3", Severity: horizon.SeverityConcern, Note: "it multiplies", Verdict: horizon.AdviceRefuted},
		{ID: "r1.4", Severity: horizon.SeverityNit, Note: "LGTM", Verdict: horizon.AdviceSuppressed},
		{ID: "r2", Verdict: horizon.AdviceFailed, Reason: "timed out"},
	}
	old := []horizon.AdviceRecord{{ID: "r1.1", Severity: horizon.SeverityNit, Delivered: horizon.SeverityNit, Note: "an older attempt's note", Verdict: horizon.AdviceDelivered}}

	single := &horizon.RunState{Attempts: []horizon.Attempt{{N: 1, Advice: old}, {N: 2, Advice: recs}, {N: 3}}}
	require.Equal(t, []AdvisorNote{
		{AdviceNote: horizon.AdviceNote{Severity: horizon.SeverityBlocker, Note: "add.sh subtracts", Evidence: ev}},
		{AdviceNote: horizon.AdviceNote{Severity: horizon.SeverityConcern, Note: "run the tests"}},
	}, NotesOf(single), "the latest attempt with advice; what reached the worker, at the severity it saw")

	planned := &horizon.RunState{Plan: &horizon.Plan{Milestones: []horizon.Milestone{{ID: "m1", Features: []horizon.Feature{
		{ID: "f1", Attempts: []horizon.Attempt{{N: 1, Advice: old}}},
		{ID: "f2", Attempts: []horizon.Attempt{{N: 1}}},
	}}}}}
	require.Equal(t, []AdvisorNote{{Feature: "f1", AdviceNote: horizon.AdviceNote{Severity: horizon.SeverityNit, Note: "an older attempt's note"}}}, NotesOf(planned))

	var many []horizon.AdviceRecord
	for range 8 {
		many = append(many, old[0])
	}
	many[7].Note = "the newest"
	got := NotesOf(&horizon.RunState{Attempts: []horizon.Attempt{{N: 1, Advice: many}}})
	require.Len(t, got, maxNotes)
	require.Equal(t, "the newest", got[maxNotes-1].Note)

	require.Empty(t, NotesOf(nil))
	require.Empty(t, NotesOf(&horizon.RunState{Attempts: []horizon.Attempt{{N: 1}}}))
}
