package reader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config names the reader model and its endpoint.
type Config struct {
	BaseURL         string        // OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1
	APIKey          string        // sent as "Authorization: Bearer <key>"; may be empty
	Model           string        // model id sent in the request
	Timeout         time.Duration // bound of the whole call, retry included; 0 = DefaultTimeout
	MaxOutputTokens int           // sent as max_tokens when > 0

	// Prices in dollars per million tokens; Diagnosis.Cost is 0 without them.
	InputPerMTok  float64
	OutputPerMTok float64

	// RetryBackoff is the wait before the one retry after a 429 or 5xx when
	// the server sends no usable Retry-After; 0 = DefaultRetryBackoff.
	RetryBackoff time.Duration
	// HTTPClient sends the requests; nil = a plain client (the deadline
	// comes from the context).
	HTTPClient *http.Client
}

// Diagnosis is the reader's answer and what it cost.
type Diagnosis struct {
	Text             string  // the diagnosis, trimmed, for the next worker's brief
	Model            string  // the model that answered (as the server names it, else Config.Model)
	PromptTokens     int     // as reported by the server
	CompletionTokens int     // as reported by the server
	Cost             float64 // dollars; 0 unless Config has prices
}

const (
	// DefaultTimeout bounds a call when Config.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
	// DefaultRetryBackoff is the wait before the retry when the server sends
	// no usable Retry-After.
	DefaultRetryBackoff = time.Second
	// MaxRetryAfter is the longest Retry-After honoured; a server asking for
	// a longer wait gets no retry, and its *HTTPError is returned at once.
	MaxRetryAfter = 10 * time.Second
	// MaxDiagnosisBytes bounds Diagnosis.Text, which goes into a brief.
	MaxDiagnosisBytes = 16 << 10

	maxErrorBody    = 2 << 10  // bytes of a non-2xx body kept in HTTPError.Body
	maxResponseBody = 16 << 20 // bytes of a response read at most
)

// ErrEmptyAnswer is wrapped by the error Diagnose returns when the model
// answered with no text.
var ErrEmptyAnswer = errors.New("reader: the model returned an empty answer")

// HTTPError is a non-2xx answer from the endpoint.
type HTTPError struct {
	Status int    // HTTP status code
	Body   string // the response body, truncated to a few KiB
}

func (e *HTTPError) Error() string {
	msg := errorMessage(e.Body)
	if msg == "" {
		return fmt.Sprintf("reader: HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("reader: HTTP %d %s: %s", e.Status, http.StatusText(e.Status), msg)
}

// Retryable reports whether the status is one Diagnose retries (429, 5xx):
// the endpoint is overloaded or failing rather than refusing the request.
func (e *HTTPError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// errorMessage extracts a short message from an error body: the OpenAI
// {"error": {"message": ...}} or {"error": "..."} shape, else the body's
// first line.
func errorMessage(body string) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(body), &v) == nil && len(v.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			body = obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			body = s
		}
	}
	msg, dropped := clipHead(oneLine(clean(body)), 300)
	if dropped > 0 {
		msg += " ..."
	}
	return msg
}

