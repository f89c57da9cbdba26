package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
)

// answerDialogs answers every prompt and confirm the page opens, as a
// person would: OK, with text for a prompt.
func answerDialogs(ctx context.Context, text string) {
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: text})
		}
	}()
}

// pageProblems lists what a person would read as broken on the page: a
// shown section with nothing in it beside its heading, a panel that says
// an error, a chart that did not draw.
func pageProblems(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
	  const out = [];
	  for (const s of document.querySelectorAll("main section")) {
	    if (s.hidden) continue;
	    const lines = s.innerText.trim().split("\n").filter((l) => l.trim());
	    if (lines.length < 2) out.push("empty section " + (s.id || lines[0] || "?"));
	  }
	  for (const e of document.querySelectorAll("main .error")) if (e.offsetParent) out.push("error: " + e.innerText);
	  for (const f of document.querySelectorAll(".charts figure")) if (!f.querySelector("svg")) out.push("chart " + f.id + ": " + f.innerText);
	  return out;
	})()`))
	require.NoError(t, err)
	return got
}

// shootAt saves the page at a window width (1400: a desk; 600: a phone on
// its side) and says what looks broken on it.
func shootAt(t *testing.T, ctx context.Context, width int64, name string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 1000)))
	time.Sleep(300 * time.Millisecond) // one layout
	// Charts draw when their series arrive, a moment after the page: a
	// problem that lasts is one, a chart still loading is not.
	problems := pageProblems(t, ctx)
	for deadline := time.Now().Add(10 * time.Second); len(problems) > 0 && time.Now().Before(deadline); problems = pageProblems(t, ctx) {
		time.Sleep(200 * time.Millisecond)
	}
	shoot(t, ctx, fmt.Sprintf("%s-%d.png", name, width))
	require.Empty(t, problems, "%s at %d px", name, width)
}

// The dashboard runs a supervisor's day, each step a click or a typed
// goal, each through the core's verbs with the token: a goal added to the
// queue from the supervisor's panel, a decomposed plan approved there,
// the runs watched until they land on horizon/roadmap.
func TestWebDashboardRunsTheDay(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, queueScript(t), "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo := supervisedRepo(t)
	out, code := w.run(t.Context(), "supervisor", "start", "--repo", repo, "--autonomy", "semi", "--day-ceiling", "100")
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool { return len(w.queueEntries(repo)) == 1 }, 3*time.Minute, 500*time.Millisecond, "item 1 decomposed")

	srv := startWeb(t, w)
	ctx := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	tctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	answerDialogs(tctx, "")
	panel := fmt.Sprintf(`#supervisors [data-supervisor=%q]`, repo)
	require.NoError(t, chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"#token="+srv.Token),
		visible(panel),
		visible(panel+` tr[data-entry="q1"] button[data-action="approve-queued"]`),
		visible(panel+` li[data-item]`),
		visible(panel+` .actions button[data-action="supervisor-pause"]`),
	))
	p := text(t, tctx, panel)
	require.Contains(t, p, "running", p)
	require.Contains(t, p, "autonomy semi", p)
	require.Contains(t, p, "schedule", "the nightly decomposition with its next time: %s", p)
	require.Contains(t, text(t, tctx, "#needs"), "q1", "the queued plan needs you")
	shootAt(t, tctx, 1400, "day-plan-waits")

	// A goal typed into the panel joins the queue behind the plan.
	input := panel + ` form[data-form="queue-add"] input[name="goal"]`
	s, o := css(input)
	require.NoError(t, chromedp.Do(tctx, chromedp.SendKeys(s, "Provide double\r", o))) // typed, then Enter
	// It runs at once (a goal needs no approval; the plan q1 waits for
	// its own), so it is looked for in the queue or among the runs.
	require.Eventually(t, func() bool {
		if r, ok := w.supervisedRun(repo, "q2"); ok {
			return r.Goal == "Provide double"
		}
		for _, e := range w.queueEntries(repo) {
			if e.ID == "q2" {
				return e.Goal == "Provide double"
			}
		}
		return false
	}, time.Minute, 300*time.Millisecond, "the goal typed on the page is queued")

	// Approving the plan from the panel lets it run; then the goal runs.
	click(t, tctx, panel+` tr[data-entry="q1"] button[data-action="approve-queued"]`)
	eventually := func(what string, ok func() bool) {
		t.Helper()
		require.Eventually(t, ok, 4*time.Minute, time.Second, what)
	}
	eventually("item 1 done", func() bool { return w.roadmap(repo).Items[0].State == horizon.ItemDone })
	eventually("the page's goal landed", func() bool {
		r, ok := w.supervisedRun(repo, "q2")
		return ok && r.Status == horizon.StatusCompleted && r.Landed != ""
	})
	require.Contains(t, git(t, repo, "ls-tree", "-r", "--name-only", "horizon/roadmap"), "lib/double.sh")

	// The page followed: the roadmap item reads done, the run is listed,
	// and its page (#run=ID) shows it completed.
	require.NoError(t, chromedp.Do(tctx, visible(panel+` li[data-item] .status.done`)))
	r, _ := w.supervisedRun(repo, "q2")
	require.NoError(t, chromedp.Do(tctx,
		visible(fmt.Sprintf(`#runs tr[data-run=%q]`, r.RunID)),
		chromedp.Navigate(srv.URL+"#run="+r.RunID),
		visible(`#run-status.completed`)))
	require.NotContains(t, text(t, tctx, "#run-summary"), "no worker answered", "a finished run waits on no worker")
	shootAt(t, tctx, 1400, "day-landed")
	shootAt(t, tctx, 600, "day-landed")

	// Stop from the panel: the supervisor ends, its runs are done.
	click(t, tctx, panel+` button[data-action="supervisor-stop"]`)
	eventually("the supervisor stopped", func() bool {
		out, code := w.stdout("supervisor", "status", "--repo", repo, "--json")
		return code == 0 && strings.Contains(out, `"status": "stopped"`)
	})
}

// A run the spend ceiling paused: its page (#run=ID) says it waits on the
// ceiling, and raising it there lets the run finish. The waiting and the
// completed page are shot at a desk's and a phone's width, with nothing
// empty or in error on them.
func TestWebDashboardRaisesACeiling(t *testing.T) {
	needsE2E(t)
	w, id, _ := pausedAtCeiling(t)

	srv := startWeb(t, w)
	ctx := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	tctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	answerDialogs(tctx, "1") // the prompt for the new ceiling: $1
	require.NoError(t, chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"#token="+srv.Token),
		chromedp.Navigate(srv.URL+"#run="+id),
		visible(`#run-ceiling`),
		visible(`#run-actions button[data-action="ceiling"]`),
		visible(`#chart-spend svg`),
	))
	require.Contains(t, text(t, tctx, "#run-ceiling"), "ceiling")
	require.Contains(t, text(t, tctx, "#run-id"), id, "the page is the run's")
	shootAt(t, tctx, 1400, "run-paused")
	shootAt(t, tctx, 600, "run-paused")
	require.Equal(t, horizon.PhasePaused, w.status(id).Phase, "loading the page raises nothing")

	click(t, tctx, `#run-actions button[data-action="ceiling"]`)
	final := w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	require.Equal(t, 1.0, final.Ceiling, "the ceiling the page was given")
	require.NoError(t, chromedp.Do(tctx, visible(`#run-status.completed`)))
	require.NotContains(t, text(t, tctx, "#run-summary"), "no worker answered")
	shootAt(t, tctx, 1400, "run-completed")
	shootAt(t, tctx, 600, "run-completed")
}
