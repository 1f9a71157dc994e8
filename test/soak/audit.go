package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	temporalclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"golang.org/x/sync/errgroup"

	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

// The audit asks each engine directly, once the clients are done, how many executions each
// logical call of the run started: every call's input holds its marker (as text, reason or
// version), so executions are counted by the marker in their input.

// markerOf finds the run's marker in an execution's JSON input.
func (s *soak) markerOf(input []byte) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"text", "reason", "version"} {
		if v, ok := in[k].(string); ok && strings.HasPrefix(v, s.id+"-") {
			return v
		}
	}
	return ""
}

// auditTemporal counts the run's Temporal executions by marker, reading each one's input from
// the first event of its history.
func (s *soak) auditTemporal(ctx context.Context, counts map[string]int) error {
	c, err := temporalclient.DialContext(ctx, temporalclient.Options{HostPort: s.temporal.addr(), Logger: quietLogger()})
	if err != nil {
		return fmt.Errorf("auditing Temporal: %w", err)
	}
	defer c.Close()
	query := fmt.Sprintf("StartTime >= '%s'", s.setUp.UTC().Format(time.RFC3339))
	var executions [][2]string
	var page []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000, NextPageToken: page})
		if err != nil {
			return fmt.Errorf("auditing Temporal: listing workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			executions = append(executions, [2]string{e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()})
		}
		if page = resp.GetNextPageToken(); len(page) == 0 {
			break
		}
	}
	dc := converter.GetDefaultDataConverter()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, e := range executions {
		g.Go(func() error {
			resp, err := c.WorkflowService().GetWorkflowExecutionHistory(gctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
				Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: e[0], RunId: e[1]}, MaximumPageSize: 1,
				HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
			})
			if err != nil {
				return fmt.Errorf("auditing Temporal: reading workflow %s: %w", e[0], err)
			}
			events := resp.GetHistory().GetEvents()
			if len(events) == 0 {
				return nil
			}
			payloads := events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
			if len(payloads) == 0 {
				return nil
			}
			var input json.RawMessage
			if dc.FromPayload(payloads[0], &input) != nil {
				return nil
			}
			if m := s.markerOf(input); m != "" {
				mu.Lock()
				counts[m]++
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}

// auditSFN counts the run's Step Functions executions by marker, reading each one's input.
func (s *soak) auditSFN(ctx context.Context, c *sfn.Client, arns map[string]string, counts map[string]int) error {
	var executions []string
	for _, name := range []string{sfnexamples.WaitAndEcho, sfnexamples.WaitAndFail, sfnexamples.ApproveDeployment} {
		pages := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arns[name]), MaxResults: 1000})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("auditing Step Functions: listing the executions of %s: %w", name, err)
			}
			for _, e := range page.Executions {
				if aws.ToTime(e.StartDate).After(s.setUp) {
					executions = append(executions, aws.ToString(e.ExecutionArn))
				}
			}
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, arn := range executions {
		g.Go(func() error {
			d, err := c.DescribeExecution(gctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			if err != nil {
				return fmt.Errorf("auditing Step Functions: reading %s: %w", arn, err)
			}
			if m := s.markerOf([]byte(aws.ToString(d.Input))); m != "" {
				mu.Lock()
				counts[m]++
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}
