package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/config"
)

// receiverLog is a loopback webhook that records what it got.
type receiverLog struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
}

func (l *receiverLog) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bodies = append(l.bodies, m)
	l.headers = append(l.headers, r.Header.Clone())
}

func (l *receiverLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.bodies)
}

func server(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *receiverLog) {
	t.Helper()
	log := &receiverLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.record(r)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

func cfg(mod func(*config.Notify)) config.Notify {
	c := config.Notify{Timeout: 2 * time.Second, Attempts: 3, OutageAfter: 15 * time.Minute, Events: []string{"all"}}
	mod(&c)
	return c
}

func sender(t *testing.T, c config.Notify) *Sender {
	t.Helper()
	s, err := New(c, WithBackoff(5*time.Millisecond))
	require.NoError(t, err)
	return s
}

// The ID is a function of what the event is about, pinned so receivers
// that stored IDs keep recognising them across horizon versions.
func TestEventIDStable(t *testing.T) {
	id := EventID("run-1", FeatureBlocked, "f2", 1)
	require.Equal(t, "hzn-", id[:4])
	require.Len(t, id, 36)
	require.Equal(t, id, EventID("run-1", FeatureBlocked, "f2", 1))
	require.Equal(t, id, NewEvent(FeatureBlocked, "run-1", "f2", 1, "any text").ID, "the text does not change the ID")
	// Computed outside Go:
	//   printf 'horizon-notify/v1\0run-1\0feature_blocked\0f2\0001\0' | sha256sum | cut -c1-32
	require.Equal(t, "hzn-5c65c1ac425c899e5b14c994ae1b3c2e", id)

	seen := map[string]string{}
	for _, c := range []struct {
		run, subject string
		kind         Kind
		seq          int
	}{
		{"run-1", "f2", FeatureBlocked, 1}, {"run-2", "f2", FeatureBlocked, 1}, {"run-1", "f3", FeatureBlocked, 1},
		{"run-1", "f2", Stalled, 1}, {"run-1", "f2", FeatureBlocked, 2},
		// Field boundaries matter: ("ab","c") and ("a","bc") differ.
		{"run-1f", "2", FeatureBlocked, 1}, {"", "", Outage, 0}, {"", "", Outage, 1},
	} {
		id := EventID(c.run, c.kind, c.subject, c.seq)
		key := c.run + "|" + string(c.kind) + "|" + c.subject + "|" + strconv.Itoa(c.seq)
		require.NotContains(t, seen, id, "%s collides with %s", key, seen[id])
		seen[id] = key
	}
}

func TestWebhookDelivers(t *testing.T) {
	srv, log := server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	s := sender(t, cfg(func(c *config.Notify) {
		c.Webhook = srv.URL + "/hooks/secret-token"
		c.WebhookHeaders = []string{"Authorization: Bearer t0k", "X-Title: horizon"}
	}))
	require.Equal(t, []string{"webhook " + srv.URL + "/…"}, s.Receivers(), "the path, often the secret, is not shown")
	ev := NewEvent(ApprovalWaiting, "run-7", "m2", 0, "run-7 waits at milestone m2: horizon approve run-7")
	ev.Details = map[string]string{"milestone": "m2"}
	res, err := s.Send(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.True(t, res[0].OK)
	require.Equal(t, 1, res[0].Attempts)
	require.Equal(t, "200 OK: ok", res[0].Answer)

	require.Equal(t, 1, log.count())
	got, h := log.bodies[0], log.headers[0]
	require.Equal(t, ev.ID, got["id"])
	require.Equal(t, "approval_waiting", got["kind"])
	require.Equal(t, "run-7", got["run_id"])
	require.Equal(t, "m2", got["subject"])
	require.Equal(t, ev.Text, got["text"], "Slack-style receivers show text")
	require.Equal(t, ev.Text, got["message"], "ntfy/Gotify-style receivers show message")
	require.Equal(t, "horizon: approval waiting (run-7)", got["title"])
	require.Equal(t, map[string]any{"milestone": "m2"}, got["details"])
	require.NotEmpty(t, got["time"])
	_, err = time.Parse(time.RFC3339, got["time"].(string))
	require.NoError(t, err)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	require.Equal(t, "Bearer t0k", h.Get("Authorization"))
	require.Equal(t, "horizon", h.Get("X-Title"))
	require.Equal(t, ev.ID, h.Get("Idempotency-Key"))
	require.Equal(t, "approval_waiting", h.Get("X-Horizon-Event"))
}

// Sending the same fact twice (a retried activity) gives the receiver the
// same ID both times, so it can drop the second.
func TestDuplicateSendsShareID(t *testing.T) {
	srv, log := server(t, func(http.ResponseWriter, *http.Request) {})
	s := sender(t, cfg(func(c *config.Notify) { c.Webhook = srv.URL }))
	for range 2 {
		_, err := s.Send(context.Background(), NewEvent(RunEnded, "run-9", "", 0, "run-9 ended: accepted"))
		require.NoError(t, err)
	}
	_, err := s.Send(context.Background(), NewEvent(RunEnded, "run-10", "", 0, "run-10 ended: accepted"))
	require.NoError(t, err)
	require.Equal(t, 3, log.count())
	require.Equal(t, log.bodies[0]["id"], log.bodies[1]["id"])
	require.NotEqual(t, log.bodies[0]["id"], log.bodies[2]["id"])
}

func TestWebhookFailures(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		wantAttempts int
		wantErr      []string
	}{
		{"500 is retried, then reported", http.StatusInternalServerError, 3, []string{"500 Internal Server Error", "after 3 attempt(s)", "boom"}},
		{"429 is retried", http.StatusTooManyRequests, 3, []string{"429"}},
		{"404 is not retried", http.StatusNotFound, 1, []string{"404", "not retried", "notify.webhook"}},
		{"401 is not retried", http.StatusUnauthorized, 1, []string{"401", "notify.webhook_headers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, log := server(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, "boom")
			})
			s := sender(t, cfg(func(c *config.Notify) { c.Webhook = srv.URL + "/secret-path" }))
			ev := NewEvent(Stalled, "run-1", "", 0, "no progress for 2h")
			res, err := s.Send(context.Background(), ev)
			require.Error(t, err)
			var de *DeliveryError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tt.wantAttempts, de.Attempts)
			require.Equal(t, ev.ID, de.EventID)
			require.Equal(t, tt.wantAttempts, log.count(), "the receiver saw every attempt")
			require.Equal(t, log.bodies[0]["id"], log.bodies[len(log.bodies)-1]["id"], "retries carry the same ID")
			require.False(t, res[0].OK)
			require.Equal(t, tt.wantAttempts, res[0].Attempts)
			for _, w := range tt.wantErr {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "secret-path")
		})
	}
}

