package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/internal/core"
	"github.com/horizon/horizon/workflows"
)

// HandBackOrphanedActivities fails, for an immediate retry, every started
// activity of a running run or loop that a worker other than identity
// holds. Call it only when this process is provably the sole worker (the
// embedded engine under the home lock): the previous holder is dead.
//
// The failure carries the activity's last heartbeat details, so the retry
// knows the OpenCode session to continue. Without this the engine would
// wait out each activity's heartbeat timeout before retrying.
func HandBackOrphanedActivities(ctx context.Context, c client.Client, namespace, identity string, log zerolog.Logger) (int, error) {
	handed := 0
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace,
			Query: "(WorkflowType = " + core.Quote(workflows.RunWorkflowName) + " OR WorkflowType = " + core.Quote(workflows.LoopWorkflowName) +
				") AND ExecutionStatus = 'Running'",
			NextPageToken: token,
		})
		if err != nil {
			return handed, fmt.Errorf("list running runs: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			wid, rid := ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId()
			desc, err := c.DescribeWorkflowExecution(ctx, wid, rid)
			if err != nil {
				return handed, fmt.Errorf("describe run %s: %w", wid, err)
			}
			for _, pa := range desc.GetPendingActivities() {
				// identity + "/paid" is this daemon's paid-queue worker.
				if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || strings.HasPrefix(pa.GetLastWorkerIdentity(), identity) {
					continue
				}
				_, err := c.WorkflowService().RespondActivityTaskFailedById(ctx, &workflowservice.RespondActivityTaskFailedByIdRequest{
					Namespace:  namespace,
					WorkflowId: wid,
					RunId:      rid,
					ActivityId: pa.GetActivityId(),
					Identity:   identity,
					Failure: &failurepb.Failure{
						Message: "the horizon daemon running this activity (" + pa.GetLastWorkerIdentity() + ") stopped; retrying",
						FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
							Type: "WorkerLost",
						}},
					},
					LastHeartbeatDetails: pa.GetHeartbeatDetails(),
				})
				if err != nil {
					log.Warn().Err(err).Str("RunID", wid).Str("Activity", pa.GetActivityType().GetName()).Msg("hand back activity")
					continue
				}
				log.Info().Str("RunID", wid).Str("Activity", pa.GetActivityType().GetName()).Str("From", pa.GetLastWorkerIdentity()).Msg("handed back orphaned activity")
				handed++
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return handed, nil
		}
	}
}

// RegisterSearchAttributes adds horizon's search attributes to the
// namespace. Registration is done at runtime because an existing database
// ignores attributes declared at creation; an attribute that already
// exists is fine.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	want := workflows.SearchAttributeTypes()
	for k := range have.GetCustomAttributes() {
		delete(want, k)
	}
	if len(want) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: want})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	// The frontend learns of new attributes when its namespace cache
	// refreshes (every 2 s by default); wait two refreshes so the first run
	// after this start can use them. This happens once per database.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Second):
	}
	return nil
}
