package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/taskgate/taskgate/adapters/driver"
)

// maxChain bounds how many continue-as-new links chain follows one by one (only needed when the
// workflow id was reused after the chain ended, so that the latest run belongs to another chain).
const maxChain = 1000

// chain is the execution a Ref names: its workflow id and the Ref's run id (empty for the
// latest chain), its first run and the run its continue-as-new chain has reached (the same run
// when it never continued as new).
type chain struct {
	id, run       string
	first, latest *workflowservice.DescribeWorkflowExecutionResponse
}

func (c chain) status() enumspb.WorkflowExecutionStatus {
	return c.latest.GetWorkflowExecutionInfo().GetStatus()
}

func (c chain) continued() bool {
	return c.first.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
}

// waitingFor is the message of a run that no worker has picked up from queue yet: one string a
// queue, which the reading of every task waiting there keeps (the queues are the mapping's).
func (e *conn) waitingFor(queue string) string {
	if m, ok := e.waiting.Load(queue); ok {
		return m.(string)
	}
	m, _ := e.waiting.LoadOrStore(queue, fmt.Sprintf("waiting for a worker on task queue %q", queue))
	return m.(string)
}

// Describe reads the execution's state: one DescribeWorkflowExecution, two when it continued as
// new (the first run, then the latest one). A running workflow's open questions and progress
// come from the same answer: its memo (package taskgateflow) and its pending activities.
func (e *conn) Describe(ctx context.Context, t driver.Target, r driver.Ref) (driver.Status, error) {
	c, err := e.chain(ctx, "describe "+r.String(), r)
	if err != nil {
		return driver.Status{}, err
	}
	st := c.closedStatus()
	switch c.status() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		if !c.continued() && submitted(c.latest) {
			st.State = driver.Submitted
			st.Message = e.waitingFor(c.latest.GetWorkflowExecutionInfo().GetTaskQueue())
		} else {
			e.running(&st, c.latest)
		}
		if c.latest.GetWorkflowExtendedInfo().GetCancelRequested() {
			st.Message = "cancellation requested"
		}
	case enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
		st.Message = "paused"
	}
	if st.State == 0 {
		return driver.Status{}, fmt.Errorf("temporal: describe %v: unknown workflow status %s", r, c.status())
	}
	return st, nil
}

// closedStatus is the chain's status without what only a running chain tells (questions,
// progress, why it has not started): all of it, once closed.
func (c chain) closedStatus() driver.Status {
	info, latest := c.first.GetWorkflowExecutionInfo(), c.latest.GetWorkflowExecutionInfo()
	st := driver.Status{State: stateOf(c.status()), Native: native(c.status()), Started: asTime(info.GetStartTime()), Updated: asTime(latest.GetStartTime())}
	if closed := latest.GetCloseTime(); closed != nil {
		st.Updated = asTime(closed)
	}
	return st
}

// stateOf is a run's status as a State; 0 for CONTINUED_AS_NEW (the chain goes on) and statuses
// this adapter does not know.
func stateOf(s enumspb.WorkflowExecutionStatus) driver.State {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
		return driver.Working
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return driver.Succeeded
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return driver.Failed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return driver.Cancelled
	}
	return 0
}

// submitted reports whether no worker has picked up the run's first workflow task yet. Until then
// the history holds the start event and the first workflow task's scheduled event, and nothing
// else unless a signal or cancel request came in first; a worker starting the task adds a third
// event (or makes the pending task STARTED), completing it adds an auto-reset point, and a failed
// or timed-out attempt shows as attempt 2 and more.
func submitted(d *workflowservice.DescribeWorkflowExecutionResponse) bool {
	info, task := d.GetWorkflowExecutionInfo(), d.GetPendingWorkflowTask()
	scheduled := task.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED && task.GetAttempt() <= 1
	if info.GetHistoryLength() <= 2 {
		return task == nil || scheduled
	}
	return scheduled && len(info.GetAutoResetPoints().GetPoints()) == 0
}

// native is the status's enum name without its prefix: "RUNNING", "CONTINUED_AS_NEW" (String()
// gives "Running").
func native(s enumspb.WorkflowExecutionStatus) string {
	return strings.TrimPrefix(enumspb.WorkflowExecutionStatus_name[int32(s)], "WORKFLOW_EXECUTION_STATUS_")
}

// asTime reads a time of the engine to the microsecond, as SQL visibility keeps it, so that what a
// listing and a read tell of one run agree.
func asTime(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime().Truncate(time.Microsecond)
}

