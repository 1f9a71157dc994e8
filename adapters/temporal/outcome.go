package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/taskgate/taskgate/adapters/driver"
)

// Outcome reads how the execution ended, from the close event of the last run of its chain: one
// call for a run that a listing of this engine lately showed closed (closes), which told the
// status and times; else the chain's status first.
func (e *conn) Outcome(ctx context.Context, t driver.Target, r driver.Ref) (driver.Outcome, error) {
	what := "read the outcome of " + r.String()
	if c, ok := e.closes.Get(r.ID); ok {
		id, run, _ := WorkflowOf(r)
		return e.ended(ctx, what, id, run, c.status, c.asStatus(), nil)
	}
	c, err := e.chain(ctx, what, r)
	if err != nil {
		return driver.Outcome{}, err
	}
	info := c.latest.GetWorkflowExecutionInfo()
	return e.ended(ctx, what, c.id, info.GetExecution().GetRunId(), info.GetStatus(), c.closedStatus(), c.latest)
}

// OutcomeCalls is what Outcome of r costs: the close event alone of a run a listing lately showed
// closed; else 0, the chain's status as well (TargetInfo.OutcomeCalls).
func (e *conn) OutcomeCalls(t driver.Target, r driver.Ref) int {
	if _, ok := e.closes.Get(r.ID); ok {
		return 1
	}
	return 0
}

// outcomeCalls is what an outcome costs when no listing told how the run ended: its status,
// then its close event.
const outcomeCalls = 2

// ended reads the outcome of the run id/runID that closed with status (st, its chain's Status):
// from its close event, or from the run's description d for a timeout (nil when a listing told
// the status: listings do not remember timeouts, whose cause is in the description).
func (e *conn) ended(ctx context.Context, what, id, runID string, status enumspb.WorkflowExecutionStatus, st driver.Status, d *workflowservice.DescribeWorkflowExecutionResponse) (driver.Outcome, error) {
	out := driver.Outcome{Native: native(status)}
	switch status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED:
		return driver.Outcome{}, fmt.Errorf("temporal: %s: %w (%s); wait for it or poll its status", what, driver.ErrNotEnded, out.Native)
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		ev, err := e.closeEvent(ctx, what, id, runID)
		if err != nil {
			return driver.Outcome{}, err
		}
		result, err := e.jsonResult(ev.GetWorkflowExecutionCompletedEventAttributes().GetResult())
		if err != nil {
			return driver.UnreadableOutput(out.Native, err), nil
		}
		out = driver.SucceededWith(out.Native, result)
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		ev, err := e.closeEvent(ctx, what, id, runID)
		if err != nil {
			return driver.Outcome{}, err
		}
		out.State = driver.Failed
		out.Error, out.Cause = failureOf(ev.GetWorkflowExecutionFailedEventAttributes().GetFailure())
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		out.State, out.Error, out.Cause = driver.Failed, "TimedOut", timeoutCause(d)
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		out.State = driver.Cancelled
		var err error
		if out.Cause, err = e.cancelReason(ctx, what, id, runID); err != nil {
			return driver.Outcome{}, err
		}
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		ev, err := e.closeEvent(ctx, what, id, runID)
		if err != nil {
			return driver.Outcome{}, err
		}
		out.State, out.Cause = driver.Cancelled, ev.GetWorkflowExecutionTerminatedEventAttributes().GetReason()
	default:
		return driver.Outcome{}, fmt.Errorf("temporal: %s: unknown workflow status %s", what, status)
	}
	out.Status = st
	return out, nil
}

func closed(s enumspb.WorkflowExecutionStatus) bool {
	return s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && s != enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED
}

// Cancel requests cancellation of the chain's current run, with reason as the request's reason.
// The workflow decides how to stop; Describe reads Cancelled once it has.
func (e *conn) Cancel(ctx context.Context, t driver.Target, r driver.Ref, reason string) error {
	what := "cancel " + r.String()
	// The server accepts a cancel request for a closed workflow as a no-op, so look first.
	c, err := e.chain(ctx, what, r)
	if err != nil {
		return err
	}
	if closed(c.status()) {
		return fmt.Errorf("temporal: %s: %w (%s)", what, driver.ErrEnded, native(c.status()))
	}
	_, err = e.svc.RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
		Namespace:           e.namespace,
		WorkflowExecution:   &commonpb.WorkflowExecution{WorkflowId: c.id},
		Identity:            identity,
		RequestId:           uuid.NewString(),
		FirstExecutionRunId: c.run,
		Reason:              reason,
	})
	if err != nil {
		return e.fail(ctx, what, err)
	}
	return nil
}

