package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/horizon/horizon/activities"
)

func TestOutageOf(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 12, 0, 0, time.UTC)
	now := t0.Add(30 * time.Minute)
	details := func(hb activities.SessionHeartbeat) *commonpb.Payloads {
		p, err := converter.GetDefaultDataConverter().ToPayloads(hb)
		require.NoError(t, err)
		return p
	}
	failure := &failurepb.Failure{Message: "activity error", Cause: &failurepb.Failure{Message: "opencode server exited (pid 7)"}}
	tests := []struct {
		name  string
		pa    *workflowpb.PendingActivityInfo
		want  bool
		on    string
		since time.Time
		tries int
		next  time.Time
	}{
		{
			name: "OpenCode retries inside the first try",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 1,
				State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
				HeartbeatDetails: details(activities.SessionHeartbeat{SessionID: "ses_1", Phase: "retry",
					Retry: &activities.SessionRetry{Attempt: 3, Message: "Cannot connect to API", Next: t0.Add(time.Minute), Since: t0}})},
			want: true, on: "model provider unreachable", since: t0, tries: 3, next: t0.Add(time.Minute),
		},
		{
			name: "between failed tries",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 4,
				State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, LastFailure: failure,
				LastAttemptCompleteTime: timestamppb.New(t0.Add(20 * time.Minute)), NextAttemptScheduleTime: timestamppb.New(t0.Add(28 * time.Minute)),
				HeartbeatDetails: details(activities.SessionHeartbeat{SessionID: "ses_1", Outage: &activities.SessionOutage{Since: t0, Error: "x"}})},
			want: true, on: "OpenCode exited", since: t0, tries: 3, next: t0.Add(28 * time.Minute),
		},
		{
			name: "a session timed out while OpenCode retried",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 2,
				State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, LastFailure: &failurepb.Failure{Message: "activity StartToClose timeout"},
				NextAttemptScheduleTime: timestamppb.New(t0.Add(21 * time.Second)),
				HeartbeatDetails: details(activities.SessionHeartbeat{SessionID: "ses_1", Phase: "retry",
					Retry: &activities.SessionRetry{Attempt: 4, Message: "Cannot connect to API: Unable to connect", Since: t0}})},
			want: true, on: "model provider unreachable", since: t0, tries: 4, next: t0.Add(21 * time.Second),
		},
		{
			name: "a git activity between tries",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "CommitFeature"}, Attempt: 2,
				State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, LastFailure: &failurepb.Failure{Message: "index.lock: File exists"},
				LastAttemptCompleteTime: timestamppb.New(t0)},
			want: true, on: "git index locked", since: t0, tries: 1,
		},
		{
			name: "a retried session that works again",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 2,
				State: enumspb.PENDING_ACTIVITY_STATE_STARTED, LastFailure: failure,
				HeartbeatDetails: details(activities.SessionHeartbeat{SessionID: "ses_1", Phase: "tool", Tool: "edit"})},
		},
		{
			name: "a session at work",
			pa: &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: "AgentSession"}, Attempt: 1,
				State:            enumspb.PENDING_ACTIVITY_STATE_STARTED,
				HeartbeatDetails: details(activities.SessionHeartbeat{SessionID: "ses_1", Phase: "running"})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outageOf(tt.pa, now)
			if !tt.want {
				require.Nil(t, o)
				return
			}
			require.NotNil(t, o)
			require.Equal(t, tt.on, o.On)
			require.True(t, tt.since.Equal(o.Since), "since %s, want %s", o.Since, tt.since)
			require.Equal(t, tt.tries, o.Tries)
			require.True(t, tt.next.Equal(o.Next), "next %s, want %s", o.Next, tt.next)
			require.NotEmpty(t, o.LastError)
			require.Contains(t, o.Line(), tt.on+" since ")
		})
	}
}
