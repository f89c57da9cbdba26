package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// advisorSystem is in every advisor request (its agent's prompt), never in
// a worker's.
const advisorSystem = "You are horizon's advisor"

func adviceReply(notes ...string) fakemodel.Reply {
	return fakemodel.Reply{Text: "Checked the lane.\n\n```horizon-advice\n{\"notes\": [" + strings.Join(notes, ", ") + "]}\n```"}
}

func adviceNote(sev, note, evidence string) string {
	b, _ := json.Marshal(note)
	if evidence == "" {
		evidence = "null"
	}
	return `{"severity": "` + sev + `", "note": ` + string(b) + `, "evidence": ` + evidence + `}`
}

func evidence(file string, line int, fact string) string {
	b, _ := json.Marshal(map[string]any{"file": file, "line": line, "observed_fact": fact})
	return string(b)
}

// advisedScript is a worker that takes four steps (two reads, the second
// held until the test releases it; then, answering the advisor's blocker,
// a write and its report), an auditor that accepts, and an advisor whose
// first review finds a true blocker and whose second says the rest.
func advisedScript(review1, review2 fakemodel.Reply) *fakemodel.Script {
	worker := "# Task (attempt 1 of"
	blocker := "[horizon advisor · blocker"
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{review1}},
		{Name: "advisor-2", When: []string{advisorSystem, "Review 2 of the worker's session"}, Replies: []fakemodel.Reply{review2}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "worker-answers", When: []string{worker, blocker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"}}}},
			{Text: "Fixed the operator as the advisor said.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"add.sh adds\"}\n```"},
		}},
		{Name: "worker", When: []string{worker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/tests/test_add.sh"}}}, Hold: "worker-step-2"},
			{Text: "Done without advice.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"nothing changed\"}\n```"},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{
			{Text: "The operator is fixed.\n\n```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"},
		}},
	}}
}

func advisedWorld(t *testing.T, script *fakemodel.Script, timeout string) *world {
	w := newWorld(t, script)
	w.env = append(w.env,
		"HORIZON_ADVISOR_ENABLED=true",
		"HORIZON_ADVISOR_WATCHDOG_MODEL="+demo.Model,
		"HORIZON_ADVISOR_REVIEW_MODE=step",
		"HORIZON_ADVISOR_REVIEW_INTERVAL=1",
		"HORIZON_ADVISOR_IMMUNE_TURNS=0",
		"HORIZON_ADVISOR_TIMEOUT="+timeout,
	)
	return w
}

// adviceFile waits for the attempt's advice record to say s.
func (w *world) adviceFile(id string, timeout time.Duration, s string) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(w.home, "runs", id, "transcripts", "*-attempt-1-advice.md"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), s) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.t.Fatalf("run %s: the advice record never said %q", id, s)
}

// The execution review mode on a real OpenCode session: the worker's two
// reads are no boundary; its write is, and the review after it delivers a
// concern true in the lane, which the worker's next step (held until the
// note is in) sees. No review ran before the write.
func TestAdvisorExecutionMode(t *testing.T) {
	needsE2E(t)
	worker := "# Task (attempt 1 of"
	fixed := "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{
			adviceReply(adviceNote("concern", "add.sh has no check that it got two arguments", evidence("add.sh", 3, "echo $(( $1 + $2 ))"))),
		}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "worker", When: []string{worker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/tests/test_add.sh"}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": fixed}}}},
			{Text: "Fixed the operator.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"add.sh adds\"}\n```", Hold: "worker-report"},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{
			{Text: "The operator is fixed.\n\n```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"},
		}},
	}}
	w := advisedWorld(t, script, "60s")
	w.env = append(w.env, "HORIZON_ADVISOR_REVIEW_MODE=execution")
	repo, _ := fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)

	w.adviceFile(id, 3*time.Minute, "**r1.1** delivered · concern")
	w.model.Release("worker-report")
	s := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)

	var reviews []fakemodel.Request
	for _, r := range w.model.Requests() {
		if r.Rule == "advisor-1" || r.Rule == "advisor-rest" {
			reviews = append(reviews, r)
		}
	}
	require.NotEmpty(t, reviews)
	require.Equal(t, "advisor-1", reviews[0].Rule)
	require.Contains(t, reviews[0].LastUser, "(tools: write)", "the first review came after the write")
	require.Contains(t, reviews[0].LastUser, "(tools: read)", "the reads before it are in its delta")
	// The concern is in the worker's session: a message of its own.
	require.Len(t, s.Attempts, 1)
	var note horizon.AdviceRecord
	for _, r := range s.Attempts[0].Advice {
		if r.ID == "r1.1" {
			note = r
		}
	}
	require.Equal(t, horizon.AdviceDelivered, note.Verdict, "%+v", s.Attempts[0].Advice)
	require.True(t, note.Confirmed, "its unquoted code is on line 3 after the write")
	require.NotEmpty(t, note.Message, "the session message that carried it")
}

