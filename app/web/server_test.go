package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/golden"
)

const testToken = "0123456789abcdef"

func newTestServer(t *testing.T, public bool) (*httptest.Server, *fakeCore) {
	t.Helper()
	f := &fakeCore{}
	s := &Server{Core: f, Token: testToken, PublicReads: public, Log: zerolog.Nop(), Now: func() time.Time { return now },
		RunURL: func(id string) string { return "http://127.0.0.1:8233/namespaces/default/workflows/" + id }}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, f
}

func do(t *testing.T, ts *httptest.Server, method, path, body, token string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b), res.Header
}

// Every endpoint, with the token: its status, its JSON (golden), and the
// verb the core was asked for.
func TestAPI(t *testing.T) {
	const run = "/api/v1/runs/run-20260303-090000-ab12cd"
	tests := []struct {
		name, method, path, body string
		code                     int
		call                     string // the verb the core saw, "" for a read
	}{
		{"runs", "GET", "/api/v1/runs", "", 200, ""},
		{"run", "GET", run, "", 200, ""},
		{"run-unknown", "GET", "/api/v1/runs/" + missing, "", 404, ""},
		{"run-bad-id", "GET", "/api/v1/runs/..%2Fetc", "", 400, ""},
		{"needs", "GET", "/api/v1/needs", "", 200, ""},
		{"report-latest", "GET", "/api/v1/reports/latest", "", 200, ""},
		{"report-date", "GET", "/api/v1/reports/2026-03-03", "", 200, ""},
		{"report-none", "GET", "/api/v1/reports/2026-01-01", "", 404, ""},
		{"report-bad-date", "GET", "/api/v1/reports/yesterday", "", 400, ""},
		{"spend", "GET", "/api/v1/spend?days=4", "", 200, ""},
		{"spend-bad-days", "GET", "/api/v1/spend?days=-1", "", 400, ""},
		{"supervisors", "GET", "/api/v1/supervisors", "", 200, ""},
		{"queue", "GET", "/api/v1/queue?repo=/src/app", "", 200, ""},
		{"queue-no-repo", "GET", "/api/v1/queue", "", 400, ""},
		{"queue-no-supervisor", "GET", "/api/v1/queue?repo=/src/other", "", 404, ""},
		{"roadmap", "GET", "/api/v1/roadmap?repo=/src/app", "", 200, ""},
		{"start", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "Add a CSV export", "autonomy": "semi"}`, 200, `start /src/app "Add a CSV export" semi`},
		{"start-no-goal", "POST", "/api/v1/runs", `{"repo": "/src/app"}`, 400, ""},
		{"start-bad-json", "POST", "/api/v1/runs", `{"repo": `, 400, ""},
		{"start-unknown-field", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "x", "model": "y"}`, 400, ""},
		{"start-trailing-garbage", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "x"} {"goal": "y"}`, 400, ""},
		{"start-trailing-word", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "x"}garbage`, 400, ""},
		{"start-goal-too-long", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "` + strings.Repeat("g", 20<<10) + `"}`, 400, ""},
		{"start-not-a-repo", "POST", "/api/v1/runs", `{"repo": "/tmp", "goal": "x"}`, 400, `start /tmp "x" `},
		{"approve", "POST", run + "/approve", `{"subject": "m2"}`, 200, "approve run-20260303-090000-ab12cd"},
		{"approve-refused", "POST", run + "/approve", `{"subject": "m3"}`, 409, "approve run-20260303-090000-ab12cd"},
		{"approve-ended", "POST", "/api/v1/runs/" + closed + "/approve", "", 409, "approve " + closed},
		{"approve-unknown", "POST", "/api/v1/runs/" + missing + "/approve", "", 404, "approve " + missing},
		{"unblock", "POST", run + "/unblock", `{"feature": "f3", "note": "STRIPE_KEY is set"}`, 200, "unblock f3 STRIPE_KEY is set run-20260303-090000-ab12cd"},
		{"unblock-no-note", "POST", run + "/unblock", `{"feature": "f3"}`, 400, ""},
		{"skip", "POST", run + "/skip", `{"feature": "f3", "note": "waits for the new schema"}`, 200, "skip f3 waits for the new schema run-20260303-090000-ab12cd"},
		{"skip-no-note", "POST", run + "/skip", `{"feature": "f3", "note": "  "}`, 400, ""},
		{"skip-no-feature", "POST", run + "/skip", `{"note": "waits for the new schema"}`, 400, ""},
		{"skip-refused", "POST", run + "/skip", `{"feature": "f1", "note": "not needed"}`, 409, "skip f1 not needed run-20260303-090000-ab12cd"},
		{"skip-ended", "POST", "/api/v1/runs/" + closed + "/skip", `{"feature": "f3", "note": "not needed"}`, 409, "skip f3 not needed " + closed},
		{"pause", "POST", run + "/pause", "", 200, "pause run-20260303-090000-ab12cd"},
		{"resume", "POST", run + "/resume", "", 200, "resume run-20260303-090000-ab12cd"},
		{"cancel", "POST", run + "/cancel", "", 200, "cancel run-20260303-090000-ab12cd"},
		{"ceiling", "POST", run + "/ceiling", `{"usd": 5}`, 200, "ceiling 5.00 false run-20260303-090000-ab12cd"},
		{"ceiling-negative", "POST", run + "/ceiling", `{"usd": -1}`, 400, ""},
		{"ceiling-missing", "POST", run + "/ceiling", `{}`, 400, ""},
		{"run-unknown-verb", "POST", run + "/explode", "", 404, ""},
		{"supervisor-start", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app", "autonomy": "semi", "day_ceiling": 20}`, 200, "supervisor start /src/app semi $20.00"},
		{"supervisor-start-no-ceiling", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app", "no_ceiling": true}`, 200, "supervisor start /src/app  unlimited"},
		{"supervisor-start-undecided-ceiling", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app"}`, 400, "supervisor start /src/app  $0.00"},
		{"supervisor-start-both-ceilings", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app", "day_ceiling": 5, "no_ceiling": true}`, 400, ""},
		{"supervisor-start-zero-ceiling", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app", "day_ceiling": 0}`, 400, ""},
		{"supervisor-start-bad-autonomy", "POST", "/api/v1/supervisors/start", `{"repo": "/src/app", "autonomy": "yolo", "day_ceiling": 5}`, 400, ""},
		{"supervisor-stop", "POST", "/api/v1/supervisors/stop", `{"repo": "/src/app"}`, 200, "supervisor stop /src/app"},
		{"supervisor-stop-none", "POST", "/api/v1/supervisors/stop", `{"repo": "/src/other"}`, 404, "supervisor stop /src/other"},
		{"queue-add", "POST", "/api/v1/queue", `{"repo": "/src/app", "goal": "Write the changelog", "budget_time": "2h"}`, 200, `queue add /src/app "Write the changelog"  2h0m0s`},
		{"queue-add-bad-budget", "POST", "/api/v1/queue", `{"repo": "/src/app", "goal": "x", "budget_time": "soon"}`, 400, ""},
		{"queue-move", "POST", "/api/v1/queue/q1/move", `{"repo": "/src/app"}`, 200, "queue move /src/app q1"},
		{"queue-rm", "DELETE", "/api/v1/queue/q1?repo=/src/app", "", 200, "queue rm /src/app q1"},
		{"queue-rm-unknown", "DELETE", "/api/v1/queue/q9?repo=/src/app", "", 404, "queue rm /src/app q9"},
		{"engine-down", "GET", "/api/v1/runs/" + unreachable, "", 503, ""},
		{"engine-down-past-the-deadline", "GET", "/api/v1/runs/" + unanswered, "", 503, ""},
		{"queue-rm-bad-id", "DELETE", "/api/v1/queue/f1?repo=/src/app", "", 400, ""},
		{"no-endpoint", "GET", "/api/v1/nothing", "", 404, ""},
		{"supervisor", "GET", "/api/v1/supervisor?repo=/src/app", "", 200, ""},
		{"supervisor-none", "GET", "/api/v1/supervisor?repo=/src/other", "", 404, ""},
		{"supervisor-pause", "POST", "/api/v1/supervisors/pause", `{"repo": "/src/app"}`, 200, "supervisor pause /src/app"},
		{"supervisor-resume", "POST", "/api/v1/supervisors/resume", `{"repo": "/src/app"}`, 200, "supervisor resume /src/app"},
		{"queue-approve", "POST", "/api/v1/queue/q1/approve", `{"repo": "/src/app"}`, 200, "queue approve /src/app q1"},
		{"queue-approve-refused", "POST", "/api/v1/queue/q7/approve", `{"repo": "/src/app"}`, 409, "queue approve /src/app q7"},
		{"loops", "GET", "/api/v1/loops", "", 200, ""},
		{"tasks", "GET", "/api/v1/tasks", "", 200, ""},
		{"start-with-budget", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "Add a CSV export", "budget_time": "8h", "budget_spend": 5}`, 200, `start /src/app "Add a CSV export"  8h0m0s $5.00`},
		{"start-bad-budget", "POST", "/api/v1/runs", `{"repo": "/src/app", "goal": "x", "budget_time": "soon"}`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, f := newTestServer(t, false)
			code, body, h := do(t, ts, tt.method, tt.path, tt.body, testToken)
			require.Equal(t, tt.code, code, body)
			require.Equal(t, "application/json", h.Get("Content-Type"))
			if code != 200 {
				require.Regexp(t, `^\{\n  "error": ".+"\n\}\n$`, body, "an error is {\"error\": message}")
			}
			golden.Assert(t, "api/"+tt.name+".json", body)
			var want []string
			if tt.call != "" {
				want = []string{tt.call}
			}
			require.Equal(t, want, f.calls)
		})
	}
}

// Verbs always need the token, reads unless web.public_reads; a wrong
// token is no token.
func TestAPIToken(t *testing.T) {
	const approve = "/api/v1/runs/run-20260303-090000-ab12cd/approve"
	tests := []struct {
		name           string
		public         bool
		method, path   string
		token          string
		code           int
		reachesTheCore bool
	}{
		{"verb without token", false, "POST", approve, "", 401, false},
		{"verb with a wrong token", false, "POST", approve, "ffff", 401, false},
		{"verb without token, public reads", true, "POST", approve, "", 401, false},
		{"verb with the token", false, "POST", approve, testToken, 200, true},
		{"read without token", false, "GET", "/api/v1/runs", "", 401, false},
		{"chart without token", false, "GET", "/api/v1/charts/spend.svg", "", 401, false},
		{"read without token, public reads", true, "GET", "/api/v1/runs", "", 200, false},
		{"the dashboard needs no token", false, "GET", "/", "", 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, f := newTestServer(t, tt.public)
			code, body, _ := do(t, ts, tt.method, tt.path, "", tt.token)
			require.Equal(t, tt.code, code, body)
			if code == 401 {
				require.Contains(t, body, `"error": "this needs the token`)
			}
			require.Equal(t, tt.reachesTheCore, len(f.calls) > 0)
		})
	}
}

