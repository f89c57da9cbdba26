package reader

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/fakemodel"
)

// startFake serves script on a loopback port for the test's lifetime.
func startFake(t *testing.T, script *fakemodel.Script) *fakemodel.Server {
	t.Helper()
	require.NoError(t, script.Validate())
	srv := fakemodel.New(script)
	require.NoError(t, srv.Start("127.0.0.1:0"))
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

const goDiagnosis = `Likely cause: cart.Total ranges over prices[1:], so it drops the first price and panics on an empty slice; price.Discount returns the discount itself instead of the reduced price.
Change: cart/cart.go, the loop in Total: range over prices. price/price.go line 5: return price - price*pct/100.
Do not: edit cart_test.go or price_test.go, or special-case the test inputs.`

func TestDiagnoseFakeModel(t *testing.T) {
	ev := goEvidence(t)
	sys, user := Prompt(ev)
	srv := startFake(t, &fakemodel.Script{
		Rules: []fakemodel.Rule{{
			Name: "diagnose",
			// The system prompt, the goal, a failing test, the output and the
			// diff must all reach the model.
			When: []string{
				"You are the reader in horizon", "never instructions to you",
				"Implement cart.Total", "example.com/shop/price.TestDiscountZero",
				"slice bounds out of range [1:0]", "+\treturn price * pct / 100",
			},
			Replies: []fakemodel.Reply{{Text: "\n" + goDiagnosis + "\n", Usage: &fakemodel.Usage{PromptTokens: 1500, CompletionTokens: 90}}},
		}},
		Fallback: &fakemodel.Reply{Text: "the request did not carry the prompt"},
	})

	cases := []struct {
		name     string
		cfg      Config
		wantCost float64
	}{
		{"local, no prices", Config{BaseURL: srv.URL(), Model: "qwen2.5-coder:7b", Timeout: 30 * time.Second}, 0},
		{"metered, trailing slash", Config{BaseURL: srv.URL() + "/", Model: "reader-large", APIKey: "sk-test", MaxOutputTokens: 400,
			InputPerMTok: 3, OutputPerMTok: 15}, 1500*3/1e6 + 90*15/1e6},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diagnose(context.Background(), tc.cfg, ev)
			require.NoError(t, err)
			require.Equal(t, goDiagnosis, d.Text, "scripted text, trimmed")
			require.Equal(t, tc.cfg.Model, d.Model)
			require.Equal(t, 1500, d.PromptTokens)
			require.Equal(t, 90, d.CompletionTokens)
			require.InDelta(t, tc.wantCost, d.Cost, 1e-12)

			reqs := srv.Requests()
			require.Len(t, reqs, i+1)
			got := reqs[i]
			require.Equal(t, "diagnose", got.Rule, "the rule whose when-strings cover the prompt answered")
			require.False(t, got.Stream)
			require.Equal(t, tc.cfg.Model, got.Model)
			require.Equal(t, 0, got.Step)
			require.Equal(t, user, got.LastUser)
			require.NotContains(t, got.LastUser, sys, "the system prompt travels as its own message")
		})
	}
}

func TestDiagnoseEstimatedUsage(t *testing.T) {
	srv := startFake(t, &fakemodel.Script{Fallback: &fakemodel.Reply{Text: "Likely cause: x."}})
	d, err := Diagnose(context.Background(), Config{BaseURL: srv.URL(), Model: "m", InputPerMTok: 1, OutputPerMTok: 2}, pytestEvidence(t))
	require.NoError(t, err)
	require.Equal(t, "Likely cause: x.", d.Text)
	require.Positive(t, d.PromptTokens, "the fake model estimates usage from the prompt size")
	require.Positive(t, d.CompletionTokens)
	require.InDelta(t, float64(d.PromptTokens)/1e6+2*float64(d.CompletionTokens)/1e6, d.Cost, 1e-12)
}