// A receiver that never answers costs each attempt its timeout, not more.
func TestWebhookHangIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv, log := server(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	s := sender(t, cfg(func(c *config.Notify) {
		c.Webhook = srv.URL
		c.Timeout = 100 * time.Millisecond
		c.Attempts = 2
	}))
	// The outer deadline is a backstop only: were the per-attempt timeout
	// ignored, the error would be the outer one after a single attempt.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.Send(ctx, NewEvent(Outage, "", "engine", 0, "engine unreachable for 15m"))
	require.Error(t, err)
	require.NoError(t, ctx.Err())
	require.Contains(t, err.Error(), "no answer within 100ms (notify.timeout)")
	require.Equal(t, 2, res[0].Attempts)
	require.Equal(t, 2, log.count())
}

func TestUnreachableWebhook(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/x"
	srv.Close() // nothing listens there now
	s := sender(t, cfg(func(c *config.Notify) { c.Webhook = url; c.Attempts = 2 }))
	res, err := s.Send(context.Background(), NewEvent(Test, "", "", 0, "test"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "connection refused")
	require.NotContains(t, err.Error(), "/x", "the URL's path stays hidden")
	require.Equal(t, 2, res[0].Attempts)
}

func TestCommandGetsEventOnStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "event.json")
	envOut := filepath.Join(dir, "env.txt")
	s := sender(t, cfg(func(c *config.Notify) {
		c.Command = `cat > '` + out + `'; printf '%s|%s|%s' "$HORIZON_EVENT_KIND" "$HORIZON_EVENT_ID" "$HORIZON_EVENT_TEXT" > '` + envOut + `'; echo delivered`
	}))
	ev := NewEvent(SpendPaused, "run-3", "", 0, "run-3 paused at its $5.00 ceiling")
	res, err := s.Send(context.Background(), ev)
	require.NoError(t, err)
	require.True(t, res[0].OK)
	require.Equal(t, "exit 0: delivered", res[0].Answer)

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(b), "}\n"), "one JSON line")
	var got Event
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, ev.ID, got.ID)
	require.Equal(t, SpendPaused, got.Kind)
	require.Equal(t, ev.Text, got.Text)
	env, err := os.ReadFile(envOut)
	require.NoError(t, err)
	require.Equal(t, "spend_paused|"+ev.ID+"|"+ev.Text, string(env))
}

