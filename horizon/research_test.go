package horizon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResearchNoteSummary(t *testing.T) {
	n := &ResearchNote{Path: ResearchPath("r1", "f2"), Sources: []Source{
		{URL: "https://pkg.go.dev/strconv", OK: true}, {URL: "https://go.dev/doc", Error: "dial tcp: lookup go.dev: no such host"},
	}}
	require.Equal(t, "runs/r1/research/f2.md, 2 sources (1 fetched)", n.Summary())
	require.Equal(t, "runs/r1/research/f1.md, 0 sources (0 fetched)", (&ResearchNote{Path: ResearchPath("r1", "")}).Summary())
	require.Equal(t, "none: the session failed: too long", (&ResearchNote{Error: "the session failed:\ntoo long"}).Summary())
	var none *ResearchNote
	require.Empty(t, none.Summary())
}

// The worker's brief cites the file, the notes and every source, fetched
// or failed with its error; the research file lists them one per line.
func TestResearchGuidanceCitesFileAndSources(t *testing.T) {
	sources := []Source{{URL: "https://a.example/doc", OK: true}, {URL: "http://127.0.0.1:9/x", Error: "Transport error\n(GET http://127.0.0.1:9/x)"}}
	g := ResearchGuidance("runs/r1/research/f1.md", "Atoi takes no plus.", sources)
	require.Contains(t, g, "## Research notes (runs/r1/research/f1.md)")
	require.Contains(t, g, "Atoi takes no plus.")
	require.Contains(t, g, "Sources: https://a.example/doc (fetched); http://127.0.0.1:9/x (failed: Transport error (GET http://127.0.0.1:9/x))")
	require.Contains(t, ResearchGuidance("p", "", nil), "Sources: no web page fetched (files only)")

	many := make([]Source, maxGuidanceSources+3)
	for i := range many {
		many[i] = Source{URL: "https://e.example/" + strings.Repeat("x", i), OK: true}
	}
	require.Contains(t, SourcesLine(many), "and 3 more in the file")

	md := ResearchMarkdown("r1", "f1", 5, "ses_1", "fake/m", "notes\x1b]0;t\a", sources, []string{"calc/a.go"})
	require.Contains(t, md, "# Research · r1 · f1 · before attempt 5")
	require.Contains(t, md, "- https://a.example/doc (fetched)\n- http://127.0.0.1:9/x (failed: Transport error (GET http://127.0.0.1:9/x))\n")
	require.Contains(t, md, "## Files read\n\n- calc/a.go\n")
	require.NotContains(t, md, "\x1b", "the notes are untrusted text")
}

// The researcher's brief carries the feature and the last attempt's
// evidence, and none of the headings other agents' briefs start with.
func TestResearchBrief(t *testing.T) {
	prev := &Attempt{N: 4, Outcome: OutcomeGateFailed, Gate: &GateRun{Command: "go test ./...", Verdict: "fail", ExitCode: 1, Tail: "FAIL TestX"}}
	b := ResearchBrief("Feature f2: parse", 5, prev)
	require.Contains(t, b, "# Research before attempt 5")
	require.Contains(t, b, "Feature f2: parse")
	require.Contains(t, b, "FAIL TestX")
	require.Contains(t, b, "webfetch")
	for _, h := range []string{"# Task (attempt", "# Audit (attempt", "# Plan", "# Decompose"} {
		require.NotContains(t, b, h)
	}
}

// The handoff has one research line per feature that researched: its
// latest note.
func TestHandoffNamesResearch(t *testing.T) {
	note := func(n int) *ResearchNote {
		return &ResearchNote{Path: "runs/r1/research/f2.md", Sources: make([]Source, n)}
	}
	p := Plan{Goal: "g", Milestones: []Milestone{{ID: "m1", Title: "m", Features: []Feature{
		{ID: "f1", Title: "a", Status: FeaturePending},
		{ID: "f2", Title: "b", Status: FeaturePending, Attempts: []Attempt{{N: 1}, {N: 2, Research: note(1)}, {N: 3, Research: note(2)}}},
	}}}}
	h := Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Plan: p})
	require.Contains(t, h, "\n## Research\n\n- **f2** attempt 3: research: runs/r1/research/f2.md, 2 sources (0 fetched)\n")
	require.Equal(t, 1, strings.Count(h, "research: runs/"))
	require.NotContains(t, Handoff(HandoffInput{RunID: "r1", Status: StatusCompleted, Plan: Plan{Goal: "g"}}), "## Research")
}