// closeEvent reads the close event of one run.
func (e *conn) closeEvent(ctx context.Context, what, id, runID string) (*historypb.HistoryEvent, error) {
	req := &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              e.namespace,
		Execution:              &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
		SkipArchival:           true,
	}
	for {
		resp, err := e.svc.GetWorkflowExecutionHistory(ctx, req)
		if err != nil {
			return nil, e.fail(ctx, what, err)
		}
		if events := resp.GetHistory().GetEvents(); len(events) > 0 {
			return events[len(events)-1], nil
		}
		// A long poll that timed out on the server returns no events and a token to poll on with.
		if len(resp.GetNextPageToken()) == 0 {
			return nil, fmt.Errorf("temporal: %s: run %s has no close event", what, runID)
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// cancelReason finds the reason of the cancel request that ended a run, reading its history
// backwards from the close event. Empty when the workflow cancelled without a request.
func (e *conn) cancelReason(ctx context.Context, what, id, runID string) (string, error) {
	req := &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
		Namespace:       e.namespace,
		Execution:       &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
		MaximumPageSize: 32,
	}
	for {
		resp, err := e.svc.GetWorkflowExecutionHistoryReverse(ctx, req)
		if err != nil {
			return "", e.fail(ctx, what, err)
		}
		for _, ev := range resp.GetHistory().GetEvents() {
			if attrs := ev.GetWorkflowExecutionCancelRequestedEventAttributes(); attrs != nil {
				return attrs.GetCause(), nil
			}
		}
		if len(resp.GetNextPageToken()) == 0 {
			return "", nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// jsonResult turns a workflow result into JSON: JSON payloads as they are (unchecked: their
// reader checks them), anything else through the data converter.
func (e *conn) jsonResult(p *commonpb.Payloads) (json.RawMessage, error) {
	if len(p.GetPayloads()) == 0 {
		return json.RawMessage("null"), nil
	}
	payload := p.GetPayloads()[0]
	switch string(payload.GetMetadata()[converter.MetadataEncoding]) {
	case converter.MetadataEncodingJSON:
		return payload.GetData(), nil
	case converter.MetadataEncodingNil:
		return json.RawMessage("null"), nil
	}
	var v any
	if err := e.dc.FromPayload(payload, &v); err != nil {
		return nil, fmt.Errorf("the workflow result cannot be read as JSON (a worker whose data converter encrypts or compresses payloads hides it from taskgate): %w", err)
	}
	return json.Marshal(v)
}

// failureOf names a workflow failure: the application error type (or the failure's kind when it is
// not an application error) and its message. Activity, child workflow and Nexus failures are
// wrappers: what failed is their cause.
func failureOf(f *failurepb.Failure) (name, message string) {
	for f != nil {
		switch info := f.GetFailureInfo().(type) {
		case *failurepb.Failure_ApplicationFailureInfo:
			if name = info.ApplicationFailureInfo.GetType(); name == "" {
				name = "ApplicationFailure"
			}
			return name, f.GetMessage()
		case *failurepb.Failure_ActivityFailureInfo, *failurepb.Failure_ChildWorkflowExecutionFailureInfo,
			*failurepb.Failure_NexusOperationExecutionFailureInfo:
			if f.GetCause() == nil {
				return "Failure", f.GetMessage()
			}
			f = f.GetCause()
		case *failurepb.Failure_TimeoutFailureInfo:
			return "TimeoutFailure", f.GetMessage()
		case *failurepb.Failure_CanceledFailureInfo:
			return "CanceledFailure", f.GetMessage()
		case *failurepb.Failure_TerminatedFailureInfo:
			return "TerminatedFailure", f.GetMessage()
		case *failurepb.Failure_ServerFailureInfo:
			return "ServerFailure", f.GetMessage()
		default:
			return "Failure", f.GetMessage()
		}
	}
	return "Failure", ""
}

func timeoutCause(d *workflowservice.DescribeWorkflowExecutionResponse) string {
	cfg := d.GetExecutionConfig()
	if t := cfg.GetWorkflowExecutionTimeout(); t != nil && t.AsDuration() > 0 {
		return fmt.Sprintf("the workflow did not finish within its execution timeout of %s", t.AsDuration())
	}
	if t := cfg.GetWorkflowRunTimeout(); t != nil && t.AsDuration() > 0 {
		return fmt.Sprintf("the workflow run did not finish within its run timeout of %s", t.AsDuration())
	}
	return "the workflow timed out"
}
