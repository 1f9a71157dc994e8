// Command bench measures what taskgate adds to an engine call: for each engine, the latency of a
// direct call (start; describe) against the same operation through taskgate's MCP endpoint
// (tools/call; tasks/get over loopback HTTP), in the same run, printed as medians, p99s and ratios.
//
//	./scripts/with-engines go run ./bench [-n 300]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/adapters/temporal"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/token"
)

func main() {
	n := flag.Int("n", 300, "iterations per measurement")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	ctx := context.Background()
	temporalAddr, sfnEndpoint := os.Getenv("TEMPORAL_ADDRESS"), os.Getenv("SFN_ENDPOINT")
	if temporalAddr == "" || sfnEndpoint == "" {
		return fmt.Errorf("TEMPORAL_ADDRESS and SFN_ENDPOINT must name running engines: run ./scripts/with-engines go run ./bench")
	}
	te, err := temporal.New(ctx, temporal.Config{Address: temporalAddr, Namespace: "default"})
	if err != nil {
		return err
	}
	se, err := stepfunctions.New(ctx, stepfunctions.Config{Region: "us-east-1", Endpoint: sfnEndpoint})
	if err != nil {
		return err
	}
	if _, err := sfnexamples.Ensure(ctx, se.Client(), "arn:aws:iam::123456789012:role/taskgate-examples"); err != nil {
		return err
	}
	set, err := mapping.Load("examples/temporal/tools.yaml", "examples/stepfunctions/tools.yaml")
	if err != nil {
		return err
	}
	keys, _ := token.ParseKeys(token.NewKey("bench"))
	tokens, _ := token.NewSealed(keys)
	// FreshFor -1: every poll asks the engine, so that the round trip itself is measured (by default
	// polls within 250 ms of each other share one engine call).
	srv, err := mcpserver.New(mcpserver.Config{Mapping: set, Tokens: tokens, FreshFor: -1, Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1},
		Engines: map[string]adapters.Engine{"local-temporal": te, "aws": se}})
	if err != nil {
		return err
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	mcp := &mcpClient{url: hs.URL}

	// Executions that stay running for the whole run (no worker polls this queue).
	long := map[string]any{"seconds": 3600, "text": "bench"}
	wf, err := te.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "taskgate-bench-unpolled"}, "WaitAndEcho", long)
	if err != nil {
		return err
	}
	defer te.Client().TerminateWorkflow(ctx, wf.GetID(), "", "bench done")
	echoARN := "arn:aws:states:us-east-1:123456789012:stateMachine:" + sfnexamples.WaitAndEcho
	exec, err := se.Client().StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(echoARN), Input: aws.String(`{"seconds":3600,"text":"bench"}`)})
	if err != nil {
		return err
	}
	defer se.Client().StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: exec.ExecutionArn})

	temporalTask, err := mcp.call("wait_and_echo", long)
	if err != nil {
		return err
	}
	sfnTask, err := mcp.call("sfn_wait_and_echo", long)
	if err != nil {
		return err
	}

	rows := []struct {
		what           string
		direct, viaMCP func() error
	}{
		{"Temporal poll (DescribeWorkflowExecution vs tasks/get)",
			func() error {
				_, err := te.Client().WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
					Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: wf.GetID(), RunId: wf.GetRunID()}})
				return err
			},
			func() error { return mcp.get(temporalTask) }},
		{"Temporal start (StartWorkflowExecution vs tools/call)",
			func() error {
				_, err := te.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "taskgate-bench-unpolled"}, "WaitAndEcho", long)
				return err
			},
			func() error { _, err := mcp.call("wait_and_echo", long); return err }},
		{"Step Functions poll (DescribeExecution vs tasks/get)",
			func() error {
				_, err := se.Client().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: exec.ExecutionArn})
				return err
			},
			func() error { return mcp.get(sfnTask) }},
	}
	fmt.Printf("%d iterations each, sequential, loopback; taskgate over stateless Streamable HTTP with sealed task ids\n\n", n)
	fmt.Printf("%-56s %12s %12s %12s %12s %8s\n", "operation", "direct p50", "direct p99", "taskgate p50", "taskgate p99", "ratio")
	for _, r := range rows {
		d, err := measure(n, r.direct)
		if err != nil {
			return fmt.Errorf("%s, direct: %w", r.what, err)
		}
		m, err := measure(n, r.viaMCP)
		if err != nil {
			return fmt.Errorf("%s, through taskgate: %w", r.what, err)
		}
		fmt.Printf("%-56s %12s %12s %12s %12s %7.2fx\n", r.what, d[0], d[1], m[0], m[1], float64(m[0])/float64(d[0]))
	}
	return nil
}

// measure returns the median and 99th percentile of n runs of f, after a short warm-up.
func measure(n int, f func() error) ([2]time.Duration, error) {
	for range 10 {
		if err := f(); err != nil {
			return [2]time.Duration{}, err
		}
	}
	times := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if err := f(); err != nil {
			return [2]time.Duration{}, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	round := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	return [2]time.Duration{round(times[n/2]), round(times[n*99/100])}, nil
}

// mcpClient speaks just enough 2026-07-28 JSON-RPC for the measurements.
type mcpClient struct{ url string }

func (c *mcpClient) do(method, name string, params map[string]any) (map[string]any, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = bytes.TrimSpace(raw[i+len("data: "):])
	}
	var r struct {
		Result map[string]any
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %s", method, raw)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
	}
	return r.Result, nil
}

func (c *mcpClient) call(tool string, args map[string]any) (string, error) {
	res, err := c.do("tools/call", tool, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	id, _ := res["taskId"].(string)
	if id == "" {
		return "", fmt.Errorf("tools/call %s answered no task: %v", tool, res)
	}
	return id, nil
}

func (c *mcpClient) get(id string) error {
	res, err := c.do("tasks/get", id, map[string]any{"taskId": id})
	if err == nil && res["status"] != "working" {
		err = fmt.Errorf("tasks/get: status %v, want working", res["status"])
	}
	return err
}
