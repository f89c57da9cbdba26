package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/notify"
)

// changeNotify sends notifications (activities.Notify) at the moments a
// person may want to know about: a checkpoint waits, a feature is blocked,
// a spend ceiling pauses the run, the run ends, the daily report is
// written. Histories recorded before it replay without those activities.
const changeNotify = "notify"

// NotifyTimeout is how long one notification may take: the daemon refuses
// a notify configuration whose delivery (every attempt and backoff) could
// take longer, so the engine never cuts a delivery short.
const NotifyTimeout = 5 * time.Minute

func notifyOptions(kind notify.Kind) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: NotifyTimeout,
		Summary:             "notify · " + string(kind),
		// The activity never fails on a receiver's answer; a retry is for
		// a worker that died mid-send, and resends the same event ID.
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 3,
		},
	}
}

// notifying says whether this history sends notifications.
func notifying(ctx workflow.Context) bool {
	return version(ctx, changeNotify, 1) >= 1
}

// sendNotify sends one event and waits for it; it never changes how the
// run goes (the activity logs a receiver's failure and succeeds, and an
// engine error here is logged too).
func sendNotify(ctx workflow.Context, in activities.NotifyInput) {
	if !notifying(ctx) {
		return
	}
	in.Title = horizon.GoalTitle(in.Title)
	if err := execute(ctx, notifyOptions(in.Kind), a.Notify, in, nil); err != nil {
		workflow.GetLogger(ctx).Warn("notification not sent", "Kind", string(in.Kind), "Error", err)
	}
}

// notifyApproval tells a person that the run waits for `horizon approve`.
func (s *runStatus) notifyApproval(ctx workflow.Context, w *horizon.Checkpoint) {
	st := &s.state
	sendNotify(ctx, activities.NotifyInput{
		Kind: notify.ApprovalWaiting, RunID: st.RunID, Subject: string(w.Kind) + ":" + w.Subject, Title: st.Goal,
		Text:    fmt.Sprintf("run %s%s waits for approval (%s %s): %s — `horizon approve %s`", st.RunID, activities.Named(st.Goal), w.Kind, w.Subject, w.Summary, st.RunID),
		Details: map[string]string{"checkpoint": string(w.Kind), "subject": w.Subject},
	})
}

// notifyBlocked tells a person that a feature stopped on a typed blocker;
// seq (the feature's attempt count) tells a second blocker of the same
// feature from a resent first one.
func (s *runStatus) notifyBlocked(ctx workflow.Context, feature string, seq int, b horizon.Blocker) {
	st := &s.state
	what := "feature " + feature
	if f, ok := featureOf(st.Plan, feature); ok && f.Title != "" {
		what += fmt.Sprintf(" (%q)", horizon.GoalTitle(f.Title))
	}
	sendNotify(ctx, activities.NotifyInput{
		Kind: notify.FeatureBlocked, RunID: st.RunID, Subject: feature, Seq: seq, Title: st.Goal,
		Text:    fmt.Sprintf("run %s%s: %s is blocked (%s): %s — `horizon unblock %s`", st.RunID, activities.Named(st.Goal), what, b.Type, b.Evidence, st.RunID),
		Details: map[string]string{"feature": feature, "blocker": string(b.Type)},
	})
}

// notifySpend tells a person that a spend ceiling paused the run; the
// ceilings it paused at make the subject, so a raised and reached again
// ceiling is a new event, while asking again (the route's hourly look at
// the day's spend) sends nothing more.
func (s *runStatus) notifySpend(ctx workflow.Context, feature, reason string, ceiling, day float64) {
	st := &s.state
	subject := fmt.Sprintf("run=%.4f,day=%.4f", ceiling, day)
	if s.spendTold == subject+"/"+fmt.Sprint(len(st.Attempts)) {
		return
	}
	s.spendTold = subject + "/" + fmt.Sprint(len(st.Attempts))
	sendNotify(ctx, activities.NotifyInput{
		Kind: notify.SpendPaused, RunID: st.RunID, Subject: subject, Seq: len(st.Attempts), Title: st.Goal,
		Text: fmt.Sprintf("run %s%s paused on spend: %s", st.RunID, activities.Named(st.Goal), reason),
		Details: map[string]string{"feature": feature, "spent": fmt.Sprintf("%.4f", st.Usage.Cost),
			"ceiling": fmt.Sprintf("%.4f", ceiling), "day_ceiling": fmt.Sprintf("%.4f", day)},
	})
}

// notifyEnded tells a person how the run ended and where its handoff is.
func (s *runStatus) notifyEnded(ctx workflow.Context) {
	st := &s.state
	how := string(st.Status)
	if st.ReasonKind != "" {
		how += " (" + string(st.ReasonKind) + ")"
	}
	text := fmt.Sprintf("run %s%s ended: %s", st.RunID, activities.Named(st.Goal), how)
	if st.Reason != "" {
		text += ": " + st.Reason
	}
	if st.Handoff != "" {
		text += "\nhandoff: " + st.Handoff
	}
	sendNotify(ctx, activities.NotifyInput{
		Kind: notify.RunEnded, RunID: st.RunID, Subject: string(st.Status), Text: text, Title: st.Goal,
		Details: map[string]string{"status": string(st.Status), "reason_kind": string(st.ReasonKind), "handoff": st.Handoff},
	})
}

// featureOf finds a feature of a plan that may be nil (a one-feature run).
func featureOf(p *horizon.Plan, id string) (*horizon.Feature, bool) {
	if p == nil {
		return nil, false
	}
	return p.Feature(id)
}
