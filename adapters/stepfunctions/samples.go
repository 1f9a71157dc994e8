package stepfunctions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Sampler = (*conn)(nil)

// Samples reads the inputs of at most n of the state machine's latest executions, whoever started
// them and whatever their status, newest first: ListExecutions (one page per 1,000), then one
// DescribeExecution each. An execution gone between the two (its retention ended), or whose input
// Step Functions leaves out (InputDetails.Included false), is passed over. An Express state
// machine's executions are not listed: its samples are an error.
func (e *conn) Samples(ctx context.Context, t driver.Target, n int) ([]json.RawMessage, error) {
	m, err := e.machine(t)
	if err != nil || n <= 0 {
		return nil, err
	}
	arn := m.unqualified()
	if typ, err := e.machineType(ctx, m); err != nil {
		return nil, err
	} else if typ == types.StateMachineTypeExpress {
		return nil, fmt.Errorf("%w: %s is an Express state machine: Step Functions lists none of its executions, so taskgate cannot read their inputs", driver.ErrInvalid, arn)
	}
	var inputs []json.RawMessage
	pages := sfn.NewListExecutionsPaginator(e.reader, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn), MaxResults: int32(min(n, 1000))})
	for pages.HasMorePages() && len(inputs) < n {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, apiError("listing the executions of "+arn, err)
		}
		for _, x := range page.Executions {
			if len(inputs) == n {
				break
			}
			in, ok, err := e.input(ctx, aws.ToString(x.ExecutionArn))
			if err != nil {
				return nil, err
			}
			if ok {
				inputs = append(inputs, in)
			}
		}
	}
	return inputs, nil
}

// input reads one execution's input; ok is false when the execution or its input is gone.
func (e *conn) input(ctx context.Context, arn string) (json.RawMessage, bool, error) {
	d, err := e.reader.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	var missing *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &missing):
		return nil, false, nil
	case err != nil:
		return nil, false, apiError("reading execution "+arn, err)
	case d.InputDetails != nil && !d.InputDetails.Included:
		return nil, false, nil
	}
	in := json.RawMessage(aws.ToString(d.Input))
	if !json.Valid(in) {
		return nil, false, fmt.Errorf("execution %s: Step Functions gave an input that is not JSON", arn)
	}
	return in, true, nil
}