// chain describes the run r names and, when it continued as new, the latest run of its chain.
// A Ref with no run id names the latest chain of the workflow id.
func (e *conn) chain(ctx context.Context, what string, r driver.Ref) (chain, error) {
	id, run, ok := WorkflowOf(r)
	if !ok {
		return chain{}, fmt.Errorf("temporal: %s: %w: %q is not a workflow id and run id", what, driver.ErrNotFound, r)
	}
	first, err := e.describe(ctx, what, id, run)
	if err != nil {
		return chain{}, err
	}
	c := chain{id: id, run: run, first: first, latest: first}
	if !c.continued() {
		return c, nil
	}
	// Usually the workflow id's latest run is the end of this chain: one call.
	latest, err := e.describe(ctx, what, id, "")
	if err != nil {
		return chain{}, err
	}
	if latest.GetWorkflowExecutionInfo().GetFirstRunId() == first.GetWorkflowExecutionInfo().GetExecution().GetRunId() {
		c.latest = latest
		return c, nil
	}
	for range maxChain {
		next, err := e.nextRun(ctx, what, id, c.latest)
		if err != nil {
			return chain{}, err
		}
		if c.latest, err = e.describe(ctx, what, id, next); err != nil {
			return chain{}, err
		}
		if c.status() != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			return c, nil
		}
	}
	return chain{}, fmt.Errorf("temporal: %s: the continue-as-new chain is longer than %d runs", what, maxChain)
}

// nextRun reads the run id a continued-as-new run continued into.
func (e *conn) nextRun(ctx context.Context, what, id string, d *workflowservice.DescribeWorkflowExecutionResponse) (string, error) {
	ev, err := e.closeEvent(ctx, what, id, d.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	if err != nil {
		return "", err
	}
	next := ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
	if next == "" {
		return "", fmt.Errorf("temporal: %s: run %s continued as new, but its close event names no new run", what, d.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	}
	return next, nil
}

func (e *conn) describe(ctx context.Context, what, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	resp, err := e.svc.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: e.namespace,
		Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
	})
	if err != nil {
		return nil, e.fail(ctx, what, err)
	}
	if !e.namespaceSeen.Load() {
		e.namespaceSeen.Store(true)
	}
	return resp, nil
}

// fail turns an SDK or service error into one that wraps the adapters error callers test for.
func (e *conn) fail(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The frontend did not answer within the time the call had: a retry may find it answering.
		return fmt.Errorf("temporal: %s: %w at %s: no answer in time: %w", what, driver.ErrUnavailable, e.address, ctx.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("temporal: %s: %w", what, ctx.Err())
	}
	var nsMissing *serviceerror.NamespaceNotFound
	var notFound *serviceerror.NotFound
	var throttled *serviceerror.ResourceExhausted
	switch {
	case errors.As(err, &throttled):
		return fmt.Errorf("temporal: %s: %w at %s (%s), retry later: %w", what, driver.ErrThrottled, e.address, throttled.Cause, err)
	case serviceerror.ToStatus(err).Code() == codes.ResourceExhausted:
		// Not the server throttling (that is a serviceerror.ResourceExhausted with its cause): gRPC's
		// own message size limit, which no retry can pass.
		return driver.Refuse("the request is larger than the engine's connection takes (4 MiB by default)",
			fmt.Errorf("temporal: %s: %w: the request or its answer is larger than gRPC allows: %w", what, driver.ErrInvalid, err))
	case errors.As(err, &nsMissing) && e.namespaceSeen.Load():
		return fmt.Errorf("temporal: %s: %w at %s: namespace %q not found, though it was served before (the frontend's namespace cache may be refreshing), retry later: %w",
			what, driver.ErrUnavailable, e.address, e.namespace, err)
	case errors.As(err, &nsMissing):
		return fmt.Errorf("temporal: %s: namespace %q does not exist on %s: create it (temporal operator namespace create) or fix the namespace setting: %w", what, e.namespace, e.address, err)
	case errors.As(err, &notFound):
		return fmt.Errorf("temporal: %s: %w in namespace %q: %w", what, driver.ErrNotFound, e.namespace, err)
	}
	switch serviceerror.ToStatus(err).Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
		return fmt.Errorf("temporal: %s: %w at %s, retry later: %w", what, driver.ErrUnavailable, e.address, err)
	case codes.InvalidArgument:
		return driver.Refuse(invalidReason(err), fmt.Errorf("temporal: %s: %w: %w", what, driver.ErrInvalid, err))
	}
	return fmt.Errorf("temporal: %s: %w", what, err)
}

// invalidReason says, for the caller, why the server refused a request as invalid: of its reasons,
// only a payload over the server's size limit (limit.blobSize.error, 2 MiB by default) is the
// caller's to mend.
func invalidReason(err error) string {
	if strings.Contains(serviceerror.ToStatus(err).Message(), "size exceeds limit") {
		return "the request is too large: the engine takes at most 2 MiB in one payload by default"
	}
	return "the engine refused the request as invalid"
}
