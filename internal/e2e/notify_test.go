package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/notify"
)

// hook is a webhook receiver on loopback, in the test process: it keeps
// each event once by ID (receivers drop duplicates: delivery is at least
// once) and answers with status.
type hook struct {
	mu     sync.Mutex
	status int
	posts  int
	byID   map[string]notify.Event
	// hang, once set, makes the receiver take each post and never answer,
	// until the test ends.
	hang atomic.Bool
}

func newHook(t *testing.T, status int) (*hook, string) {
	h := &hook{status: status, byID: map[string]notify.Event{}}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev notify.Event
		if json.Unmarshal(body, &ev) == nil {
			h.mu.Lock()
			h.posts++
			h.byID[ev.ID] = ev
			h.mu.Unlock()
		}
		if h.hang.Load() {
			<-done
			return
		}
		w.WriteHeader(h.status)
	}))
	t.Cleanup(srv.Close)
	// Cleanups run last first: hanging handlers are let go before Close
	// waits for them.
	t.Cleanup(func() { close(done) })
	return h, srv.URL
}

// postCount is how many posts the receiver has taken.
func (h *hook) postCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts
}

// kinds is "kind subject" of every distinct event, sorted.
func (h *hook) kinds() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.byID {
		out = append(out, string(ev.Kind)+" "+ev.Subject)
	}
	sort.Strings(out)
	return out
}

func (h *hook) event(k notify.Kind) (notify.Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.byID {
		if ev.Kind == k {
			return ev, true
		}
	}
	return notify.Event{}, false
}

// wait polls until the receiver holds an event of kind k.
func (h *hook) wait(t *testing.T, k notify.Kind, timeout time.Duration) notify.Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ev, ok := h.event(k); ok {
			return ev
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s event within %s; got %v", k, timeout, h.kinds())
	return notify.Event{}
}

// notifyRules are peopleRules without f3's trouble: f1 is blocked until
// unblocked, m2 waits for approval, every other feature passes at once.
func notifyRules(t *testing.T) []fakemodel.Rule {
	var keep []fakemodel.Rule
	for _, r := range peopleRules(t) {
		if strings.HasPrefix(r.Name, "worker-f3") || strings.HasPrefix(r.Name, "auditor-f3") || r.Name == "lead-decompose-f3" {
			continue
		}
		keep = append(keep, r)
	}
	return keep
}

// A planned run under semi autonomy with a blocked feature and a
// milestone approval tells a webhook on loopback exactly: f1 is blocked,
// the run waits at m2, the run ended (completed, with its handoff).
func TestNotifyPlannedRunEvents(t *testing.T) {
	needsE2E(t)
	h, url := newHook(t, http.StatusOK)
	w := plannedWorld(t, toolsScript(t, notifyRules(t)...), "HORIZON_NOTIFY_WEBHOOK="+url)
	repo, _ := toolsRepo(t)
	ctx := context.Background()

	out, code := w.stdout("start", "--detach", "--autonomy", "semi", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)

	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() || s.Status == horizon.StatusBlocked })
	require.Equal(t, horizon.StatusBlocked, s.Status, s.Reason)
	blocked := h.wait(t, notify.FeatureBlocked, 30*time.Second)
	require.Equal(t, id, blocked.RunID)
	require.Equal(t, "f1", blocked.Subject)
	require.Contains(t, blocked.Text, "missing_credential")
	require.Equal(t, notify.EventID(id, notify.FeatureBlocked, "f1", blocked.Seq), blocked.ID)
	o, code := w.run(ctx, "unblock", id, "f1", "--note", unblockNote)
	require.Equal(t, 0, code, o)

	s = w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() || s.Waiting != nil })
	require.NotNil(t, s.Waiting, "%s: %s", s.Status, s.Reason)
	approval := h.wait(t, notify.ApprovalWaiting, 30*time.Second)
	require.Equal(t, "milestone:m2", approval.Subject)
	require.Contains(t, approval.Text, "horizon approve "+id)
	o, code = w.run(ctx, "approve", id, "--subject", "m2")
	require.Equal(t, 0, code, o)

	final := w.waitStatus(id, 6*time.Minute, endedWithHandoff)
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	ended := h.wait(t, notify.RunEnded, 30*time.Second)
	require.Contains(t, ended.Text, "completed")
	require.Contains(t, ended.Text, final.Handoff)
	require.Equal(t, []string{"approval_waiting milestone:m2", "feature_blocked f1", "run_ended completed"}, h.kinds())
}

// Receivers that answer 500, or hang past notify.timeout, change nothing
// in a run: it completes as it would without them. The webhook answers
// 500 to the first run; then it takes every post and never answers, and
// a second run of the same goal on a copy of the repository lands the
// same commits (features and tree).
func TestNotifyFailingReceiversChangeNothing(t *testing.T) {
	needsE2E(t)
	h, url := newHook(t, http.StatusInternalServerError)
	w := newWorld(t, demoScript(t))
	w.env = append(w.env, "HORIZON_NOTIFY_WEBHOOK="+url, "HORIZON_NOTIFY_COMMAND=sleep 60",
		"HORIZON_NOTIFY_TIMEOUT=1s", "HORIZON_NOTIFY_ATTEMPTS=2")
	run := func() (repo, id string) {
		repo, _ = fixture(t)
		out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, goal)
		require.Equal(t, 0, code, out)
		id = strings.TrimSpace(out)
		s := w.waitStatus(id, 3*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
		require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
		return repo, id
	}
	repo, id := run()
	h.wait(t, notify.RunEnded, 30*time.Second) // it was tried…
	require.Eventually(t, func() bool { return h.postCount() >= 2 }, 30*time.Second, 100*time.Millisecond, "…and retried after the 500")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(w.home, "logs", "horizon.log"))
		return strings.Contains(string(b), "notification not delivered")
	}, 30*time.Second, 200*time.Millisecond, "the failure is logged")

	h.hang.Store(true)
	before := h.postCount()
	hungRepo, hungID := run()
	require.Eventually(t, func() bool { return h.postCount() > before }, 30*time.Second, 100*time.Millisecond,
		"the hanging receiver was posted to")

	commits, features := featureCommits(t, repo, id)
	hungCommits, hungFeatures := featureCommits(t, hungRepo, hungID)
	require.Len(t, hungCommits, len(commits), "as many commits with a hanging receiver")
	require.Equal(t, features, hungFeatures)
	require.Equal(t, git(t, repo, "rev-parse", "horizon/"+id+"^{tree}"), git(t, hungRepo, "rev-parse", "horizon/"+hungID+"^{tree}"),
		"the same work landed")
}
