package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNotifyAndServiceDefaults(t *testing.T) {
	isolate(t)
	c, err := Load(Options{UserFile: "-none-"})
	require.NoError(t, err)
	require.Equal(t, Notify{
		WebhookHeaders: []string{}, Timeout: 10 * time.Second, Attempts: 3,
		OutageAfter: 15 * time.Minute, Events: []string{"all"},
	}, c.Notify)
	require.False(t, c.Notify.Configured())
	require.Equal(t, Service{Name: "horizon", Env: []string{"PATH"}}, c.Service)
}

func TestNotifyAndServiceFromFileAndEnv(t *testing.T) {
	isolate(t)
	repo := "testdata/notify"
	c, err := Load(Options{UserFile: "-none-", Repo: repo})
	require.NoError(t, err)
	require.Equal(t, "https://hooks.example/services/T000/B000/secret", c.Notify.Webhook)
	require.Equal(t, []string{"Authorization: Bearer tok", "X-Title: horizon"}, c.Notify.WebhookHeaders, "header case survives")
	require.Equal(t, "cat >> /tmp/horizon-events.jsonl", c.Notify.Command)
	require.Equal(t, 5*time.Second, c.Notify.Timeout)
	require.Equal(t, 2, c.Notify.Attempts)
	require.Equal(t, 30*time.Minute, c.Notify.OutageAfter)
	require.Equal(t, []string{"approval_waiting", "run_ended"}, c.Notify.Events)
	require.True(t, c.Notify.Configured())
	require.Equal(t, Service{Name: "horizon-work", Env: []string{"PATH", "ANTHROPIC_API_KEY"}}, c.Service)

	t.Setenv("HORIZON_NOTIFY_EVENTS", "stalled,outage")
	t.Setenv("HORIZON_NOTIFY_OUTAGE_AFTER", "5m")
	t.Setenv("HORIZON_NOTIFY_COMMAND", "notify-send horizon")
	t.Setenv("HORIZON_SERVICE_ENV", "PATH,GOPATH")
	c, err = Load(Options{UserFile: "-none-", Repo: repo})
	require.NoError(t, err)
	require.Equal(t, []string{"stalled", "outage"}, c.Notify.Events)
	require.Equal(t, 5*time.Minute, c.Notify.OutageAfter)
	require.Equal(t, "notify-send horizon", c.Notify.Command)
	require.Equal(t, []string{"PATH", "GOPATH"}, c.Service.Env)

	s := c.Settings()
	require.Equal(t, "https://hooks.example/…", s["notify.webhook"], "the webhook's path is its secret")
	require.Equal(t, []string{"Authorization: …", "X-Title: …"}, s["notify.webhook_headers"])
	require.Equal(t, "notify-send …", s["notify.command"], "a command's arguments may hold a token")
}

func TestNotifyAndServiceBadInput(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"webhook not a URL", map[string]string{"HORIZON_NOTIFY_WEBHOOK": "hooks.example/x"}, []string{"HORIZON_NOTIFY_WEBHOOK", "notify.webhook", "http(s) URL"}},
		{"webhook ftp", map[string]string{"HORIZON_NOTIFY_WEBHOOK": "ftp://h/x"}, []string{"notify.webhook", `"ftp://h/…"`}},
		{"header without colon", map[string]string{"HORIZON_NOTIFY_WEBHOOK_HEADERS": "Bearer secret-token-value"}, []string{"HORIZON_NOTIFY_WEBHOOK_HEADERS", "Name: value"}},
		{"header name with space", map[string]string{"HORIZON_NOTIFY_WEBHOOK_HEADERS": "X Title: a"}, []string{"notify.webhook_headers", "X Title: …"}},
		{"zero timeout", map[string]string{"HORIZON_NOTIFY_TIMEOUT": "0s"}, []string{"notify.timeout"}},
		{"bad timeout", map[string]string{"HORIZON_NOTIFY_TIMEOUT": "soon"}, []string{"HORIZON_NOTIFY_TIMEOUT", "notify.timeout"}},
		{"zero attempts", map[string]string{"HORIZON_NOTIFY_ATTEMPTS": "0"}, []string{"notify.attempts", "between 1 and 10"}},
		{"many attempts", map[string]string{"HORIZON_NOTIFY_ATTEMPTS": "50"}, []string{"notify.attempts"}},
		{"zero outage", map[string]string{"HORIZON_NOTIFY_OUTAGE_AFTER": "0"}, []string{"notify.outage_after"}},
		{"unknown event", map[string]string{"HORIZON_NOTIFY_EVENTS": "run_ended,lunch"}, []string{"HORIZON_NOTIFY_EVENTS", `"lunch"`, "approval_waiting", "daily_report"}},
		{"service name with slash", map[string]string{"HORIZON_SERVICE_NAME": "a/b"}, []string{"HORIZON_SERVICE_NAME", "service.name"}},
		{"service name with suffix", map[string]string{"HORIZON_SERVICE_NAME": "horizon.service"}, []string{"service.name", "no .service suffix"}},
		{"service env name", map[string]string{"HORIZON_SERVICE_ENV": "PATH,MY-VAR"}, []string{"service.env", `"MY-VAR"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := Load(Options{UserFile: "-none-"})
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "secret", "a bad setting's error does not print its secret")
		})
	}
}

func TestParseHeader(t *testing.T) {
	n, v, err := ParseHeader("Authorization:  Bearer a:b ")
	require.NoError(t, err)
	require.Equal(t, "Authorization", n)
	require.Equal(t, "Bearer a:b", v)
	_, _, err = ParseHeader(": x")
	require.Error(t, err)
}
