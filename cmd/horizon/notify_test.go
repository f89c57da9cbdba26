package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/notify"
)

func notifyEnv(t *testing.T) {
	t.Helper()
	t.Setenv("HORIZON_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, k := range []string{"HORIZON_NOTIFY_WEBHOOK", "HORIZON_NOTIFY_COMMAND", "HORIZON_NOTIFY_WEBHOOK_HEADERS", "HORIZON_NOTIFY_EVENTS"} {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
}

func TestNotifyTest(t *testing.T) {
	notifyEnv(t)
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		_, _ = io.WriteString(w, `{"id":"msg-1"}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "event.json")
	t.Setenv("HORIZON_NOTIFY_WEBHOOK", srv.URL+"/topic")
	t.Setenv("HORIZON_NOTIFY_COMMAND", "cat > '"+file+"'")
	t.Setenv("HORIZON_NOTIFY_EVENTS", "run_ended") // a test is sent anyway

	out, _, err := cliRun(t, "notify", "test", "--repo", t.TempDir())
	require.NoError(t, err)
	require.Contains(t, out, "ok      webhook "+srv.URL+"/… (1 attempt,")
	require.Contains(t, out, `200 OK: {"id":"msg-1"}`)
	require.Contains(t, out, "ok      command cat … (1 attempt,")

	out, _, err = cliRun(t, "notify", "test", "--json", "--repo", t.TempDir())
	require.NoError(t, err)
	var res struct {
		Event   notify.Event
		Results []notify.Result
		OK      bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.True(t, res.OK)
	require.Equal(t, notify.Test, res.Event.Kind)
	require.Len(t, res.Results, 2)

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var fromCmd notify.Event
	require.NoError(t, json.Unmarshal(b, &fromCmd))
	require.Equal(t, res.Event.ID, fromCmd.ID, "the command got the same event")
	require.Len(t, got, 2)
	require.Equal(t, "test", got[1]["kind"])
	require.Contains(t, got[1]["text"], "test notification")
	require.NotEqual(t, got[0]["id"], got[1]["id"], "each test is a new event, so deduplicating receivers show it")
}

func TestNotifyTestFailures(t *testing.T) {
	notifyEnv(t)
	_, _, err := cliRun(t, "notify", "test", "--repo", t.TempDir())
	require.Equal(t, ExitUsage, exitCode(err))
	require.ErrorContains(t, err, "notify.webhook")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	t.Setenv("HORIZON_NOTIFY_WEBHOOK", srv.URL)
	t.Setenv("HORIZON_NOTIFY_ATTEMPTS", "1")
	out, _, err := cliRun(t, "notify", "test", "--repo", t.TempDir())
	require.Equal(t, ExitEnvironment, exitCode(err))
	require.Contains(t, out, "FAILED  webhook "+srv.URL)
	require.Contains(t, out, "503 Service Unavailable: down for maintenance")

	t.Setenv("HORIZON_NOTIFY_WEBHOOK", "not a url")
	_, _, err = cliRun(t, "notify", "test", "--repo", t.TempDir())
	require.Equal(t, ExitUsage, exitCode(err))
	require.ErrorContains(t, err, "HORIZON_NOTIFY_WEBHOOK")

	_, _, err = cliRun(t, "notify", "send", "--repo", t.TempDir())
	require.Equal(t, ExitUsage, exitCode(err))
}
