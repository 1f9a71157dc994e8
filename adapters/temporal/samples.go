package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Sampler = (*conn)(nil)

// Samples reads the inputs of at most n of the latest workflows of t's type on t's task queue,
// whoever started them and whatever their status, newest first: a visibility listing, then the
// first event of each one's history (WorkflowExecutionStarted), whose first argument is the input
// (taskgate starts a workflow with one). A run that continued another is passed over: its input
// is what the workflow gave itself, not what its starter gave. Visibility on SQL lists running
// workflows before closed ones, so the n are the latest in that order, then sorted by start time.
func (e *conn) Samples(ctx context.Context, t driver.Target, n int) ([]json.RawMessage, error) {
	w, err := workflowOf(t)
	if err != nil || n <= 0 {
		return nil, err
	}
	what := "read the inputs of " + w.typ
	if err := inQuery(w); err != nil {
		return nil, fmt.Errorf("temporal: %s: %w: %w", what, driver.ErrInvalid, err)
	}
	runs, err := e.latestRuns(ctx, what, fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", w.typ, w.queue), n)
	if err != nil {
		return nil, err
	}
	var inputs []json.RawMessage
	for _, run := range runs {
		in, ok, err := e.startInput(ctx, what, run)
		if err != nil {
			return nil, err
		}
		if ok {
			inputs = append(inputs, in)
		}
	}
	return inputs, nil
}

// latestRuns lists at most n first runs of the workflows that query selects, newest start first.
func (e *conn) latestRuns(ctx context.Context, what, query string, n int) ([]*workflowpb.WorkflowExecutionInfo, error) {
	var runs []*workflowpb.WorkflowExecutionInfo
	req := &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.namespace, PageSize: int32(min(n, 1000)), Query: query}
	for len(runs) < n {
		resp, err := e.svc.ListWorkflowExecutions(ctx, req)
		if err != nil {
			return nil, e.fail(ctx, what, err)
		}
		for _, info := range resp.GetExecutions() {
			if first := info.GetFirstRunId(); first == "" || first == info.GetExecution().GetRunId() {
				runs = append(runs, info)
			}
		}
		if req.NextPageToken = resp.GetNextPageToken(); len(req.NextPageToken) == 0 {
			break
		}
	}
	slices.SortStableFunc(runs, func(a, b *workflowpb.WorkflowExecutionInfo) int {
		return b.GetStartTime().AsTime().Compare(a.GetStartTime().AsTime())
	})
	return runs[:min(n, len(runs))], nil
}

// startInput reads the input a run was started with; ok is false when its history is gone (its
// retention ended between the listing and the read).
func (e *conn) startInput(ctx context.Context, what string, run *workflowpb.WorkflowExecutionInfo) (json.RawMessage, bool, error) {
	resp, err := e.svc.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: e.namespace, Execution: run.GetExecution(), MaximumPageSize: 1, SkipArchival: true,
	})
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, e.fail(ctx, what, err)
	}
	id := run.GetExecution().GetWorkflowId()
	events := resp.GetHistory().GetEvents()
	if len(events) == 0 || events[0].GetWorkflowExecutionStartedEventAttributes() == nil {
		return nil, false, fmt.Errorf("temporal: %s: the history of workflow %s does not begin with its start", what, id)
	}
	in, err := e.jsonValue(events[0].GetWorkflowExecutionStartedEventAttributes().GetInput())
	if err != nil {
		return nil, false, fmt.Errorf("temporal: %s: the input of workflow %s cannot be read as JSON (a worker whose data converter encrypts or compresses payloads hides it from taskgate)", what, id)
	}
	return in, true, nil
}

// jsonValue is a workflow's first argument as JSON, checked: jsonResult reads a result that its
// reader checks.
func (e *conn) jsonValue(p *commonpb.Payloads) (json.RawMessage, error) {
	v, err := e.jsonResult(p)
	if err == nil && !json.Valid(v) {
		err = errors.New("not JSON")
	}
	return v, err
}
