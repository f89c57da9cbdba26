package activities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// A worker's 10,000-character report summary leaves the session bounded
// to horizon.MaxSummary characters, naming the file under the run's
// summaries/ that holds the whole; a retry rewrites the same file. A
// short summary is left alone and writes nothing.
func TestBoundOutputReport(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	in := SessionInput{RunID: "run-1", Feature: "f1", Attempt: 2, Role: horizon.RoleWorker}
	long := strings.Repeat("the parser now reads the report blocks; ", 250) // 10,000 characters
	require.Equal(t, 10000, utf8.RuneCountInString(long))
	file := filepath.Join(a.runDir("run-1"), "summaries", "f1-2-worker-summary.md")

	var first string
	for try := range 2 {
		out := SessionOutput{Report: &horizon.Report{Status: horizon.ReportSatisfied, Summary: long}}
		require.NoError(t, boundOutput(a.runDir(in.RunID), in, &out))
		got := out.Report.Summary
		require.LessOrEqual(t, utf8.RuneCountInString(got), horizon.MaxSummary)
		require.True(t, strings.HasSuffix(got, "… [full text: runs/run-1/summaries/f1-2-worker-summary.md, 10000 characters]"), got[len(got)-120:])
		require.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, horizon.SummaryMarker("runs/run-1/summaries/f1-2-worker-summary.md", 10000))))
		kept, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, long, string(kept))
		if try == 0 {
			first = got
		}
		require.Equal(t, first, got, "a retry gives the same text")
	}

	short := SessionOutput{Report: &horizon.Report{Status: horizon.ReportContinue, Summary: "half done"}}
	in.Attempt = 3
	require.NoError(t, boundOutput(a.runDir(in.RunID), in, &short))
	require.Equal(t, "half done", short.Report.Summary)
	require.NoFileExists(t, filepath.Join(a.runDir("run-1"), "summaries", "f1-3-worker-summary.md"))
}

// Every other hand-back is bounded the same way, each to its own file:
// the auditor's finding notes, the explorer's notes, the lead's
// assumptions, the reader's diagnosis and the advisor's notes.
func TestBoundOutputEveryField(t *testing.T) {
	a := &Activities{Home: t.TempDir()}
	dir := a.runDir("run-1")
	long := strings.Repeat("é", horizon.MaxSummary+1)
	check := func(got, name string) {
		t.Helper()
		require.LessOrEqual(t, utf8.RuneCountInString(got), horizon.MaxSummary)
		require.Contains(t, got, "runs/run-1/summaries/"+name)
		kept, err := os.ReadFile(filepath.Join(dir, "summaries", name))
		require.NoError(t, err)
		require.Equal(t, long, string(kept))
	}

	audit := SessionOutput{Audit: &horizon.Audit{Verdict: horizon.VerdictReject, Findings: []horizon.Finding{
		{Severity: horizon.SeverityNit, Note: "short"}, {Severity: horizon.SeverityBlocker, Note: long}}}}
	require.NoError(t, boundOutput(dir, SessionInput{RunID: "run-1", Feature: "f1", Attempt: 1, Role: horizon.RoleAuditor}, &audit))
	require.Equal(t, "short", audit.Audit.Findings[0].Note)
	check(audit.Audit.Findings[1].Note, "f1-1-auditor-finding-2.md")

	explore := SessionOutput{Notes: long}
	require.NoError(t, boundOutput(dir, SessionInput{RunID: "run-1", Feature: "f1", Attempt: 2, Role: horizon.RoleExplorer}, &explore))
	check(explore.Notes, "f1-2-explorer-notes.md")

	plan := SessionOutput{Plan: &horizon.Plan{Assumptions: []string{long, "Go 1.24"}}}
	require.NoError(t, boundOutput(dir, SessionInput{RunID: "run-1", Feature: "plan", Attempt: 1, Role: horizon.RoleLead}, &plan))
	check(plan.Plan.Assumptions[0], "plan-1-lead-assumption-1.md")
	require.Equal(t, "Go 1.24", plan.Plan.Assumptions[1])

	diag := DiagnoseOutput{Text: long}
	require.NoError(t, boundDiagnosis(dir, "run-1", "f1", 3, &diag))
	check(diag.Text, "f1-3-reader-diagnosis.md")

	recs := []horizon.AdviceRecord{{ID: "r1.1", Note: long}, {ID: "r1.2", Note: "fine"}}
	require.NoError(t, boundAdvice(dir, AdvisorInput{RunID: "run-1", Feature: "f1", Attempt: 4}, recs))
	check(recs[0].Note, "f1-4-advisor-note-r1.1.md")
	require.Equal(t, "fine", recs[1].Note)
}

// A feature ID a model wrote cannot put a summary outside the run's
// summaries folder.
func TestSummaryNameStaysInItsFolder(t *testing.T) {
	require.Equal(t, "f1-2-worker-summary", summaryName("f1", 2, "worker", "summary"))
	require.Equal(t, "_.._etc_passwd-1-worker-summary", summaryName("/../etc/passwd", 1, "worker", "summary"))
	require.Equal(t, "_-1-reader-diagnosis", summaryName("", 1, "reader", "diagnosis"))
}