// The charts are SVG drawn on the server: one <rect class="bar"> per day
// of the fixture's spend ledger (per feature for attempts), the day
// ceiling as a line.
func TestCharts(t *testing.T) {
	tests := []struct {
		name, path string
		bars       int
	}{
		{"spend", "/api/v1/charts/spend.svg?days=7", 7},
		{"landed", "/api/v1/charts/landed.svg?days=3", 3},
		{"attempts", "/api/v1/charts/attempts.svg?run=run-20260303-090000-ab12cd", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := newTestServer(t, false)
			code, body, h := do(t, ts, "GET", tt.path, "", testToken)
			require.Equal(t, 200, code, body)
			require.Equal(t, "image/svg+xml", h.Get("Content-Type"))
			require.Equal(t, tt.bars, strings.Count(body, `<rect class="bar`), body)
			golden.Assert(t, "charts/"+tt.name+".svg", body)
		})
	}
	ts, _ := newTestServer(t, false)
	code, body, _ := do(t, ts, "GET", "/api/v1/charts/pie.svg", "", testToken)
	require.Equal(t, 404, code, body)
}

// The dashboard's files are served, and the shell links the PWA's parts.
func TestDashboardFiles(t *testing.T) {
	ts, _ := newTestServer(t, false)
	for _, p := range []string{"/", "/app.js", "/style.css", "/sw.js", "/manifest.webmanifest", "/icon.svg"} {
		code, body, _ := do(t, ts, "GET", p, "", "")
		require.Equal(t, 200, code, p)
		require.NotEmpty(t, body, p)
	}
	_, index, _ := do(t, ts, "GET", "/", "", "")
	require.Contains(t, index, `<link rel="manifest" href="/manifest.webmanifest">`)
	_, app, _ := do(t, ts, "GET", "/app.js", "", "")
	require.Contains(t, app, `serviceWorker.register("/sw.js")`)
}

// A request for another host name (DNS rebinding) is refused, even for a
// public read.
func TestLoopbackOnly(t *testing.T) {
	ts, _ := newTestServer(t, true)
	req, err := http.NewRequest("GET", ts.URL+"/api/v1/runs", nil)
	require.NoError(t, err)
	req.Host = "evil.example:8234"
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
}
