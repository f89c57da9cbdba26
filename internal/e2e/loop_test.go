package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// loopResult is `horizon loop --json`, every key a script reads.
type loopResult struct {
	Loop        string  `json:"loop"`
	Status      string  `json:"status"`
	Session     string  `json:"session"`
	Model       string  `json:"model"`
	Role        string  `json:"role"`
	Activations int     `json:"activations"`
	Compactions int     `json:"compactions"`
	Branch      string  `json:"branch"`
	Commit      string  `json:"commit"`
	Cost        float64 `json:"cost"`
	Report      *struct {
		Status  string `json:"status"`
		Summary string `json:"summary"`
	} `json:"report"`
	Error string `json:"error"`
}

var loopIDRe = regexp.MustCompile(`^loop-\d{8}-\d{6}-[0-9a-f]{6}$`)

func loopReport(status, summary string) string {
	return fmt.Sprintf("Done for now.\n\n```horizon-report\n{\"status\": %q, \"summary\": %q}\n```\n", status, summary)
}

// activation matches the prompt of activation k of n (its marker's end).
func activation(k, n int) string { return fmt.Sprintf(": activation %d of %d]", k, n) }

// loopScript: LOOP-COMPACT writes a file in activation 1, fills the
// context past 60 % in activation 2 and is satisfied in activation 4;
// LOOP-CONT always continues; LOOP-PROSE never reports; LOOP-HANG waits;
// LOOP-CRASH waits in activation 1 until the daemon is killed, then goes on
// when asked to continue.
// Rules for later activations come first: a request quotes the whole
// conversation, earlier prompts included.
func loopScript() *fakemodel.Script {
	const g = "LOOP-COMPACT"
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "summary", When: []string{fakemodel.SummaryMarker}, Replies: []fakemodel.Reply{
			{Text: "## Objective\n- LOOP-COMPACT: write loop.txt\n\n## Work State\n### Completed\n- loop.txt written\n"},
		}},
		{Name: "a4", When: []string{g, activation(4, 5)}, Replies: []fakemodel.Reply{{Text: loopReport("satisfied", "loop.txt is complete")}}},
		{Name: "a3", When: []string{g, activation(3, 5)}, Replies: []fakemodel.Reply{{Text: loopReport("continue", "checked loop.txt")}}},
		{Name: "a2", When: []string{g, activation(2, 5)}, Replies: []fakemodel.Reply{
			{Text: loopReport("continue", "A2-SUMMARY: read a lot"), Usage: &fakemodel.Usage{PromptTokens: 90000, CompletionTokens: 400}},
		}},
		{Name: "a1", When: []string{g, activation(1, 5)}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/loop.txt", "content": "written by the loop\n"}}}},
			{Text: loopReport("continue", "wrote loop.txt")},
		}},
		{Name: "cont", When: []string{"LOOP-CONT"}, Replies: []fakemodel.Reply{{Text: loopReport("continue", "more to do")}}},
		{Name: "prose", When: []string{"LOOP-PROSE"}, Replies: []fakemodel.Reply{{Text: "All done, the goal is reached."}}},
		{Name: "hang", When: []string{"LOOP-HANG"}, Replies: []fakemodel.Reply{{Hold: "never", Text: "never sent"}}},
		{Name: "crash-a2", When: []string{"LOOP-CRASH", activation(2, 2)}, Replies: []fakemodel.Reply{{Text: loopReport("satisfied", "survived")}}},
		{Name: "crash-cont", When: []string{"LOOP-CRASH", "You were interrupted"}, Replies: []fakemodel.Reply{{Text: loopReport("continue", "went on after the crash")}}},
		{Name: "crash-hold", When: []string{"LOOP-CRASH", activation(1, 2)}, Times: 1, Replies: []fakemodel.Reply{{Hold: "crash", Text: "never sent"}}},
	}}
}

func (w *world) loop(args ...string) (loopResult, int) {
	w.t.Helper()
	out, code := w.stdout(append([]string{"loop"}, args...)...)
	var res loopResult
	require.NoError(w.t, json.Unmarshal([]byte(out), &res), out)
	require.Regexp(w.t, loopIDRe, res.Loop)
	return res, code
}

