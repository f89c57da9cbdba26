package activities

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/notify"
)

// Every event names what it is about by title, not only by run ID: the
// headline a receiver shows, a detail for scripts, and (for an outage,
// which the activity words itself) the text.
func TestNotifyNamesTheGoal(t *testing.T) {
	var mu sync.Mutex
	var got []notify.Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev notify.Event
		require.NoError(t, json.Unmarshal(b, &ev))
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	n, err := notify.New(config.Notify{Webhook: srv.URL, Timeout: time.Second, Attempts: 1})
	require.NoError(t, err)
	a := &Activities{Home: t.TempDir(), Notifier: n, NotifyTimeout: n.MaxDuration(), OutageAfter: time.Minute}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)

	_, err = env.ExecuteActivity(a.Notify, NotifyInput{Kind: notify.FeatureBlocked, RunID: "run-1", Subject: "f1", Seq: 6,
		Title: "Provide stuck\n  The tool is lib/stuck.sh", Text: `run run-1 ("Provide stuck"): feature f1 is blocked (stalled)`})
	require.NoError(t, err)
	ev, ok := a.outageEvent(SessionInput{RunID: "title-r1", Feature: "f1", Attempt: 2, Role: "worker", Title: "Provide stuck"}, 3, 2*time.Minute)
	require.True(t, ok)
	require.Equal(t, "Provide stuck", ev.Title)
	require.Contains(t, ev.Text, `run title-r1 ("Provide stuck"): the worker session of f1`)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	require.Equal(t, "horizon: feature blocked · Provide stuck (run-1)", got[0].Title)
	require.Equal(t, "Provide stuck", got[0].Details["title"])

	require.Equal(t, "horizon: daily report · 2026-12-01", eventTitle(NotifyInput{Kind: notify.DailyReport, Title: "2026-12-01"}))
	require.Equal(t, "horizon: run ended (run-2)", eventTitle(NotifyInput{Kind: notify.RunEnded, RunID: "run-2"}), "an event about no titled subject keeps the old headline")
}