// The watchdog on a real OpenCode session: the first review's blocker,
// true in the lane, wakes the worker, whose next turn answers it; the
// second review's blocker is delivered without waking (circuit breaker),
// a blocker without evidence arrives as a concern, a note whose evidence
// is not in the lane is refuted and an LGTM suppressed, neither reaching
// the session. `horizon status --json` lists all five with their verdicts.
func TestAdvisorWatchdog(t *testing.T) {
	needsE2E(t)
	review1 := adviceReply(adviceNote("blocker", "add.sh subtracts: the goal wants the sum, use + instead of -", evidence("add.sh", 3, "`echo $(( $1 - $2 ))`")))
	review2 := adviceReply(
		adviceNote("blocker", "The usage comment promises integers: say what a decimal argument does", evidence("add.sh", 2, "`prints the sum of two integers`")),
		adviceNote("blocker", "Run the tests before you report", ""),
		adviceNote("concern", "add.sh multiplies its arguments", evidence("add.sh", 3, "`$1 * $2`")),
		// Unquoted code one operator away from line 3 (which subtracts):
		// matched as code, it is refuted, not confirmed by its words.
		adviceNote("concern", "add.sh divides its arguments", evidence("add.sh", 3, "echo $(( $1 / $2 ))")),
		adviceNote("nit", "LGTM", ""),
	)
	w := advisedWorld(t, advisedScript(review1, review2), "60s")
	repo, _ := fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)

	// The worker waits in its second step until the first review's
	// blocker is in its session.
	w.adviceFile(id, 3*time.Minute, "**r1.1** delivered · blocker · woke the worker")
	w.model.Release("worker-step-2")
	s := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.Len(t, s.Attempts, 1)
	at := s.Attempts[0]
	require.Equal(t, "add.sh adds", at.Report.Summary, "the report is the one that answered the advice")

	byNote := map[string]horizon.AdviceRecord{}
	for _, r := range at.Advice {
		require.NotEqual(t, horizon.AdviceFailed, r.Verdict, "%+v", r)
		if r.Note != "" {
			byNote[r.Note] = r
		}
	}
	want := []struct {
		note      string
		verdict   horizon.AdviceVerdict
		delivered horizon.Severity
		woke      bool
	}{
		{"add.sh subtracts: the goal wants the sum, use + instead of -", horizon.AdviceDelivered, horizon.SeverityBlocker, true},
		{"The usage comment promises integers: say what a decimal argument does", horizon.AdviceDowngraded, horizon.SeverityConcern, false},
		{"Run the tests before you report", horizon.AdviceDowngraded, horizon.SeverityConcern, false},
		{"add.sh multiplies its arguments", horizon.AdviceRefuted, "", false},
		{"add.sh divides its arguments", horizon.AdviceRefuted, "", false},
		{"LGTM", horizon.AdviceSuppressed, "", false},
	}
	for _, c := range want {
		r, ok := byNote[c.note]
		require.True(t, ok, "no record of %q in %+v", c.note, at.Advice)
		require.Equal(t, c.verdict, r.Verdict, c.note)
		require.Equal(t, c.delivered, r.Delivered, c.note)
		require.Equal(t, c.woke, r.Woke, c.note)
	}
	require.Contains(t, byNote["The usage comment promises integers: say what a decimal argument does"].Reason, "circuit breaker")
	require.Contains(t, byNote["Run the tests before you report"].Reason, "no evidence")

	// The worker's turn after the wake saw the blocker as its prompt.
	var answered bool
	for _, r := range w.model.Requests() {
		if r.Rule == "worker-answers" && strings.Contains(r.LastUser, "add.sh subtracts") {
			answered = true
		}
	}
	require.True(t, answered, "the worker's next turn did not see the blocker")

	text, _ := w.stdout("status", id)
	require.Contains(t, text, "attempt 1 advice: 1 delivered (1 woke), 2 downgraded, 2 refuted, 1 suppressed")
	require.Contains(t, byNote["add.sh divides its arguments"].Reason, `add.sh:3 does not show "echo $(( $1 / $2 ))"`)
	recordHistory(t, w, id, "single-run-advised-blocker-woke.json")

	// Read the session back through OpenCode's API: the blocker is a
	// waking prompt, the two concerns notes, the refuted and the
	// suppressed note are not there.
	out, code = w.run(context.Background(), "stop", "--timeout", "30s")
	require.Equal(t, 0, code, out)
	msgs := readSession(t, w, repo, at.WorkerSession)
	var blockers, notes []string
	for _, m := range msgs {
		require.NotContains(t, m.Text, "multiplies", "a refuted note reached the session")
		require.NotContains(t, m.Text, "LGTM", "a suppressed note reached the session")
		switch {
		case m.Advice != "" && m.Wake:
			blockers = append(blockers, m.Text)
		case m.Advice != "":
			notes = append(notes, m.Text)
		}
	}
	require.Len(t, blockers, 1, "exactly one waking message")
	require.Contains(t, blockers[0], "add.sh subtracts")
	require.Len(t, notes, 2)
}

