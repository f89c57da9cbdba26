package activities

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
)

// Named is a goal's title as a notification's text puts it after a run's
// ID: ` ("Provide stuck")`, or "" for none.
func Named(title string) string {
	if t := horizon.GoalTitle(title); t != "" {
		return fmt.Sprintf(" (%q)", t)
	}
	return ""
}

// NotifyInput is one event for the configured receivers. The event's ID is
// derived from RunID, Kind, Subject and Seq (notify.EventID): a retried
// activity, or a replayed workflow, sends the same ID again, and receivers
// drop the duplicate (delivery is at least once).
type NotifyInput struct {
	Kind    notify.Kind
	RunID   string
	Subject string
	Seq     int
	Text    string
	Details map[string]string
	// Title names what the event is about for a person: the run's goal or
	// roadmap item (horizon.GoalTitle), not only its ID. It heads the
	// event's title.
	Title string `json:",omitempty"`
}

// eventTitle is an event's headline: its kind, what it is about by name,
// and the run's ID ("horizon: feature blocked · Provide stuck
// (run-20260301-…)").
func eventTitle(in NotifyInput) string {
	title := "horizon: " + strings.ReplaceAll(string(in.Kind), "_", " ")
	if t := horizon.GoalTitle(in.Title); t != "" {
		title += " · " + t
	}
	if in.RunID != "" {
		title += " (" + in.RunID + ")"
	}
	return title
}

// Notify sends one event to the configured receivers (notify.webhook,
// notify.command). A receiver that fails, answers 500 or hangs never
// affects a run: the failure is logged and the activity succeeds. With no
// receiver configured it does nothing.
func (a *Activities) Notify(ctx context.Context, in NotifyInput) error {
	if a.Notifier == nil {
		return nil
	}
	a.send(ctx, in)
	return nil
}

// send builds and delivers the event, logging what the receivers answered.
func (a *Activities) send(ctx context.Context, in NotifyInput) {
	ev := notify.NewEvent(in.Kind, in.RunID, in.Subject, in.Seq, in.Text)
	ev.Title, ev.Details = eventTitle(in), in.Details
	if t := horizon.GoalTitle(in.Title); t != "" {
		ev.Details = maps.Clone(in.Details)
		if ev.Details == nil {
			ev.Details = map[string]string{}
		}
		ev.Details["title"] = t
	}
	log := a.Logger.With().Str("RunID", in.RunID).Str("Kind", string(in.Kind)).Str("EventID", ev.ID).Logger()
	results, err := a.Notifier.Send(ctx, ev)
	if err != nil {
		log.Warn().Err(err).Msg("notification not delivered; the run goes on")
		return
	}
	for _, r := range results {
		log.Debug().Str("Receiver", r.Receiver).Int("Attempts", r.Attempts).Str("Answer", r.Answer).Msg("notification delivered")
	}
}

// outageSent remembers the outage events this process sent, so one
// attempt series sends one outage event, not one per retry (the ID is the
// same anyway: receivers would drop the rest).
var outageSent sync.Map

// notifyOutage tells a person that a session activity has been retrying
// for longer than OutageAfter: the engine, OpenCode or every provider is
// unreachable. It runs at the top of a session attempt; the first attempt
// never sends. The event is about the run, feature, role and attempt (one
// per attempt series) and is sent in the background, so a slow receiver
// does not delay the session it is about.
func (a *Activities) notifyOutage(ctx context.Context, in SessionInput) {
	if !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	ev, ok := a.outageEvent(in, info.Attempt, time.Since(info.ScheduledTime))
	if !ok {
		return
	}
	wait := a.NotifyTimeout
	if wait <= 0 {
		wait = time.Minute
	}
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		a.send(sctx, ev)
	}()
}

// outageEvent is the outage event of a session on its retry number try,
// since its first scheduling: none on the first try, before OutageAfter,
// or when this process already sent it for the attempt series.
func (a *Activities) outageEvent(in SessionInput, try int32, since time.Duration) (NotifyInput, bool) {
	if a.Notifier == nil || a.OutageAfter <= 0 || try <= 1 || since < a.OutageAfter {
		return NotifyInput{}, false
	}
	subject := in.Feature + "/" + string(in.Role)
	id := notify.EventID(in.RunID, notify.Outage, subject, in.Attempt)
	if _, dup := outageSent.LoadOrStore(id, true); dup {
		return NotifyInput{}, false
	}
	return NotifyInput{
		Kind: notify.Outage, RunID: in.RunID, Subject: subject, Seq: in.Attempt, Title: in.Title,
		Text: fmt.Sprintf("run %s%s: the %s session of %s (attempt %d) has been retrying for %s (try %d): the engine, OpenCode or the model provider is unreachable; it keeps retrying",
			in.RunID, Named(in.Title), in.Role, in.Feature, in.Attempt, since.Round(time.Second), try),
		Details: map[string]string{"feature": in.Feature, "role": string(in.Role), "retry": fmt.Sprint(try)},
	}, true
}
