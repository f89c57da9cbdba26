package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/app/engine"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// outageWorld is a one-feature run of the demo whose first worker
// conversation hangs at its first model call (rule "worker-outage"), with
// a 20-second session timeout: an outage of a few minutes outlasts many
// session attempts. Each world has its own home, ports and model server,
// so the outage tests run in parallel (they mostly wait).
func outageWorld(t *testing.T) (w *world, id, repo, head string) {
	script := demoScript(t)
	hang := script.Rules[0]
	hang.Name, hang.Times = "worker-outage", 1
	hang.Replies = []fakemodel.Reply{{Hold: "outage", Text: "never sent"}}
	script.Rules = append([]fakemodel.Rule{hang}, script.Rules...)
	w = newWorld(t, script)
	w.env = append(w.env, "HORIZON_AGENT_SESSION_TIMEOUT=20s")
	t.Cleanup(func() {
		if t.Failed() {
			w.dumpHorizonLog()
		}
	})
	repo, head = fixture(t)
	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id = strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-outage" })
	require.NoError(t, err)
	return w, id, repo, head
}

// watchOutage polls the run's status until stop closes and returns what
// it saw: the outages read (nil while none), in order.
type outageWatch struct {
	polls    int
	seen     []horizon.Outage
	firstAt  time.Time
	terminal *horizon.RunState
	// markdown is the run's Markdown (the Web UI's) at each poll that
	// read an outage; mdWaiting counts those that had the waiting line.
	markdown  []string
	mdWaiting int
}

func (w *world) watchOutage(id string, until time.Time) outageWatch {
	var ow outageWatch
	eng := w.engineClient()
	for time.Now().Before(until) {
		s := w.status(id)
		if ow.polls%15 == 0 {
			w.t.Logf("%s · %s · outage %+v", s.Status, s.Phase, s.Outage)
		}
		ow.polls++
		if s.Status.Terminal() {
			ow.terminal = &s
			return ow
		}
		if s.Outage != nil {
			if ow.firstAt.IsZero() {
				ow.firstAt = time.Now()
			}
			ow.seen = append(ow.seen, *s.Outage)
			md := markdown(w.t, eng, id)
			ow.markdown = append(ow.markdown, md)
			if strings.Contains(md, "**waiting** ") {
				ow.mdWaiting++
			}
		}
		time.Sleep(time.Second)
	}
	return ow
}

// engineClient dials the world's engine as its owner (with the token in
// its home), closed when the test ends.
func (w *world) engineClient() client.Client {
	w.t.Helper()
	tok, err := engine.ReadToken(engine.TokenPath(w.home))
	require.NoError(w.t, err)
	opts := client.Options{
		HostPort: "127.0.0.1:" + envValue(w.env, "HORIZON_TEMPORAL_PORT"), Namespace: "default",
		Credentials: client.NewAPIKeyStaticCredentials(tok),
	}
	opts.ConnectionOptions.TLSDisabled = true
	c, err := client.Dial(opts)
	require.NoError(w.t, err)
	w.t.Cleanup(c.Close)
	return c
}

