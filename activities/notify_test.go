package activities

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/notify"
	"github.com/horizon/horizon/internal/reader"
)

// receiver is a webhook that records the event IDs it got and answers
// with status (0: 200), or hangs until the request is dropped.
type receiver struct {
	mu     sync.Mutex
	ids    []string
	kinds  []notify.Kind
	status int
	hang   bool
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var ev notify.Event
	if json.Unmarshal(body, &ev) == nil {
		r.mu.Lock()
		r.ids, r.kinds = append(r.ids, ev.ID), append(r.kinds, ev.Kind)
		r.mu.Unlock()
	}
	if r.hang {
		<-req.Context().Done()
		return
	}
	if r.status != 0 {
		w.WriteHeader(r.status)
	}
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// notifyActivities is an Activities whose notifier posts to rec.
func notifyActivities(t *testing.T, rec *receiver) (*Activities, *testsuite.TestActivityEnvironment) {
	t.Helper()
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	n, err := notify.New(config.Notify{Webhook: srv.URL, Timeout: 300 * time.Millisecond, Attempts: 2}, notify.WithBackoff(10*time.Millisecond))
	require.NoError(t, err)
	a := &Activities{Home: t.TempDir(), Notifier: n, NotifyTimeout: n.MaxDuration(), OutageAfter: time.Minute}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return a, env
}

func TestNotifySendsStableIDs(t *testing.T) {
	rec := &receiver{}
	a, env := notifyActivities(t, rec)
	blocked := NotifyInput{Kind: notify.FeatureBlocked, RunID: "r1", Subject: "f2", Seq: 3, Text: "f2 is blocked"}
	// A retried activity sends the same event again: the same ID, which
	// the receiver drops as a duplicate.
	for range 2 {
		_, err := env.ExecuteActivity(a.Notify, blocked)
		require.NoError(t, err)
	}
	again := blocked
	again.Seq = 4 // blocked again later: a new fact
	_, err := env.ExecuteActivity(a.Notify, again)
	require.NoError(t, err)
	ids := rec.got()
	require.Len(t, ids, 3)
	require.Equal(t, ids[0], ids[1])
	require.Equal(t, notify.EventID("r1", notify.FeatureBlocked, "f2", 3), ids[0])
	require.NotEqual(t, ids[0], ids[2])
}

func TestNotifyFailingReceiverNeverFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  *receiver
	}{
		{"answers 500", &receiver{status: http.StatusInternalServerError}},
		{"hangs", &receiver{hang: true}},
		{"refuses (4xx)", &receiver{status: http.StatusNotFound}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, env := notifyActivities(t, tc.rec)
			start := time.Now()
			_, err := env.ExecuteActivity(a.Notify, NotifyInput{Kind: notify.RunEnded, RunID: "r1", Subject: "completed", Text: "done"})
			require.NoError(t, err, "a receiver's failure must not fail the activity")
			require.Less(t, time.Since(start), a.NotifyTimeout+2*time.Second, "delivery is bounded by the notifier's MaxDuration")
			require.NotEmpty(t, tc.rec.got(), "the receiver was tried")
		})
	}
}

func TestNotifyWithoutNotifierDoesNothing(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Activities{Home: t.TempDir()}
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.Notify, NotifyInput{Kind: notify.RunEnded, RunID: "r1"})
	require.NoError(t, err)
}

func TestOutageEventOncePerAttemptSeries(t *testing.T) {
	a, _ := notifyActivities(t, &receiver{})
	in := SessionInput{RunID: "outage-r1", Feature: "f1", Attempt: 2, Role: "worker"}
	_, ok := a.outageEvent(in, 1, time.Hour)
	require.False(t, ok, "a first try is no outage")
	_, ok = a.outageEvent(in, 3, 30*time.Second)
	require.False(t, ok, "retrying for less than notify.outage_after is no outage")
	ev, ok := a.outageEvent(in, 3, 2*time.Minute)
	require.True(t, ok)
	require.Equal(t, notify.Outage, ev.Kind)
	require.Equal(t, notify.EventID("outage-r1", notify.Outage, "f1/worker", 2), notify.NewEvent(ev.Kind, ev.RunID, ev.Subject, ev.Seq, "").ID)
	_, ok = a.outageEvent(in, 4, 3*time.Minute)
	require.False(t, ok, "one outage event per attempt series")
	next := in
	next.Attempt = 3
	_, ok = a.outageEvent(next, 2, 2*time.Minute)
	require.True(t, ok, "the next attempt's series is a new outage")
}

// TestReaderSpendPerFeature: two features' reader calls on the same
// attempt number both count in the day's spend and keep their own
// transcripts.
func TestReaderSpendPerFeature(t *testing.T) {
	script := &fakemodel.Script{Fallback: &fakemodel.Reply{Text: "change the loop", Usage: &fakemodel.Usage{PromptTokens: 1000, CompletionTokens: 100}}}
	require.NoError(t, script.Validate())
	srv := fakemodel.New(script)
	require.NoError(t, srv.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = srv.Close() })

	h := newGitHarness(t)
	h.a.Reader = reader.Config{BaseURL: srv.URL(), Model: "reader", InputPerMTok: 10, OutputPerMTok: 10, Timeout: 30 * time.Second}
	lane := h.prepareLane(h.laneInput("f1", false))
	for _, f := range []string{"f1", "f2"} {
		_, err := h.env.ExecuteActivity(h.a.Diagnose, DiagnoseInput{RunID: testRun, Feature: f, Attempt: 1, Goal: "g", Lane: lane.Path, BaseCommit: h.base})
		require.NoError(t, err)
		_, err = os.Stat(filepath.Join(h.a.runDir(testRun), "transcripts", f+"-attempt-1-reader.md"))
		require.NoError(t, err)
	}
	got, err := h.a.DaySpend(context.Background())
	require.NoError(t, err)
	require.InDelta(t, 2*1100*10/1e6, got, 1e-9, "each feature's reader call counts")
}

// Near a ceiling each role moves to the local model that ranks for it:
// preflight finds it among the connected models; a role no local model
// ranks for, or no local model connected, is left out (the run pauses).
func TestLocalModelsPerRole(t *testing.T) {
	lb, err := LoadLeaderboard("")
	require.NoError(t, err)
	got := localModels(lb, []string{"ollama/qwen2.5-coder:14b", "anthropic/claude-sonnet-4-5"})
	require.Equal(t, map[horizon.Role]string{"worker": "ollama/qwen2.5-coder:14b", "auditor": "ollama/qwen2.5-coder:14b", "lead": "ollama/qwen2.5-coder:14b"}, got)
	require.Empty(t, localModels(lb, []string{"anthropic/claude-sonnet-4-5"}))
}
