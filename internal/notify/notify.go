// Package notify tells a person that a run needs them, or did something
// while nobody watched, through the receivers in config: a webhook (a JSON
// POST) and a command (the JSON on its stdin).
//
// Delivery is at least once: an event is retried with backoff a bounded
// number of times, each attempt under its own timeout, so a receiver that
// answers 500 or never answers costs at most attempts × (timeout + backoff).
// Every event carries a stable ID derived from what it is about, so a
// receiver can drop the duplicates that retries (or a retried activity)
// produce. Send returns an error and lets the caller decide: a run is never
// failed because a notification was not delivered.
package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/horizon/horizon/config"
)

// Kind names what an event is about.
type Kind string

// The kinds of event; config.NotifyKinds lists the same names.
const (
	ApprovalWaiting Kind = "approval_waiting" // a run waits for `horizon approve`
	FeatureBlocked  Kind = "feature_blocked"  // a feature stopped on a typed blocker
	SpendPaused     Kind = "spend_paused"     // a spend ceiling paused a run
	Stalled         Kind = "stalled"          // a run made no progress for a long time
	Outage          Kind = "outage"           // engine or providers unreachable for notify.outage_after
	RunEnded        Kind = "run_ended"        // a run finished, one way or another
	DailyReport     Kind = "daily_report"     // the morning report is written
	// AdvisorConcern: the advisor told a worker of a concern whose
	// evidence the fact check confirmed (once per feature).
	AdvisorConcern Kind = "advisor_concern"
	Test           Kind = "test" // `horizon notify test`
)

// Kinds lists every kind, in documentation order.
func Kinds() []Kind {
	return []Kind{ApprovalWaiting, FeatureBlocked, SpendPaused, Stalled, Outage, RunEnded, DailyReport, AdvisorConcern, Test}
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return slices.Contains(Kinds(), k) }

// Event is one notification. Its JSON is what receivers get (plus a
// message field equal to text, for ntfy- and Gotify-style receivers).
type Event struct {
	// ID is stable for (RunID, Kind, Subject, Seq): see EventID.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// RunID is the run the event is about ("" for events about no run, such
	// as an outage or a test).
	RunID string `json:"run_id,omitempty"`
	// Subject narrows it: a feature ID, a milestone, a report date.
	Subject string `json:"subject,omitempty"`
	// Seq tells apart events that are otherwise the same, such as the
	// second time one feature is blocked; the caller counts.
	Seq int `json:"seq"`
	// Time is when it happened; Send sets it when zero.
	Time time.Time `json:"time"`
	// Title is a short headline; Text is what a person reads, shown as is
	// by Slack-style receivers.
	Title string `json:"title"`
	Text  string `json:"text"`
	// URL points where to look (the Web UI's page of the run), if any.
	URL string `json:"url,omitempty"`
	// Host is the machine that sent it.
	Host string `json:"host,omitempty"`
	// Details are extra fields for scripts (feature, blocker type, spend).
	Details map[string]string `json:"details,omitempty"`
}