func TestCommandFailureIsRetried(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	s := sender(t, cfg(func(c *config.Notify) {
		c.Command = `echo x >> '` + count + `'; echo 'no route to pager' >&2; exit 3`
		c.Attempts = 2
	}))
	res, err := s.Send(context.Background(), NewEvent(Test, "", "", 0, "test"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "exit 3: no route to pager")
	require.Equal(t, 2, res[0].Attempts)
	b, err := os.ReadFile(count)
	require.NoError(t, err)
	require.Equal(t, "x\nx\n", string(b))
}

// On timeout the command's whole process group goes, a child it started
// included.
func TestCommandTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	s := sender(t, cfg(func(c *config.Notify) {
		c.Command = `sleep 60 & echo $! > '` + pidFile + `'; wait`
		c.Timeout = 300 * time.Millisecond
		c.Attempts = 1
	}))
	res, err := s.Send(context.Background(), NewEvent(Test, "", "", 0, "test"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "killed")
	require.Contains(t, err.Error(), "notify.timeout")
	require.False(t, res[0].OK)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		require.True(t, time.Now().Before(deadline), "the command's child %d outlived the timeout", pid)
		time.Sleep(20 * time.Millisecond)
	}
}

// alive: the process exists and is not a zombie (an orphan waits for init
// to reap it, which takes its own time).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z")
}

// One failing receiver does not stop the other, and only it is an error.
func TestReceiversAreIndependent(t *testing.T) {
	srv, log := server(t, func(http.ResponseWriter, *http.Request) {})
	s := sender(t, cfg(func(c *config.Notify) {
		c.Webhook = srv.URL
		c.Command = "exit 1"
		c.Attempts = 1
	}))
	res, err := s.Send(context.Background(), NewEvent(DailyReport, "", "2026-12-01", 0, "report ready"))
	require.Error(t, err)
	require.Len(t, res, 2)
	require.True(t, res[0].OK, res[0].Receiver)
	require.False(t, res[1].OK, res[1].Receiver)
	var de *DeliveryError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "command exit …", de.Receiver, "only the program is shown: the rest may hold a token")
	require.Equal(t, 1, log.count())
}

func TestEventsFilter(t *testing.T) {
	srv, log := server(t, func(http.ResponseWriter, *http.Request) {})
	s := sender(t, cfg(func(c *config.Notify) { c.Webhook = srv.URL; c.Events = []string{"run_ended", "outage"} }))
	require.True(t, s.Enabled(RunEnded))
	require.False(t, s.Enabled(Stalled))
	require.True(t, s.Enabled(Test), "a test is always sent")

	res, err := s.Send(context.Background(), NewEvent(Stalled, "r", "", 0, "stalled"))
	require.NoError(t, err)
	require.Empty(t, res)
	require.Zero(t, log.count(), "a left-out kind is not sent")
	_, err = s.Send(context.Background(), NewEvent(Test, "", "", 0, "test"))
	require.NoError(t, err)
	require.Equal(t, 1, log.count())

	_, err = s.Send(context.Background(), Event{Kind: "lunch", Text: "x"})
	require.ErrorContains(t, err, `"lunch"`)
}

func TestMaxDuration(t *testing.T) {
	s, err := New(cfg(func(c *config.Notify) { c.Timeout = 10 * time.Second; c.Attempts = 3 }))
	require.NoError(t, err)
	require.Equal(t, 10*time.Second+time.Second+10*time.Second+2*time.Second+10*time.Second, s.MaxDuration())
}

func TestNewRejectsBadConfig(t *testing.T) {
	_, err := New(cfg(func(c *config.Notify) { c.Events = []string{"nap"} }))
	require.ErrorContains(t, err, `"nap"`)
	_, err = New(cfg(func(c *config.Notify) { c.Timeout = 0 }))
	require.ErrorContains(t, err, "timeout")
	_, err = New(cfg(func(c *config.Notify) { c.Webhook = "http://h"; c.WebhookHeaders = []string{"bad"} }))
	require.ErrorContains(t, err, "Name: value")
	s, err := New(cfg(func(*config.Notify) {}))
	require.NoError(t, err)
	res, err := s.Send(context.Background(), NewEvent(Test, "", "", 0, "x"))
	require.NoError(t, err)
	require.Empty(t, res, "no receivers: nothing to do")
}

// The kinds here and the names config validates are one list.
func TestKindsMatchConfig(t *testing.T) {
	var names []string
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	require.Equal(t, config.NotifyKinds, names)
}
