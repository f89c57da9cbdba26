package core

import (
	"context"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// Outages. A run waits out infrastructure failures (the activities retry
// without a cap): the engine, not the workflow, knows that it waits. The
// pending activity carries its attempt, last failure and next try; the
// session activity's heartbeat carries OpenCode's own retries (while
// OpenCode retries a model call, the activity has not failed yet) and
// since when its attempts fail. A planned run's activities run in its
// running feature's child workflow, so the children are read too.

// Outage returns what a running run (or its running feature) described
// as desc waits out, or nil.
func Outage(ctx context.Context, c client.Client, desc *workflowservice.DescribeWorkflowExecutionResponse) *horizon.Outage {
	return outage(ctx, c, desc.GetPendingActivities(), desc.GetPendingChildren(), time.Now())
}

func outage(ctx context.Context, c client.Client, pending []*workflowpb.PendingActivityInfo, children []*workflowpb.PendingChildExecutionInfo, now time.Time) *horizon.Outage {
	var found *horizon.Outage
	take := func(o *horizon.Outage) {
		if o != nil && (found == nil || o.Since.Before(found.Since)) {
			found = o
		}
	}
	for _, pa := range pending {
		take(outageOf(pa, now))
	}
	for _, ch := range children {
		id := ch.GetWorkflowId()
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			continue
		}
		for _, pa := range desc.GetPendingActivities() {
			if o := outageOf(pa, now); o != nil {
				o.Feature = featureOfChild(id)
				take(o)
			}
		}
	}
	return found
}

// SupervisorOutage returns what a running supervisor (described as desc)
// waits out in its decomposition in flight, its pending PlanWorkflow
// child, or nil; Feature names the decomposition ("decomposition of r1").
// The supervised runs, its other children, show their outages
// themselves.
func SupervisorOutage(ctx context.Context, c client.Client, desc *workflowservice.DescribeWorkflowExecutionResponse) *horizon.Outage {
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	var plans []*workflowpb.PendingChildExecutionInfo
	for _, ch := range desc.GetPendingChildren() {
		if ch.GetWorkflowTypeName() == workflows.PlanWorkflowName {
			plans = append(plans, ch)
		}
	}
	if len(plans) == 0 {
		return nil
	}
	o := outage(ctx, c, nil, plans, time.Now())
	if o != nil {
		o.Feature = "decomposition"
		for _, ch := range plans {
			if _, item, ok := strings.Cut(ch.GetWorkflowId(), ".plan."); ok {
				o.Feature = "decomposition of " + item
			}
		}
	}
	return o
}

// featureOfChild is the feature of a feature workflow ID "<run>.<feature>.<n>".
func featureOfChild(id string) string {
	parts := strings.Split(id, ".")
	if len(parts) < 3 {
		return ""
	}
	return parts[len(parts)-2]
}

// outageOf reads one pending activity: waiting when OpenCode retries a
// model call inside it, when it waits for its next try after failed ones,
// or when a retried session has not got going yet.
func outageOf(pa *workflowpb.PendingActivityInfo, now time.Time) *horizon.Outage {
	name := pa.GetActivityType().GetName()
	var hb activities.SessionHeartbeat
	if name == "AgentSession" && pa.GetHeartbeatDetails() != nil {
		_ = converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &hb)
	}
	attempt := int(pa.GetAttempt())
	lastErr := rootMessage(pa.GetLastFailure())
	if horizon.TimedOut(lastErr) {
		// A session cut off by its timeout while OpenCode retried: the
		// provider's error says more than the timeout does.
		switch {
		case hb.Retry != nil && hb.Retry.Message != "":
			lastErr = hb.Retry.Message + " (" + lastErr + ")"
		case hb.Outage != nil && hb.Outage.Error != "":
			lastErr = hb.Outage.Error + " (" + lastErr + ")"
		}
	}
	o := &horizon.Outage{Activity: name}
	// since is the earliest start the engine or the heartbeat knows of.
	since := func(ts ...time.Time) time.Time {
		if hb.Outage != nil {
			ts = append(ts, hb.Outage.Since)
		}
		if hb.Retry != nil {
			ts = append(ts, hb.Retry.Since)
		}
		var first time.Time
		for _, t := range ts {
			if t.Unix() > 0 && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		return first
	}
	// tries counts failed session attempts and, within them, OpenCode's
	// retries of the model call, as the heartbeat has kept them.
	tries := 0
	if hb.Outage != nil {
		tries = hb.Outage.Tries
	}
	if hb.Retry != nil {
		tries += max(hb.Retry.Attempt, 1)
	}
	started := pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED
	switch {
	case started && hb.Retry != nil && hb.Phase == "retry":
		o.LastError = hb.Retry.Message
		o.Since = since()
		o.Tries = max(tries, attempt)
		o.Next = hb.Retry.Next
	case !started && attempt > 1 && lastErr != "":
		o.LastError = lastErr
		o.Since = since(pa.GetLastAttemptCompleteTime().AsTime())
		o.Tries = max(tries, attempt-1)
		if t := pa.GetNextAttemptScheduleTime(); t != nil {
			o.Next = t.AsTime()
		}
	case started && attempt > 1 && lastErr != "" && name == "AgentSession" && !going(hb.Phase):
		// A new try runs, but the session is not going again yet.
		o.LastError = lastErr
		o.Since = since(pa.GetLastAttemptCompleteTime().AsTime())
		o.Tries = max(tries, attempt-1)
	default:
		return nil
	}
	if o.Since.IsZero() || o.Since.After(now) {
		o.Since = now
	}
	o.On = horizon.OutageKind(name, o.LastError)
	o.Since, o.Next = o.Since.Local(), localOrZero(o.Next)
	return o
}

// going reports a session phase in which the model answers.
func going(phase string) bool {
	return phase == "running" || phase == "tool" || phase == "done"
}

func localOrZero(t time.Time) time.Time {
	if t.IsZero() || t.Unix() <= 0 {
		return time.Time{}
	}
	return t.Local()
}

// rootMessage is the innermost message of a failure chain.
func rootMessage(f *failurepb.Failure) string {
	msg := ""
	for ; f != nil; f = f.GetCause() {
		if m := strings.TrimSpace(f.GetMessage()); m != "" {
			msg = m
		}
	}
	return msg
}
