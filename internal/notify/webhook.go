package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/horizon/horizon/config"
)

// webhook POSTs the event JSON to a URL.
type webhook struct {
	url     string
	headers http.Header
	client  *http.Client
}

func newWebhook(url string, headers []string) (*webhook, error) {
	w := &webhook{url: url, headers: http.Header{}, client: &http.Client{}}
	for _, h := range headers {
		k, v, err := config.ParseHeader(h)
		if err != nil {
			return nil, fmt.Errorf("notify: webhook_headers: %w", err)
		}
		w.headers.Add(k, v)
	}
	return w, nil
}

// name hides the URL's path and query: for Slack and Discord they are the
// secret.
func (w *webhook) name() string { return "webhook " + config.RedactURL(w.url) }

func (w *webhook) deliver(ctx context.Context, ev Event, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return "", &permanentError{fmt.Errorf("build request: %w", err)}
	}
	for k, vs := range w.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "horizon-notify/1")
	// Receivers that deduplicate by header rather than body can use these.
	req.Header.Set("Idempotency-Key", ev.ID)
	req.Header.Set("X-Horizon-Event", string(ev.Kind))
	resp, err := w.client.Do(req)
	if err != nil {
		return "", redactErr(err, w.url) // net/http names the method and URL
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	answer := resp.Status
	if t := oneLine(string(reply), 200); t != "" {
		answer += ": " + t
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return answer, nil
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusTooEarly, resp.StatusCode >= 500:
		return answer, fmt.Errorf("answered %s", answer)
	default:
		return answer, &permanentError{fmt.Errorf("answered %s (not retried: check notify.webhook and notify.webhook_headers)", answer)}
	}
}

// redactErr keeps the webhook's secret path out of error text (net/http
// quotes the whole URL).
func redactErr(err error, url string) error {
	msg := err.Error()
	if !strings.Contains(msg, url) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(msg, url, config.RedactURL(url)), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// oneLine squeezes s to one line of at most n bytes (on a rune boundary).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
