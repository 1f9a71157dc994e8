package stepfunctions

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

// List reads one page of the state machine's executions (ListExecutions, newest first) and keeps
// the caller's, named as Start names them (callersName): a page may hold fewer than o.Limit, or
// none, and still be followed by more.
func (e *conn) List(ctx context.Context, o driver.ListOptions) ([]driver.Listed, string, error) {
	m, err := machineOf(o.Target)
	if err != nil {
		return nil, "", err
	}
	in := &sfn.ListExecutionsInput{StateMachineArn: aws.String(m.unqualified()), MaxResults: int32(min(max(o.Limit, 1), 1000))}
	if o.Page != "" {
		in.NextToken = aws.String(o.Page)
	}
	out, err := e.reader.ListExecutions(ctx, in)
	var badPage *types.InvalidToken
	if errors.As(err, &badPage) {
		return nil, "", fmt.Errorf("%w: not a page of %s's executions: %w", driver.ErrInvalid, m.unqualified(), err)
	}
	if err != nil {
		return nil, "", apiError("listing the executions of "+m.unqualified(), err)
	}
	var listed []driver.Listed
	for _, x := range out.Executions {
		if !callersName(aws.ToString(x.Name), o.Caller) {
			continue
		}
		listed = append(listed, driver.Listed{Ref: driver.Ref{ID: aws.ToString(x.ExecutionArn)}, Status: listedStatus(x)})
	}
	return listed, aws.ToString(out.NextToken), nil
}

// SweepGroup is t's state machine: ListExecutions names one per call.
func (e *conn) SweepGroup(t driver.Target) string {
	if m, err := machineOf(t); err == nil {
		return m.unqualified()
	}
	return t.Name
}

// Sweep reads one page of the running executions of o.Targets' state machine (ListExecutions with
// the RUNNING filter, up to 1,000, newest first; the targets are of one SweepGroup, whose versions
// or aliases it lists together) and shows those of o.Refs it holds, as running. An execution of
// the refs that no page shows has ended, or is too young to be listed: Describe tells which. It
// costs a page per 1,000 running executions of the state machine, whatever the number of refs.
func (e *conn) Sweep(ctx context.Context, o driver.SweepOptions) ([]driver.Listed, string, error) {
	ts, refs, page := o.Targets, o.Refs, o.Page
	if len(ts) == 0 {
		return nil, "", nil
	}
	m, err := machineOf(ts[0])
	if err != nil {
		return nil, "", err
	}
	for _, t := range ts[1:] {
		if n, err := machineOf(t); err != nil || n.unqualified() != m.unqualified() {
			return nil, "", fmt.Errorf("%w: a sweep lists one state machine, and %s is not %s", driver.ErrInvalid, t.Name, m.unqualified())
		}
	}
	in := &sfn.ListExecutionsInput{StateMachineArn: aws.String(m.unqualified()), StatusFilter: types.ExecutionStatusRunning, MaxResults: 1000}
	if page != "" {
		in.NextToken = aws.String(page)
	}
	out, err := e.reader.ListExecutions(ctx, in)
	var badPage *types.InvalidToken
	if errors.As(err, &badPage) {
		return nil, "", fmt.Errorf("%w: not a page of the sweep of %s: %w", driver.ErrInvalid, m.unqualified(), err)
	}
	if err != nil {
		return nil, "", apiError("sweeping the running executions of "+m.unqualified(), err)
	}
	asked := make(map[string]bool, len(refs))
	for _, r := range refs {
		asked[r.ID] = true
	}
	var listed []driver.Listed
	for _, x := range out.Executions {
		if arn := aws.ToString(x.ExecutionArn); asked[arn] {
			listed = append(listed, driver.Listed{Ref: driver.Ref{ID: arn}, Status: listedStatus(x)})
		}
	}
	return listed, aws.ToString(out.NextToken), nil
}

// listedStatus is an execution's status as a listing tells it.
func listedStatus(x types.ExecutionListItem) driver.Status {
	return driver.Status{State: stateOf(x.Status), Native: string(x.Status), Started: aws.ToTime(x.StartDate),
		Updated: latest(aws.ToTime(x.StartDate), x.RedriveDate, x.StopDate)}
}