// Wire format: the subset of chat completions the reader sends and reads.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Diagnose asks the reader model for a diagnosis of ev: one non-streaming
// POST {BaseURL}/chat/completions with Prompt(ev) at temperature 0.
//
// A 429 or 5xx answer is retried once, after Retry-After when the server
// sends one of at most MaxRetryAfter (no retry when it asks for longer),
// else after RetryBackoff. The whole call, retry included, ends at
// Config.Timeout or the context's deadline, whichever is first; the error
// then wraps context.DeadlineExceeded (or context.Canceled). A non-2xx answer
// is an *HTTPError. An answer with no text (no choices, empty or null
// content, or only a <think> block) wraps ErrEmptyAnswer; the Diagnosis
// returned with it still carries the usage and cost, since the call was paid
// for.
func Diagnose(ctx context.Context, c Config, ev Evidence) (Diagnosis, error) {
	if strings.TrimSpace(c.BaseURL) == "" {
		return Diagnosis{}, errors.New("reader: config: BaseURL is empty")
	}
	if strings.TrimSpace(c.Model) == "" {
		return Diagnosis{}, errors.New("reader: config: Model is empty")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	system, user := Prompt(ev)
	body, err := json.Marshal(chatRequest{
		Model: c.Model,
		Messages: []chatMessage{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
		Temperature: 0,
		Stream:      false,
		MaxTokens:   max(c.MaxOutputTokens, 0),
	})
	if err != nil {
		return Diagnosis{}, fmt.Errorf("reader: encode request: %w", err)
	}
	url := strings.TrimRight(strings.TrimSpace(c.BaseURL), "/") + "/chat/completions"

	var resp chatResponse
	for attempt := 1; ; attempt++ {
		var hint retryHint
		resp, hint, err = post(ctx, c, url, body)
		if err == nil {
			break
		}
		var he *HTTPError
		if !errors.As(err, &he) || !he.Retryable() {
			return Diagnosis{}, err
		}
		if attempt > 1 {
			return Diagnosis{}, fmt.Errorf("%w (also on the retry)", err)
		}
		wait := c.RetryBackoff
		if wait <= 0 {
			wait = DefaultRetryBackoff
		}
		if hint.set {
			if hint.wait > MaxRetryAfter {
				return Diagnosis{}, err // the endpoint asks for a long pause: let the ladder decide
			}
			wait = hint.wait
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Diagnosis{}, fmt.Errorf("%w (gave up waiting to retry: %w)", err, ctx.Err())
		}
	}
	return diagnosis(c, resp)
}

// retryHint is what a non-2xx answer's Retry-After header asked for.
type retryHint struct {
	set  bool          // the header was present and parsable
	wait time.Duration // how long it asked to wait (0: retry now)
}

// post sends one request. On a non-2xx answer it returns an *HTTPError and
// the server's Retry-After hint.
func post(ctx context.Context, c Config, url string, body []byte) (chatResponse, retryHint, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return chatResponse{}, retryHint{}, fmt.Errorf("reader: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		// *url.Error wraps the context's error too; name it plainly.
		if ctxErr := ctx.Err(); ctxErr != nil {
			return chatResponse{}, retryHint{}, fmt.Errorf("reader: POST %s: no answer after %s: %w", url, time.Since(start).Round(time.Millisecond), ctxErr)
		}
		return chatResponse{}, retryHint{}, fmt.Errorf("reader: POST %s: %w", url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBody))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return chatResponse{}, retryHint{}, fmt.Errorf("reader: read response: %w", ctxErr)
		}
		return chatResponse{}, retryHint{}, fmt.Errorf("reader: read response: %w", err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		if len(text) > maxErrorBody {
			text = rawHead(text, maxErrorBody) + "..."
		}
		return chatResponse{}, retryAfter(res.Header.Get("Retry-After"), time.Now()), &HTTPError{Status: res.StatusCode, Body: text}
	}
	var out chatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		snippet, _ := clipHead(oneLine(clean(string(data))), 200)
		return chatResponse{}, retryHint{}, fmt.Errorf("reader: decode response (HTTP %d): %w: %q", res.StatusCode, err, snippet)
	}
	return out, retryHint{}, nil
}

// retryAfter parses a Retry-After header, in seconds or as an HTTP date
// (a date in the past means now).
func retryAfter(h string, now time.Time) retryHint {
	h = strings.TrimSpace(h)
	if h == "" {
		return retryHint{}
	}
	if secs, err := strconv.ParseFloat(h, 64); err == nil && secs >= 0 && secs < 1e6 {
		return retryHint{set: true, wait: time.Duration(secs * float64(time.Second))}
	}
	if at, err := http.ParseTime(h); err == nil {
		return retryHint{set: true, wait: max(at.Sub(now), 0)}
	}
	return retryHint{}
}

// think matches a reasoning block that some local models (Qwen3,
// DeepSeek-R1) put before their answer.
var think = regexp.MustCompile(`(?s)^\s*<think>.*?(?:</think>|$)`)

// diagnosis turns a 2xx response into a Diagnosis.
func diagnosis(c Config, resp chatResponse) (Diagnosis, error) {
	d := Diagnosis{
		Model:            resp.Model,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}
	if d.Model == "" {
		d.Model = c.Model
	}
	d.Cost = float64(d.PromptTokens)*c.InputPerMTok/1e6 + float64(d.CompletionTokens)*c.OutputPerMTok/1e6
	if len(resp.Choices) == 0 {
		if msg := errorMessage(string(resp.Error)); len(resp.Error) > 0 && string(resp.Error) != "null" && msg != "" {
			return d, fmt.Errorf("%w: no choices; the server says: %s", ErrEmptyAnswer, msg)
		}
		return d, fmt.Errorf("%w: no choices in the response", ErrEmptyAnswer)
	}
	choice := resp.Choices[0]
	text := strings.TrimSpace(think.ReplaceAllString(content(choice.Message.Content), ""))
	if text == "" {
		if choice.FinishReason == "length" {
			return d, fmt.Errorf("%w: it stopped at the output token limit (finish_reason length); raise MaxOutputTokens", ErrEmptyAnswer)
		}
		return d, ErrEmptyAnswer
	}
	if len(text) > MaxDiagnosisBytes {
		text, _ = clipHead(text, MaxDiagnosisBytes)
		text = strings.TrimRight(text, "\n") + "\n[... diagnosis clipped ...]"
	}
	d.Text = text
	return d, nil
}

// content reads a message's content: a string, null, or an array of parts of
// which the text parts count.
func content(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if (p.Type == "text" || p.Type == "") && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
