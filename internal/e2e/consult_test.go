package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// The worker asks the consult_advisor tool before it changes anything:
// OpenCode starts `horizon mcp` in the lane, the tool asks the consult model
// in a read-only session with the worker's latest messages, and the answer
// comes back to the worker as the tool's result (what the model receives
// next). The consult is on the attempt in `horizon status --json`, and its
// cost is in the run's spend and in the day's spend ledger.
func TestWorkerConsultsAdvisor(t *testing.T) {
	needsE2E(t)
	const (
		question = "Should the fix change the operator in add.sh or rewrite the script?"
		advice   = "ADVICE-7f3: change only the operator on line 3 of add.sh; the tests already cover the sum."
		report   = "Fixed the operator as advised.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"add.sh used - instead of +; fixed the operator\"}\n```"
		accept   = "The fix is right.\n\n```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"
	)
	use := func(in, out int) *fakemodel.Usage { return &fakemodel.Usage{PromptTokens: in, CompletionTokens: out} }
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{
			// First: the consultant is shown the worker's brief too.
			Name:    "consultant",
			When:    []string{"You are horizon's consultant", question},
			Replies: []fakemodel.Reply{{Text: advice, Usage: use(3000, 500)}},
		},
		{
			Name: "worker",
			When: []string{"# Task (attempt 1 of"},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{{Name: "horizon_consult_advisor", Args: map[string]any{"question": question, "context": "add.sh 2 3 prints -1"}}}, Usage: use(1000, 100)},
				{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"}}}, Usage: use(1000, 100)},
				{Text: report, Usage: use(1000, 100)},
			},
		},
		{
			Name:    "auditor",
			When:    []string{"# Audit (attempt 1)"},
			Replies: []fakemodel.Reply{{Text: accept, Usage: use(1000, 100)}},
		},
	}}
	w := newWorld(t, script)
	w.env = append(w.env, "HORIZON_ADVISOR_CONSULT_MODEL="+demo.Model)
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)

	// What the models were offered and received.
	var worker, consultant, auditor []fakemodel.Request
	for _, r := range w.model.Requests() {
		switch r.Rule {
		case "worker":
			worker = append(worker, r)
		case "consultant":
			consultant = append(consultant, r)
		case "auditor":
			auditor = append(auditor, r)
		}
	}
	require.Len(t, worker, 3)
	require.Contains(t, worker[0].Tools, "horizon_consult_advisor", "the worker is offered the consult tool")
	require.Equal(t, []string{advice}, worker[1].ToolResults, "the advice comes back as the tool's result")
	require.Len(t, consultant, 1, "one consult, one model call")
	require.Contains(t, consultant[0].LastUser, "add.sh 2 3 prints -1", "the worker's context goes with the question")
	require.Contains(t, consultant[0].LastUser, "# Task (attempt 1 of", "and its latest messages")
	for _, tool := range []string{"write", "edit", "bash", "horizon_consult_advisor"} {
		require.NotContains(t, consultant[0].Tools, tool, "the consultant is read-only and cannot consult itself")
	}
	require.True(t, slices.Contains(consultant[0].Tools, "read"), "the consultant can read the lane: %v", consultant[0].Tools)
	require.NotEmpty(t, auditor)
	require.NotContains(t, auditor[0].Tools, "horizon_consult_advisor", "the auditor cannot consult")

	// The consult on the attempt.
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Len(t, s.Attempts, 1)
	att := s.Attempts[0]
	require.Len(t, att.Consults, 1)
	c := att.Consults[0]
	require.NotEmpty(t, c.ID)
	require.Equal(t, question, c.Question)
	require.Equal(t, advice, c.Answer)
	require.Equal(t, demo.Model, c.Model)
	require.Equal(t, att.WorkerSession, c.Session, "the consult names the session that called it")
	require.NotEmpty(t, c.AdvisorSession)
	require.NotEqual(t, c.Session, c.AdvisorSession)
	require.Empty(t, c.Error)
	// The fake provider charges $1 per million input tokens and $2 per
	// million output tokens: 3000 in and 500 out.
	require.InDelta(t, 0.004, c.Usage.Cost, 1e-9)
	require.Equal(t, int64(3000), c.Usage.Input)

	// Its cost is in the run's spend: the run's total is the worker's three
	// steps, the auditor's one and the consult, and the day's ledger, which
	// the ceilings read, says the same.
	steps := 4 * (1000*1.0 + 100*2.0) / 1e6
	require.InDelta(t, steps+c.Usage.Cost, s.Usage.Cost, 1e-9)
	require.InDelta(t, s.Usage.Cost, att.Usage.Cost, 1e-9)
	require.InDelta(t, s.Usage.Cost, daySpend(t, w.home, id), 1e-9)

	// The attempt's ledger, where `horizon mcp` wrote it.
	b, err := os.ReadFile(filepath.Join(w.home, "runs", id, "consults", "f1-attempt-1.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "\n"))
	require.Contains(t, string(b), "ADVICE-7f3")
}

// daySpend sums what the run's entries in today's spend ledger say.
func daySpend(t *testing.T, home, run string) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "spend", time.Now().UTC().Format("2006-01-02")+".jsonl"))
	require.NoError(t, err)
	defer f.Close()
	total := 0.0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Run  string  `json:"run"`
			Cost float64 `json:"cost"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Run == run {
			total += r.Cost
		}
	}
	require.NoError(t, sc.Err())
	return total
}