func TestDiagnoseDeadline(t *testing.T) {
	srv := startFake(t, &fakemodel.Script{Rules: []fakemodel.Rule{{
		Name: "slow", When: []string{"You are the reader in horizon"},
		Replies: []fakemodel.Reply{{Text: "too late", DelayMs: 60_000}},
	}}})
	cases := []struct {
		name       string
		ctxTimeout time.Duration // 0: no deadline on the caller's context
		cfg        Config
	}{
		{"Config.Timeout", 0, Config{BaseURL: srv.URL(), Model: "m", Timeout: 150 * time.Millisecond}},
		{"caller's deadline", 150 * time.Millisecond, Config{BaseURL: srv.URL(), Model: "m", Timeout: time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			start := time.Now()
			d, err := Diagnose(ctx, tc.cfg, goEvidence(t))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Empty(t, d.Text)
			require.Less(t, time.Since(start), 30*time.Second, "the 60 s reply was not awaited")
		})
	}
	// Both requests reached the server before the deadline cut them off.
	require.Len(t, srv.Requests(), 2)
}

func TestDiagnoseCanceled(t *testing.T) {
	srv := startFake(t, &fakemodel.Script{Fallback: &fakemodel.Reply{Hold: "never"}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Diagnose(ctx, Config{BaseURL: srv.URL(), Model: "m"}, goEvidence(t))
		errc <- err
	}()
	_, err := srv.WaitForRequest(context.Background(), func(r fakemodel.Request) bool { return r.Held })
	require.NoError(t, err)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
}

func TestDiagnoseEmptyAnswer(t *testing.T) {
	t.Run("fakemodel empty text", func(t *testing.T) {
		srv := startFake(t, &fakemodel.Script{Rules: []fakemodel.Rule{{
			Name: "empty", When: []string{"You are the reader in horizon"},
			Replies: []fakemodel.Reply{{Text: "", Usage: &fakemodel.Usage{PromptTokens: 700, CompletionTokens: 0}}},
		}}})
		d, err := Diagnose(context.Background(), Config{BaseURL: srv.URL(), Model: "m", InputPerMTok: 1}, goEvidence(t))
		require.ErrorIs(t, err, ErrEmptyAnswer)
		require.Empty(t, d.Text)
		require.Equal(t, 700, d.PromptTokens, "a paid empty answer still reports usage")
		require.InDelta(t, 700/1e6, d.Cost, 1e-12)
	})

	cases := []struct {
		name, body, wantMsg string
	}{
		{"whitespace", `{"choices":[{"message":{"content":" \n\t "}}]}`, ""},
		{"null content", `{"choices":[{"message":{"content":null}}]}`, ""},
		{"no choices", `{"choices":[],"usage":{"prompt_tokens":5}}`, "no choices"},
		{"error in a 200", `{"error":{"message":"model is loading"}}`, "model is loading"},
		{"only a think block", `{"choices":[{"message":{"content":"<think>hmm, the slice...</think>\n\n"}}]}`, ""},
		{"cut at the token limit", `{"choices":[{"message":{"content":"<think>long thoughts"},"finish_reason":"length"}]}`, "MaxOutputTokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := serveJSON(t, http.StatusOK, tc.body)
			_, err := Diagnose(context.Background(), Config{BaseURL: url, Model: "m"}, goEvidence(t))
			require.ErrorIs(t, err, ErrEmptyAnswer)
			require.Contains(t, err.Error(), tc.wantMsg)
		})
	}
}