// `horizon loop` end to end, one world for every case: compaction and the
// checkpoint, the activation limit, a reply without a report, a cancelled
// loop, and one whose daemon is SIGKILLed mid-activation.
func TestLoop(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, loopScript())
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, head := fixture(t)
	began := time.Now()

	t.Run("compacted once, checkpoint, satisfied at 4", func(t *testing.T) {
		res, code := w.loop("--repo", repo, "--max", "5", "--compact-at", "0.6", "--json", "--", "LOOP-COMPACT: write loop.txt")
		require.Equal(t, 0, code, "%+v", res)
		require.Equal(t, "satisfied", res.Status, res.Error)
		require.Equal(t, 4, res.Activations)
		require.Equal(t, 1, res.Compactions)
		require.Equal(t, demo.Model, res.Model)
		require.Equal(t, "build", res.Role)
		require.NotEmpty(t, res.Session)
		require.Equal(t, "horizon/"+res.Loop, res.Branch)
		require.NotEmpty(t, res.Commit)
		require.Equal(t, "loop.txt is complete", res.Report.Summary)
		require.Equal(t, "written by the loop", git(t, repo, "show", res.Branch+":loop.txt"))
		require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the user's branch is untouched")
		require.Contains(t, git(t, repo, "log", "-1", "--format=%B", res.Branch), "Horizon-Loop: "+res.Loop)

		byRule := map[string][]fakemodel.Request{}
		for _, r := range w.model.Requests() {
			if r.Step == 0 {
				byRule[r.Rule] = append(byRule[r.Rule], r)
			}
		}
		for _, rule := range []string{"a1", "a2", "a3", "a4", "summary"} {
			require.Len(t, byRule[rule], 1, "rule %s: each activation is prompted once, the session compacted once", rule)
		}
		// The summary came after activation 2, before activation 3.
		require.True(t, byRule["summary"][0].At.After(byRule["a2"][0].At))
		require.True(t, byRule["summary"][0].At.Before(byRule["a3"][0].At))
		cp := byRule["a3"][0].LastUser
		require.Contains(t, cp, "Checkpoint")
		require.Contains(t, cp, "LOOP-COMPACT: write loop.txt", "the checkpoint restates the goal")
		require.Contains(t, cp, "This is activation 3 of 5.")
		require.Contains(t, cp, "Last report (activation 2): continue")
		require.Contains(t, cp, "A2-SUMMARY: read a lot")
		require.NotContains(t, byRule["a2"][0].LastUser, "Checkpoint")
		require.NotContains(t, byRule["a4"][0].LastUser, "Checkpoint", "one compaction, one checkpoint")

		recordHistory(t, w, res.Loop, "loop-compacted-satisfied.json")

		// horizon list shows the loop beside the runs, with its status.
		out, code := w.stdout("list")
		require.Equal(t, 0, code, out)
		require.Regexp(t, `(?m)^`+res.Loop+`\s+satisfied\s`, out)
		// --kind loop keeps the loops alone; --json prints them.
		out, code = w.stdout("list", "--kind", "loop", "--status", "satisfied", "--json")
		require.Equal(t, 0, code, out)
		var loops []struct {
			Loop   string `json:"loop"`
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &loops), out)
		require.NotEmpty(t, loops)
		for _, l := range loops {
			require.Equal(t, "satisfied", l.Status)
		}
		out, code = w.stdout("list", "--kind", "task")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "no background tasks yet")
		require.NotContains(t, out, res.Loop)
	})

	t.Run("always continue: limit reached", func(t *testing.T) {
		res, code := w.loop("--repo", repo, "--max", "2", "--json", "--", "LOOP-CONT: keep going")
		require.Equal(t, 1, code)
		require.Equal(t, "limit_reached", res.Status, res.Error)
		require.Equal(t, 2, res.Activations)
		require.Equal(t, 0, res.Compactions)
		require.Empty(t, res.Commit, "nothing changed")
	})

	t.Run("no report block: protocol error", func(t *testing.T) {
		res, code := w.loop("--repo", repo, "--max", "5", "--json", "--", "LOOP-PROSE: say you are done")
		require.Equal(t, 1, code)
		require.Equal(t, "protocol_error", res.Status)
		require.Equal(t, 1, res.Activations)
		require.Contains(t, res.Error, "horizon-report")
	})

	t.Run("cancelled: the session aborted", func(t *testing.T) {
		res, code := w.loop("--repo", repo, "--max", "3", "--detach", "--json", "--", "LOOP-HANG: wait")
		require.Equal(t, 0, code)
		require.Equal(t, "running", res.Status)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "hang" && r.Held })
		require.NoError(t, err)
		out, code := w.stdout("cancel", res.Loop)
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "loop "+res.Loop+" cancelled")
		require.Eventually(t, func() bool { return w.model.InFlight() == 0 }, 30*time.Second, 100*time.Millisecond,
			"the aborted session let go of the model call")
	})

	t.Run("daemon SIGKILLed mid-activation: the turn continues, not prompted again", func(t *testing.T) {
		res, code := w.loop("--repo", repo, "--max", "2", "--detach", "--json", "--", "LOOP-CRASH: survive")
		require.Equal(t, 0, code)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "crash-hold" && r.Held })
		require.NoError(t, err)
		killDaemon(t, w)
		out, code := w.run(ctx, "resume")
		require.Equal(t, 0, code, out)

		var end loopResult
		require.Eventually(t, func() bool {
			out, code := w.stdout("status", res.Loop, "--json")
			return code == 0 && json.Unmarshal([]byte(out), &end) == nil && end.Status != "running"
		}, 3*time.Minute, time.Second)
		require.Equal(t, "satisfied", end.Status, end.Error)
		require.Equal(t, 2, end.Activations)
		prompts := 0
		for _, r := range w.model.Requests() {
			if !r.Title && strings.Contains(r.LastUser, "LOOP-CRASH") && strings.Contains(r.LastUser, activation(1, 2)) {
				prompts++
			}
		}
		require.Equal(t, 1, prompts, "activation 1 was prompted again after the crash")
	})

	// A role that is not one, or a runtime agent id, is refused up front.
	out, code := w.stdout("loop", "--repo", repo, "--agent", "horizon-worker", "--max", "2", "--", "x")
	require.Equal(t, 2, code, out)
	require.True(t, strings.TrimSpace(out) == "", out)
	t.Logf("loop cases took %s", time.Since(began).Round(time.Second))
}