// markdown is a workflow's Markdown as the Temporal Web UI reads it: the
// current details of its metadata query.
func markdown(t *testing.T, c client.Client, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

// finishedOnce checks that the run completed and its fix landed once.
func finishedOnce(t *testing.T, w *world, id, repo, head string) {
	w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	final := w.status(id) // fresh: waitStatus decodes each poll over the last
	require.Equal(t, horizon.StatusCompleted, final.Status, "%s: %s", final.Status, final.Reason)
	require.Nil(t, final.Outage)
	commits := strings.Fields(git(t, repo, "rev-list", "main..horizon/"+id))
	require.Len(t, commits, 1, "the fix must land exactly once")
	require.Equal(t, head, git(t, repo, "rev-parse", "main"))
}

// The model provider goes away in the middle of a worker session and
// comes back after four minutes, twice the old retry cap (five 20-second
// session attempts, about two minutes): the run waits instead of failing,
// and completes once. While it waits, `horizon status` says so (in --json
// and in text), from the first seconds, while OpenCode itself retries,
// and so does the run's Markdown in the Web UI.
func TestOutageProviderAwayWaits(t *testing.T) {
	needsE2E(t)
	w, id, repo, head := outageWorld(t)

	require.NoError(t, w.model.Down())
	down := time.Now()
	outage := 4 * time.Minute // twice the ~2 minutes after which the run used to fail
	ow := w.watchOutage(id, down.Add(outage))
	require.Nil(t, ow.terminal, "the run ended during the outage: %+v", ow.terminal)
	require.NotEmpty(t, ow.seen, "status never said the run was waiting")
	t.Logf("waiting shown %s after the provider went away; in %d of %d polls", ow.firstAt.Sub(down).Round(time.Second), len(ow.seen), ow.polls)
	require.Less(t, ow.firstAt.Sub(down), 10*time.Second, "the first connection error must show within seconds")
	first, last := ow.seen[0], ow.seen[len(ow.seen)-1]
	require.NotEmpty(t, first.LastError)
	require.False(t, first.Since.Before(down.Add(-time.Second)), "since %s, before the provider went away at %s", first.Since, down)
	provider := slices.IndexFunc(ow.seen, func(o horizon.Outage) bool { return o.On == "model provider unreachable" })
	require.GreaterOrEqual(t, provider, 0, "status never named the provider: %+v", first)
	require.Contains(t, ow.seen[provider].LastError, "connect", "OpenCode's own words")
	require.Equal(t, "model provider unreachable", last.On, "%+v", last)
	require.Greater(t, last.Tries, first.Tries, "tries count up")
	require.WithinDuration(t, down, last.Since, 30*time.Second, "since stays at the outage's start")
	require.GreaterOrEqual(t, len(ow.seen)*10, ow.polls*9, "status read waiting nearly all the outage")

	st, code := w.run(t.Context(), "status", id)
	require.Equal(t, 0, code, st)
	require.Regexp(t, `waiting\s+model provider unreachable since \d\d:\d\d:\d\d \(\d+ tries`, st)

	// The Web UI's Markdown: the workflow heard its session say it waits.
	t.Logf("Markdown had the waiting line in %d of %d polls that read an outage; last:\n%s", ow.mdWaiting, len(ow.markdown), ow.markdown[len(ow.markdown)-1])
	require.Regexp(t, `\*\*waiting\*\* model provider unreachable since \d\d:\d\d:\d\d \(\d+ tr(y|ies)[^)]*\): \S`, ow.markdown[len(ow.markdown)-1])
	require.GreaterOrEqual(t, ow.mdWaiting*10, len(ow.markdown)*8, "the Markdown said waiting most of the outage")

	// The dashboard's run page says the same, at a desk's and a phone's
	// width, with nothing empty or in error on it.
	srv := startWeb(t, w)
	bctx := browser(t)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("about:blank")))
	tctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"#token="+srv.Token),
		chromedp.Navigate(srv.URL+"#run="+id),
		visible(`#run-outage`)))
	require.Contains(t, text(t, tctx, "#run-outage"), "model provider unreachable")
	shootAt(t, tctx, 1400, "run-outage")
	shootAt(t, tctx, 600, "run-outage")

	require.NoError(t, w.model.Up())
	finishedOnce(t, w, id, repo, head)
	require.NotContains(t, markdown(t, w.engineClient(), id), "**waiting**", "the completed run waits on nothing")
}

// OpenCode is killed six times in a row during one worker session (the
// first time while it waits for the model, then each time right after the
// daemon started it again): the run waits (status says OpenCode exited)
// and completes once.
func TestOutageOpenCodeKilledWaits(t *testing.T) {
	needsE2E(t)
	w, id, repo, head := outageWorld(t)

	killed := map[int]bool{}
	var seen []horizon.Outage
	for i := range 6 {
		// Kill the OpenCode that serves the session (the first one holds
		// the worker's model call), then, while the daemon starts the next
		// one, read what status says.
		pgid := liveAgent(t, w.home, killed)
		require.NotZero(t, pgid, "no OpenCode to kill (kill %d)", i+1)
		killed[pgid] = true
		require.NoError(t, syscall.Kill(-pgid, syscall.SIGKILL))
		deadline := time.Now().Add(3 * time.Minute)
		for liveAgent(t, w.home, killed) == 0 {
			require.True(t, time.Now().Before(deadline), "OpenCode was not started again after kill %d", i+1)
			s := w.status(id)
			require.False(t, s.Status.Terminal(), "the run ended after kill %d: %s: %s", i+1, s.Status, s.Reason)
			if s.Outage != nil {
				seen = append(seen, *s.Outage)
			}
		}
	}
	require.NotEmpty(t, seen, "status never said the run was waiting")
	exited := slices.IndexFunc(seen, func(o horizon.Outage) bool { return o.On == "OpenCode exited" })
	require.GreaterOrEqual(t, exited, 0, "status never said OpenCode exited: %+v", seen)
	require.Contains(t, seen[exited].LastError, "exited")
	last := seen[len(seen)-1]
	t.Logf("last waiting line: %s", last.Line())
	require.GreaterOrEqual(t, last.Tries, 2, "tries count the failed session attempts")
	finishedOnce(t, w, id, repo, head)
}

// liveAgent returns the process group of an opencode server of the
// daemon that is alive and not in skip, or 0.
func liveAgent(t *testing.T, home string, skip map[int]bool) int {
	b, err := os.ReadFile(filepath.Join(home, "agents.pids"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		pgid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || skip[pgid] || !alive(pid) {
			continue
		}
		return pgid
	}
	return 0
}
