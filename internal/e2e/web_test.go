package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// webServer is `horizon web --json` running in the world's environment.
type webServer struct {
	URL, Token string
}

func startWeb(t *testing.T, w *world) webServer {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(horizonBin, "web", "--json")
	cmd.Env = append(w.env, "HORIZON_WEB_PORT="+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logf, err := os.Create(filepath.Join(t.TempDir(), "web.err"))
	require.NoError(t, err)
	cmd.Stderr = logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("horizon web stderr:\n%s", b)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "horizon web printed nothing")
	var started struct {
		URL       string `json:"url"`
		TokenFile string `json:"token_file"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &started), line)
	require.Equal(t, fmt.Sprintf("http://127.0.0.1:%d/", port), started.URL)
	st, err := os.Stat(started.TokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the token is the owner's alone")
	tok, err := os.ReadFile(started.TokenFile)
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return webServer{URL: started.URL, Token: strings.TrimSpace(string(tok))}
}

// get reads an API path with the token.
func (s webServer) get(t *testing.T, path string, token bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", strings.TrimSuffix(s.URL, "/")+path, nil)
	require.NoError(t, err)
	if token {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// browser is a headless Chromium of the test's own.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	require.NoError(t, err, "the dashboard's e2e drives Chromium: apt-get install chromium (.ci/run does)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// css finds elements by CSS selector (a plain string selector would be a
// DOM search, which also matches text).
func css(sel string) (string, chromedp.QueryOption) {
	return sel, chromedp.ByFunc(func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		res, err := cdp.Call(ctx, t, dom.QuerySelectorAll, dom.QuerySelectorAllParams{NodeID: n.NodeID, Selector: sel})
		return res.NodeIDs, err
	})
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	s, o := css(sel)
	return chromedp.WaitVisible(s, o)
}

// click clicks the element sel names, as a person's mouse does. The
// dashboard redraws its lists as it polls, so the node found can be
// replaced before the click lands; the click then looks it up again.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	s, o := css(sel)
	require.NoError(t, retryNode(func() error { return chromedp.Do(ctx, chromedp.Click(s, o)) }), "click %s", sel)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, o := css(sel)
	var v string
	err := retryNode(func() (err error) {
		v, err = chromedp.Run(ctx, chromedp.Text(s, o))
		return err
	})
	require.NoError(t, err, "text of %s", sel)
	return v
}

// retryNode retries a DevTools step whose node the page replaced between
// finding it and using it: the dashboard redraws a run's panel when its
// status arrives, so a node found a moment ago may be gone.
func retryNode(step func() error) error {
	var err error
	for range 5 {
		if err = step(); err == nil || !(strings.Contains(err.Error(), "Could not find node") || strings.Contains(err.Error(), "No node with given id")) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// shoot saves a PNG of the page as a test artifact.
func shoot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join(t.ArtifactDir(), name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s (%d bytes)", path, len(png))
	return path
}

// fixtureSpend writes a spend ledger for two past days, as the activities
// write it (one JSON record a line, under <home>/spend/<UTC day>.jsonl).
func fixtureSpend(t *testing.T, w *world) map[string]float64 {
	t.Helper()
	days := map[string]float64{}
	for i, cost := range map[int]float64{2: 0.75, 4: 1.5} {
		day := time.Now().UTC().AddDate(0, 0, -i)
		name := day.Format(time.DateOnly)
		rec := fmt.Sprintf(`{"key":"fixture/%d","run":"run-fixture","cost":%g,"at":%q}`+"\n", i, cost, day.Format(time.RFC3339))
		require.NoError(t, os.MkdirAll(filepath.Join(w.home, "spend"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.home, "spend", name+".jsonl"), []byte(rec), 0o600))
		days[name] = cost
	}
	return days
}

// `horizon web` during a planned run under semi autonomy waiting before
// milestone m2: the dashboard, in headless Chromium, shows the run, its
// plan and the approval it waits for; a click on approve lets it go on to
// completion, which the dashboard then shows. The API refuses a verb
// without the token, and the spend chart has one bar per day of the
// fixture's ledger.
func TestWebDashboardApprovesAWaitingRun(t *testing.T) {
	needsE2E(t)
	w, id := waitingAtMilestone2(t)
	ledger := fixtureSpend(t, w)

	srv := startWeb(t, w)
	code, body := srv.get(t, "/api/v1/needs", false)
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, body = srv.get(t, "/api/v1/needs", true)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"subject": "m2"`)

	ctx := browser(t)
	// The first action starts the browser and must not carry a timeout.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	row := fmt.Sprintf(`#runs tr[data-run=%q]`, id)
	approve := fmt.Sprintf(`#needs button[data-action="approve"][data-run=%q]`, id)
	require.NoError(t, chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"#token="+srv.Token),
		visible(row),
		visible(`#plan li[data-feature="f4"]`),
		visible(approve),
		visible(`#chart-spend svg`),
	))
	plan := text(t, tctx, "#plan")
	t.Logf("the plan on the dashboard:\n%s", plan)
	require.Contains(t, plan, "f2 Add lib/lower.sh · accepted", "m1's features, accepted")
	require.Contains(t, plan, "f3", "m2's features, waiting")
	require.Contains(t, text(t, tctx, "#needs"), id)
	png := shoot(t, tctx, "dashboard-waiting.png")
	if dst := os.Getenv("HORIZON_DASHBOARD_PNG"); dst != "" {
		b, err := os.ReadFile(png)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o644))
	}
	token, err := chromedp.Run(tctx, chromedp.Evaluate[string](`localStorage.getItem("horizon.token")`))
	require.NoError(t, err)
	require.Equal(t, srv.Token, token, "the page keeps the token from the URL")
	require.NotNil(t, w.status(id).Waiting, "loading the dashboard approves nothing")

	click(t, tctx, approve)

	final := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	require.Nil(t, final.Waiting)
	fs := planFeatures(final.Plan)
	for _, f := range []string{"f3", "f4"} {
		require.Equal(t, horizon.FeatureAccepted, fs[f].Status, "m2's %s ran after the approval", f)
	}
	require.True(t, hasDecision(readDecisions(t, w, id), "approved milestone m2"))

	// The dashboard follows the run to its end.
	require.NoError(t, chromedp.Do(tctx, visible(`#run-status.completed`), visible(`#needs li.muted`)))
	shoot(t, tctx, "dashboard-completed.png")

	// The spend chart: one bar per day, the fixture's days with their cost.
	code, svg := srv.get(t, "/api/v1/charts/spend.svg?days=7", true)
	require.Equal(t, http.StatusOK, code, svg)
	require.Equal(t, 7, strings.Count(svg, `<rect class="bar`), svg)
	for day, cost := range ledger {
		require.Contains(t, svg, fmt.Sprintf("<title>%s: $%.2f</title>", day, cost))
	}
	code, svg = srv.get(t, "/api/v1/charts/attempts.svg?run="+id, true)
	require.Equal(t, http.StatusOK, code, svg)
	require.Equal(t, 4, strings.Count(svg, `<rect class="bar`), "one bar per feature: %s", svg)
}
