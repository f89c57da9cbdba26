package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/workflows"
)

// HandBackOrphanedActivities fails, for an immediate retry, every started
// activity of every running workflow, whatever its type (a run, a planned
// run's feature, a plan, a task, a loop, the nightly decomposition, the
// daily pass...), that a dead horizon process of this machine holds
// (orphanedBy). Live workers keep theirs: this process, a `horizon
// worker` whose process still runs, and any worker of another machine,
// whose own heartbeat timeout stays the judge.
//
// The failure carries the activity's last heartbeat details, so the retry
// knows the OpenCode session to continue. Without this the engine would
// wait out each activity's heartbeat timeout (agent.heartbeat_timeout for
// a session) before retrying.
func HandBackOrphanedActivities(ctx context.Context, c client.Client, namespace, identity string, log zerolog.Logger) (int, error) {
	handed := 0
	var token []byte
	for {
		// Every running execution, not a list of types: a type left off
		// such a list is a type whose sessions wait out the timeout.
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace:     namespace,
			Query:         "ExecutionStatus = 'Running'",
			NextPageToken: token,
		})
		if err != nil {
			return handed, fmt.Errorf("list running workflows: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			wid, rid := ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId()
			desc, err := c.DescribeWorkflowExecution(ctx, wid, rid)
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				continue // ended (or gone) since the list
			}
			if err != nil {
				return handed, fmt.Errorf("describe workflow %s: %w", wid, err)
			}
			for _, pa := range desc.GetPendingActivities() {
				if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || !orphanedBy(pa.GetLastWorkerIdentity(), identity, processAlive) {
					continue
				}
				_, err := c.WorkflowService().RespondActivityTaskFailedById(ctx, &workflowservice.RespondActivityTaskFailedByIdRequest{
					Namespace:  namespace,
					WorkflowId: wid,
					RunId:      rid,
					ActivityId: pa.GetActivityId(),
					Identity:   identity,
					Failure: &failurepb.Failure{
						Message: "the horizon process running this activity (" + pa.GetLastWorkerIdentity() + ") stopped; retrying",
						FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
							Type: "WorkerLost",
						}},
					},
					LastHeartbeatDetails: pa.GetHeartbeatDetails(),
				})
				if err != nil {
					log.Warn().Err(err).Str("WorkflowID", wid).Str("WorkflowType", ex.GetType().GetName()).Str("Activity", pa.GetActivityType().GetName()).Msg("hand back activity")
					continue
				}
				log.Info().Str("WorkflowID", wid).Str("WorkflowType", ex.GetType().GetName()).Str("Activity", pa.GetActivityType().GetName()).
					Str("From", pa.GetLastWorkerIdentity()).Msg("handed back orphaned activity")
				handed++
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return handed, nil
		}
	}
}

// orphanedBy says whether holder, the identity of the worker that started
// an activity, names a horizon process that is gone: "horizon@HOST:PID"
// (the paid-queue worker adds "/paid") with HOST this machine's (self's),
// PID not self's, and no such process alive. Anything else is left alone:
// a live process still reports its activities, another machine's process
// cannot be checked from here, and an identity of another form is not
// horizon's.
func orphanedBy(holder, self string, alive func(pid int) bool) bool {
	hHost, hPID, ok := parseIdentity(holder)
	if !ok {
		return false
	}
	sHost, sPID, ok := parseIdentity(self)
	if !ok || hHost != sHost || hPID == sPID {
		return false
	}
	return !alive(hPID)
}

// parseIdentity splits a worker identity "horizon@HOST:PID[/queue]".
func parseIdentity(id string) (host string, pid int, ok bool) {
	id, _, _ = strings.Cut(id, "/")
	rest, ok := strings.CutPrefix(id, "horizon@")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[i+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:i], pid, true
}

// processAlive says whether pid is a process of this machine that has not
// exited: it exists (signal 0; EPERM is another user's live process) and
// is not a zombie waiting for its parent.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// Without /proc (not Linux) signal 0 is all there is; with it,
		// the process exited between the two looks.
		_, serr := os.Stat("/proc/self/stat")
		return serr != nil
	}
	// The state follows the command name, which is in parentheses and
	// may itself contain ") ".
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || !bytes.HasPrefix(b[i+1:], []byte(" Z"))
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