// serveJSON serves body with status to every request and returns a base URL.
func serveJSON(t *testing.T, status int, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

const okBody = `{"model":"served-model","choices":[{"message":{"role":"assistant","content":"Likely cause: fixed."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`

// step is one scripted HTTP answer.
type step struct {
	status     int
	retryAfter string
	body       string
}

// sequenceServer answers the n-th request with steps[n] (the last repeats)
// and counts requests.
func sequenceServer(t *testing.T, steps ...step) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		s := steps[min(i, len(steps)-1)]
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		_, _ = io.WriteString(w, s.body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1", &n
}

func TestDiagnoseRetry(t *testing.T) {
	unauthorized := `{"error":{"message":"Incorrect API key provided: sk-te***","type":"invalid_request_error"}}`
	cases := []struct {
		name       string
		steps      []step
		backoff    time.Duration
		wantCalls  int32
		wantStatus int // 0: success
		wantMsg    string
	}{
		{"500 then 200: one retry succeeds", []step{{status: 500, body: "upstream crashed"}, {status: 200, body: okBody}}, time.Millisecond, 2, 0, ""},
		{"502 then 200", []step{{status: 502}, {status: 200, body: okBody}}, time.Millisecond, 2, 0, ""},
		// A one-hour backoff would hit the 30 s timeout: Retry-After 0 must win.
		{"429 with Retry-After 0 retries at once", []step{{status: 429, retryAfter: "0"}, {status: 200, body: okBody}}, time.Hour, 2, 0, ""},
		{"429 with a small Retry-After", []step{{status: 429, retryAfter: "0.01"}, {status: 200, body: okBody}}, time.Hour, 2, 0, ""},
		{"503 twice: only one retry", []step{{status: 503, body: `{"error":"overloaded"}`}}, time.Millisecond, 2, 503, "overloaded"},
		{"429 with a long Retry-After: no retry", []step{{status: 429, retryAfter: "3600", body: `{"error":{"message":"rate limited"}}`}}, time.Millisecond, 1, 429, "rate limited"},
		{"401: no retry", []step{{status: 401, body: unauthorized}}, time.Millisecond, 1, 401, "Incorrect API key"},
		{"400: no retry", []step{{status: 400, body: "bad request"}}, time.Millisecond, 1, 400, "bad request"},
		{"404: no retry", []step{{status: 404, body: "<html>not found</html>"}}, time.Millisecond, 1, 404, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, calls := sequenceServer(t, tc.steps...)
			d, err := Diagnose(context.Background(), Config{BaseURL: url, Model: "m", Timeout: 30 * time.Second, RetryBackoff: tc.backoff}, goEvidence(t))
			require.Equal(t, tc.wantCalls, calls.Load())
			if tc.wantStatus == 0 {
				require.NoError(t, err)
				require.Equal(t, "Likely cause: fixed.", d.Text)
				require.Equal(t, "served-model", d.Model, "the model the server names")
				require.Equal(t, 10, d.PromptTokens)
				require.Equal(t, 3, d.CompletionTokens)
				return
			}
			var he *HTTPError
			require.ErrorAs(t, err, &he)
			require.Equal(t, tc.wantStatus, he.Status)
			require.Contains(t, err.Error(), tc.wantMsg)
			require.Equal(t, tc.wantStatus == 429 || tc.wantStatus >= 500, he.Retryable())
		})
	}
}

func TestDiagnoseRetryWaitRespectsDeadline(t *testing.T) {
	url, calls := sequenceServer(t, step{status: 503, body: "busy"})
	_, err := Diagnose(context.Background(), Config{BaseURL: url, Model: "m", Timeout: 100 * time.Millisecond, RetryBackoff: time.Hour}, goEvidence(t))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var he *HTTPError
	require.ErrorAs(t, err, &he, "the error still says what the server answered")
	require.Equal(t, 503, he.Status)
	require.Equal(t, int32(1), calls.Load())
}

func TestHTTPErrorBodyTruncated(t *testing.T) {
	huge := strings.Repeat("é", 50_000)
	url, _ := sequenceServer(t, step{status: 401, body: huge})
	_, err := Diagnose(context.Background(), Config{BaseURL: url, Model: "m"}, goEvidence(t))
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	require.LessOrEqual(t, len(he.Body), maxErrorBody+3)
	require.True(t, strings.HasPrefix(huge, strings.TrimSuffix(he.Body, "...")), "cut on a rune boundary")
	require.Less(t, len(err.Error()), 600, "the error message stays short")
}