// EventID derives an event's ID from what it is about, so the same fact
// reported twice (a retried activity, a resumed run) has the same ID and
// different facts never share one. The derivation is part of the contract
// with receivers: do not change it.
func EventID(runID string, kind Kind, subject string, seq int) string {
	h := sha256.New()
	for _, part := range []string{"horizon-notify/v1", runID, string(kind), subject, strconv.Itoa(seq)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "hzn-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// NewEvent builds an event with its ID and a default title.
func NewEvent(kind Kind, runID, subject string, seq int, text string) Event {
	title := "horizon: " + strings.ReplaceAll(string(kind), "_", " ")
	if runID != "" {
		title += " (" + runID + ")"
	}
	return Event{ID: EventID(runID, kind, subject, seq), Kind: kind, RunID: runID, Subject: subject, Seq: seq, Title: title, Text: text}
}

// payload is the wire form: the event, plus message for receivers that
// read that field instead of text.
type payload struct {
	Event
	Message string `json:"message"`
}

// Marshal is the JSON a receiver gets.
func Marshal(ev Event) ([]byte, error) {
	return json.Marshal(payload{Event: ev, Message: ev.Text})
}

// Notifier sends events; the daemon's activities hold one.
type Notifier interface {
	// Send delivers ev to every configured receiver and reports what each
	// answered. The error joins one *DeliveryError per receiver that failed
	// after its attempts; an event of a kind notify.events leaves out is
	// not sent (no results, no error).
	Send(ctx context.Context, ev Event) ([]Result, error)
}

// Result is what one receiver answered.
type Result struct {
	Receiver string `json:"receiver"`
	OK       bool   `json:"ok"`
	Attempts int    `json:"attempts"`
	// Answer is the last reply: "HTTP 200 ok", "exit 0", with a tail of
	// the body or output.
	Answer     string `json:"answer,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// receiver delivers one attempt.
type receiver interface {
	name() string
	// deliver makes one attempt; a *permanentError is not retried.
	deliver(ctx context.Context, ev Event, body []byte) (answer string, err error)
}

// Sender is the Notifier over the receivers in config.
type Sender struct {
	receivers []receiver
	events    []Kind // nil: all
	timeout   time.Duration
	attempts  int
	backoff   time.Duration
	host      string
}

// Option adjusts a Sender.
type Option func(*Sender)

// WithBackoff sets the wait before the second attempt (doubling after, at
// most 30 s); the default is one second.
func WithBackoff(d time.Duration) Option { return func(s *Sender) { s.backoff = d } }

var _ Notifier = (*Sender)(nil)

// New builds a Sender from config (already validated by config.Load; New
// checks again so a hand-made config fails clearly too).
func New(cfg config.Notify, opts ...Option) (*Sender, error) {
	s := &Sender{timeout: cfg.Timeout, attempts: cfg.Attempts, backoff: config.NotifyFirstBackoff}
	if s.timeout <= 0 {
		return nil, fmt.Errorf("notify: timeout %s: must be positive", cfg.Timeout)
	}
	if s.attempts < 1 {
		return nil, fmt.Errorf("notify: attempts %d: must be at least 1", cfg.Attempts)
	}
	for _, e := range cfg.Events {
		if e == "all" {
			s.events = nil
			break
		}
		k := Kind(e)
		if !k.Valid() {
			return nil, fmt.Errorf("notify: events: %q is not an event kind (%s)", e, strings.Join(config.NotifyKinds, ", "))
		}
		s.events = append(s.events, k)
	}
	if cfg.Webhook != "" {
		w, err := newWebhook(cfg.Webhook, cfg.WebhookHeaders)
		if err != nil {
			return nil, err
		}
		s.receivers = append(s.receivers, w)
	}
	if cfg.Command != "" {
		s.receivers = append(s.receivers, &command{line: cfg.Command})
	}
	s.host, _ = os.Hostname()
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// MaxDuration bounds one Send: every attempt's timeout plus the backoff
// between attempts (receivers run concurrently). An activity that sends
// should allow at least this long.
func (s *Sender) MaxDuration() time.Duration {
	return config.NotifyMaxDuration(s.timeout, s.attempts)
}

// Receivers names the configured receivers (secrets redacted).
func (s *Sender) Receivers() []string {
	out := make([]string, len(s.receivers))
	for i, r := range s.receivers {
		out[i] = r.name()
	}
	return out
}

// Enabled reports whether events of kind k are sent. Test always is: it is
// asked for by a person checking the receivers.
func (s *Sender) Enabled(k Kind) bool {
	return k == Test || s.events == nil || slices.Contains(s.events, k)
}

// Send implements Notifier. Receivers are tried concurrently, so a hanging
// one does not delay the others.
func (s *Sender) Send(ctx context.Context, ev Event) ([]Result, error) {
	if !ev.Kind.Valid() {
		return nil, fmt.Errorf("notify: event kind %q is not one of %s", ev.Kind, strings.Join(config.NotifyKinds, ", "))
	}
	if !s.Enabled(ev.Kind) || len(s.receivers) == 0 {
		return nil, nil
	}
	if ev.ID == "" {
		ev.ID = EventID(ev.RunID, ev.Kind, ev.Subject, ev.Seq)
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	if ev.Host == "" {
		ev.Host = s.host
	}
	if ev.Title == "" {
		ev.Title = NewEvent(ev.Kind, ev.RunID, ev.Subject, ev.Seq, "").Title
	}
	body, err := Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("notify: encode event %s: %w", ev.ID, err)
	}
	results := make([]Result, len(s.receivers))
	errs := make([]error, len(s.receivers))
	var wg sync.WaitGroup
	for i, r := range s.receivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.deliver(ctx, r, ev, body)
		}()
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// deliver tries one receiver up to s.attempts times.
func (s *Sender) deliver(ctx context.Context, r receiver, ev Event, body []byte) (Result, error) {
	start := time.Now()
	res := Result{Receiver: r.name()}
	wait := s.backoff
	var err error
	for res.Attempts < s.attempts {
		if res.Attempts > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				err = fmt.Errorf("%w (gave up waiting to retry: %w)", err, ctx.Err())
				return s.failed(res, start, r, ev, err)
			case <-t.C:
			}
			wait = min(wait*2, 30*time.Second)
		}
		res.Attempts++
		actx, cancel := context.WithTimeout(ctx, s.timeout)
		var answer string
		answer, err = r.deliver(actx, ev, body)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		res.Answer = answer
		if err == nil {
			res.OK = true
			res.DurationMS = time.Since(start).Milliseconds()
			return res, nil
		}
		if timedOut {
			err = fmt.Errorf("no answer within %s (notify.timeout): %w", s.timeout, err)
		}
		var perm *permanentError
		if errors.As(err, &perm) || ctx.Err() != nil {
			break
		}
	}
	return s.failed(res, start, r, ev, err)
}

func (s *Sender) failed(res Result, start time.Time, r receiver, ev Event, err error) (Result, error) {
	res.Error = err.Error()
	res.DurationMS = time.Since(start).Milliseconds()
	return res, &DeliveryError{Receiver: r.name(), EventID: ev.ID, Kind: ev.Kind, Attempts: res.Attempts, Err: err}
}