// readSession starts an OpenCode of its own on the stopped daemon's store
// and reads a session's messages.
func readSession(t *testing.T, w *world, dir, sid string) []agent.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := agent.StartServer(ctx, agent.ServerOptions{
		Bin: opencodeBin, ConfigDir: filepath.Join(w.home, "opencode", "config"), DBPath: filepath.Join(w.home, "opencode", "opencode.db"),
		Env: w.env, LogPath: filepath.Join(t.TempDir(), "opencode.log"), Logger: zerolog.Nop(),
	})
	require.NoError(t, err)
	defer srv.Close()
	msgs, err := srv.Transcript(ctx, dir, sid)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	return msgs
}

// An advisor model that never answers: each review fails after
// advisor.timeout, the attempt records the failures and completes; the
// watchdog holds the attempt up by at most advisor.timeout past the
// worker's report.
func TestAdvisorNeverAnswers(t *testing.T) {
	needsE2E(t)
	script := demoScript(t)
	never := fakemodel.Rule{Name: "advisor-never", When: []string{advisorSystem}, Replies: []fakemodel.Reply{{Hold: "never"}}}
	script.Rules = append([]fakemodel.Rule{never}, script.Rules...)
	w := advisedWorld(t, script, "5s")
	repo, _ := fixture(t)
	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	first := s.Attempts[0]
	require.NotEmpty(t, first.Advice)
	for _, r := range first.Advice {
		require.Equal(t, horizon.AdviceFailed, r.Verdict, "%+v", r)
		require.Equal(t, "the review timed out after advisor.timeout (5s)", r.Reason)
	}
	require.Equal(t, horizon.OutcomeRejected, first.Outcome, "the demo's auditor rejects attempt 1, with or without advice")
}

// SIGKILL of the daemon while a review is in flight, then `horizon
// resume`: the watchdog resumes from its heartbeat and reviews again; a
// second SIGKILL once that review is judged and before its delivery, and
// `horizon resume` again: the blocker reaches the session exactly once.
func TestAdvisorCrashDeliversOnce(t *testing.T) {
	needsE2E(t)
	worker := "# Task (attempt 1 of"
	blocker := "[horizon advisor · blocker"
	note := "add.sh subtracts: use + instead of -"
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "advisor-crash", Times: 1, When: []string{advisorSystem}, Replies: []fakemodel.Reply{{Hold: "review", Text: "never sent"}}},
		{Name: "advisor-1", When: []string{advisorSystem, "Review 1 of the worker's session"}, Replies: []fakemodel.Reply{
			adviceReply(adviceNote("blocker", note, evidence("add.sh", 3, "`echo $(( $1 - $2 ))`")))}},
		{Name: "advisor-rest", When: []string{advisorSystem}, Replies: []fakemodel.Reply{adviceReply()}},
		{Name: "worker-answers", When: []string{worker, blocker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"}}}},
			{Text: "Fixed.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"add.sh adds\"}\n```"},
		}},
		{Name: "worker", When: []string{worker}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/tests/test_add.sh"}}}, Hold: "worker"},
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"}}}},
			{Text: "Fixed.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"add.sh adds\"}\n```"},
		}},
		{Name: "auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{
			{Text: "Good.\n\n```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"},
		}},
	}}
	w := advisedWorld(t, script, "60s")
	hold := filepath.Join(t.TempDir(), "deliver")
	w.env = append(w.env, "HORIZON_TEST_ADVICE_HOLD="+hold)
	repo, _ := fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kill := func() {
		killDaemon(t, w)
		out, code := w.run(ctx, "resume")
		require.Equal(t, 0, code, out)
	}
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "advisor-crash" })
	require.NoError(t, err)
	kill()

	// The review done again is judged; the daemon dies before delivering.
	require.Eventually(t, func() bool { _, err := os.Stat(hold + ".reached"); return err == nil }, 3*time.Minute, 100*time.Millisecond)
	kill()
	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	w.model.Release("worker")
	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	at := s.Attempts[0]
	var delivered []horizon.AdviceRecord
	for _, r := range at.Advice {
		if r.Note == note {
			delivered = append(delivered, r)
		}
	}
	require.Len(t, delivered, 1, "%+v", at.Advice)
	require.Equal(t, horizon.AdviceDelivered, delivered[0].Verdict)

	out, code = w.run(context.Background(), "stop", "--timeout", "30s")
	require.Equal(t, 0, code, out)
	n := 0
	for _, m := range readSession(t, w, repo, at.WorkerSession) {
		if strings.Contains(m.Text, note) {
			n++
		}
	}
	require.Equal(t, 1, n, "the blocker reached the session %d times", n)
}