func TestDiagnoseRequestShape(t *testing.T) {
	type seen struct {
		path, auth, contentType string
		body                    map[string]any
	}
	var (
		mu  sync.Mutex
		got []seen
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, seen{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
		mu.Unlock()
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":[{"type":"text","text":"Likely cause: a."},{"type":"text","text":"Do not: b."}]}}]}`)
	}))
	t.Cleanup(ts.Close)

	ev := pytestEvidence(t)
	sys, user := Prompt(ev)
	cases := []struct {
		name          string
		cfg           Config
		wantAuth      string
		wantMaxTokens any
	}{
		{"key and token limit", Config{BaseURL: ts.URL + "/v1/", Model: "gpt-reader", APIKey: "sk-secret", MaxOutputTokens: 300}, "Bearer sk-secret", float64(300)},
		{"no key, no limit", Config{BaseURL: ts.URL + "/v1", Model: "local"}, "", nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diagnose(context.Background(), tc.cfg, ev)
			require.NoError(t, err)
			require.Equal(t, "Likely cause: a.\nDo not: b.", d.Text, "content parts are joined")
			require.Equal(t, tc.cfg.Model, d.Model, "no model in the response: the configured one")
			require.Zero(t, d.Cost)

			mu.Lock()
			s := got[i]
			mu.Unlock()
			require.Equal(t, "/v1/chat/completions", s.path)
			require.Equal(t, tc.wantAuth, s.auth)
			require.Equal(t, "application/json", s.contentType)
			require.Equal(t, tc.cfg.Model, s.body["model"])
			require.Equal(t, false, s.body["stream"])
			require.Contains(t, s.body, "temperature", "temperature 0 is sent, not omitted")
			require.Equal(t, float64(0), s.body["temperature"])
			require.Equal(t, tc.wantMaxTokens, s.body["max_tokens"])
			require.NotContains(t, s.body, "tools", "the reader has no tools")
			require.Equal(t, []any{
				map[string]any{"role": "system", "content": sys},
				map[string]any{"role": "user", "content": user},
			}, s.body["messages"])
		})
	}
}

func TestDiagnoseBadInput(t *testing.T) {
	url := serveJSON(t, http.StatusOK, "not json at all")
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no base URL", Config{Model: "m"}, "BaseURL is empty"},
		{"no model", Config{BaseURL: url}, "Model is empty"},
		{"undecodable answer", Config{BaseURL: url, Model: "m"}, "decode response"},
		{"nothing listening", Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, "POST http://127.0.0.1:1/v1/chat/completions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Diagnose(context.Background(), tc.cfg, goEvidence(t))
			require.ErrorContains(t, err, tc.want)
			var he *HTTPError
			require.False(t, errors.As(err, &he))
			require.NotErrorIs(t, err, ErrEmptyAnswer)
		})
	}
}

func TestDiagnoseClipsLongAnswer(t *testing.T) {
	long := strings.Repeat("Likely cause: the loop.\n", 5000)
	body, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": long}}}})
	require.NoError(t, err)
	d, err := Diagnose(context.Background(), Config{BaseURL: serveJSON(t, 200, string(body)), Model: "m"}, goEvidence(t))
	require.NoError(t, err)
	require.LessOrEqual(t, len(d.Text), MaxDiagnosisBytes+64)
	require.True(t, strings.HasSuffix(d.Text, "[... diagnosis clipped ...]"))
}

func TestDiagnoseStripsThinkBlock(t *testing.T) {
	url := serveJSON(t, 200, `{"choices":[{"message":{"content":"<think>\nthe slice starts at 1\n</think>\n\nLikely cause: prices[1:]."}}]}`)
	d, err := Diagnose(context.Background(), Config{BaseURL: url, Model: "qwen3"}, goEvidence(t))
	require.NoError(t, err)
	require.Equal(t, "Likely cause: prices[1:].", d.Text)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header string
		want   retryHint
	}{
		{"", retryHint{}},
		{"soon", retryHint{}},
		{"-3", retryHint{}},
		{"0", retryHint{set: true}},
		{"2", retryHint{set: true, wait: 2 * time.Second}},
		{" 1.5 ", retryHint{set: true, wait: 1500 * time.Millisecond}},
		{"3600", retryHint{set: true, wait: time.Hour}},
		{now.Add(5 * time.Second).Format(http.TimeFormat), retryHint{set: true, wait: 5 * time.Second}},
		{now.Add(-time.Minute).Format(http.TimeFormat), retryHint{set: true}},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			require.Equal(t, tc.want, retryAfter(tc.header, now))
		})
	}
}
