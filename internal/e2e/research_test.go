package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// shoutFact is what the loopback documentation page says, and nothing
// else in the run does: the researcher can only have it from the page.
const shoutFact = "shout.sh must print its argument followed by three exclamation marks"

// shoutTool's right code; its worker writes shoutWrong until a brief cites
// the research.
var shoutTool = tool{id: "f1", name: "shout", title: "Add lib/shout.sh",
	code: "#!/bin/sh\n# shout.sh S prints S with three exclamation marks.\nprintf '%s!!!\\n' \"$1\"\n",
	test: "#!/bin/sh\nset -e\n[ \"$(sh lib/shout.sh hi)\" = 'hi!!!' ]\n"}

const shoutWrong = "#!/bin/sh\n# shout.sh S prints S loudly.\nprintf '%s!\\n' \"$1\"\n"

// A planned feature whose gate fails twice reaches the research strategy
// (recovery_escalation_interval 1): before its third attempt the
// researcher (horizon-researcher, in the real OpenCode) fetches a loopback
// documentation page, and a closed port that fails. The fact and both
// URLs, the page fetched and the port failed with its error, are in
// runs/<run>/research/f1.md; the third worker's request cites that file,
// the fact and the sources, and writes the right tool, which is accepted.
// The attempt records the research, and the handoff names it.
func TestResearchStrategyReadsTheWeb(t *testing.T) {
	needsE2E(t)
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>shout docs</title></head><body><h1>shout</h1><p>%s.</p></body></html>", shoutFact)
	}))
	defer docs.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/shout"
	require.NoError(t, l.Close())
	page := docs.URL + "/docs/shout"

	tl := shoutTool
	rules := []fakemodel.Rule{
		{Name: "lead", When: []string{"# Plan"}, Replies: []fakemodel.Reply{{Text: onePlan(t, tl)}}},
		{Name: "researcher", When: []string{"# Research before attempt", tl.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "webfetch", Args: map[string]any{"url": page, "format": "markdown"}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "webfetch", Args: map[string]any{"url": closed, "format": "text"}}}},
			{Text: fmt.Sprintf("Fact: %s (%s). The last attempts printed one.\n\nSources: %s (fetched); %s (failed)", shoutFact, page, page, closed)},
		}},
		{Name: "worker-researched", When: []string{"# Task (attempt", tl.title, "Research notes (runs/"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/shout.sh", tl.code), write("tests/test_shout.sh", tl.test)}},
			{Text: report("lib/shout.sh prints three exclamation marks, as the research notes say")},
		}},
		{Name: "worker-wrong", When: []string{"# Task (attempt", tl.title}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/shout.sh", shoutWrong), write("tests/test_shout.sh", tl.test)}},
			{Text: report("added lib/shout.sh")},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt", tl.title}, Replies: []fakemodel.Reply{{Text: acceptAudit}}},
	}
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"no rule for this request (fakemodel fallback)\"}}\n```"}
	script := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, script.Validate())

	w := plannedWorld(t, script, "HORIZON_RUN_RECOVERY_ESCALATION_INTERVAL=1")
	repo, _ := toolsRepo(t)
	started := time.Now()
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, "Add lib/shout.sh with a test under tests/.")
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	final := w.waitStatus(id, 6*time.Minute, endedWithHandoff)
	defer recordHistory(t, w, id+".f1.1", "feature-research-notes.json")
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	t.Logf("run with research took %s", time.Since(started).Round(time.Second))

	f1, ok := final.Plan.Feature("f1")
	require.True(t, ok)
	require.Len(t, f1.Attempts, 3, "%+v", f1.Attempts)
	rel := "runs/" + id + "/research/f1.md"
	for i, at := range f1.Attempts[:2] {
		require.Nil(t, at.Research, "attempt %d is not under the research strategy", i+1)
	}
	at := f1.Attempts[2]
	require.Equal(t, horizon.StrategyResearch, at.Strategy)
	require.Equal(t, horizon.OutcomeAccepted, at.Outcome)
	require.NotNil(t, at.Research)
	require.Equal(t, rel, at.Research.Path)
	require.Len(t, at.Research.Sources, 2, "%+v", at.Research.Sources)
	require.Equal(t, horizon.Source{URL: page, OK: true}, at.Research.Sources[0])
	require.Equal(t, closed, at.Research.Sources[1].URL)
	require.False(t, at.Research.Sources[1].OK)
	require.NotEmpty(t, at.Research.Sources[1].Error, "a failed fetch carries its error")

	// The notes' file: the fact, the page fetched, the port failed.
	b, err := os.ReadFile(filepath.Join(w.home, filepath.FromSlash(rel)))
	require.NoError(t, err)
	md := string(b)
	require.Contains(t, md, shoutFact)
	require.Contains(t, md, "- "+page+" (fetched)\n")
	require.Contains(t, md, "- "+closed+" (failed: ")

	// The researcher read the page (its tool result), and the next
	// worker's request cites the file, the fact and the sources.
	var read, cited bool
	researched := 0
	for _, r := range w.model.Requests() {
		switch r.Rule {
		case "researcher":
			for _, res := range r.ToolResults {
				read = read || strings.Contains(res, shoutFact)
			}
		case "worker-researched":
			if r.Step == 0 {
				researched++
				require.Contains(t, r.LastUser, "Research notes ("+rel+")")
				require.Contains(t, r.LastUser, shoutFact)
				require.Contains(t, r.LastUser, page+" (fetched)")
				require.Contains(t, r.LastUser, closed+" (failed: ")
				cited = true
			}
		}
	}
	require.True(t, read, "the researcher's webfetch brought the page's text")
	require.True(t, cited, "the worker after the research was briefed with it")
	require.Equal(t, 1, researched)

	// Status and the handoff name the research.
	text, code := w.stdout("status", id)
	require.Equal(t, 0, code, text)
	handoff, err := os.ReadFile(final.Handoff)
	require.NoError(t, err)
	require.Contains(t, string(handoff), "## Research")
	require.Contains(t, string(handoff), "research: "+rel+", 2 sources (1 fetched)")
}
