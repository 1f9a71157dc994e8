package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestGoSDKClient drives `taskgate dev` with the Go SDK's own client (go-sdk's mcp.Client, which
// declares no task support), over stdio (mcp.CommandTransport) and HTTP
// (mcp.StreamableClientTransport), on protocol 2026-07-28 (server/discover) and on 2025-11-25
// (initialize): tools/list and plain calls, in the default --no-task-clients mode (a handle, then
// task_status and task_result) and under --no-task-clients wait (the call waits for the result;
// abandoning it, by cancelling the call's context, cancels the workflow).
func TestGoSDKClient(t *testing.T) {
	home := t.TempDir()
	temporalClient, err := client.Dial(client.Options{HostPort: testenv.TemporalAddress(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(temporalClient.Close)
	servers := map[string]*process{"handles": startHTTP(t, home), "wait": startHTTP(t, home, "--no-task-clients", "wait")}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				t.Parallel()
				connect := func(t *testing.T, mode string) *mcp.ClientSession {
					t.Helper()
					var tr mcp.Transport
					if transport == "stdio" {
						cmd := exec.Command(binary, "dev", "--stdio", "--no-task-clients", mode)
						cmd.Env = devEnv(t, home)
						stderr := &lockedBuffer{}
						cmd.Stderr = stderr
						t.Cleanup(func() {
							if t.Failed() {
								t.Logf("taskgate dev --stdio stderr:\n%s", stderr)
							}
						})
						tr = &mcp.CommandTransport{Command: cmd}
					} else {
						tr = &mcp.StreamableClientTransport{Endpoint: servers[mode].endpoint, MaxRetries: -1}
					}
					client := mcp.NewClient(&mcp.Implementation{Name: "taskgate-go-sdk-test", Version: "1.8.0"}, nil)
					ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
					defer cancel()
					cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
					if err != nil {
						t.Fatalf("connect: %v", err)
					}
					t.Cleanup(func() { cs.Close() })
					if got := cs.InitializeResult().ProtocolVersion; got != version {
						t.Errorf("negotiated protocol %q, want %q", got, version)
					}
					return cs
				}
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
				defer cancel()

				t.Run("handles", func(t *testing.T) {
					cs := connect(t, "handles")
					names := toolNames(t, ctx, cs)
					for _, want := range []string{"wait_and_echo", "wait_and_fail", "quick_echo", "task_status", "task_result", "task_cancel"} {
						if !names[want] {
							t.Errorf("tools/list lacks %s: %v", want, names)
						}
					}
					if got := call(t, ctx, cs, "quick_echo", map[string]any{"text": "sync " + version}); got.IsError || !strings.Contains(text(got), "sync "+version) {
						t.Errorf("quick_echo = %s", show(got))
					}

					started := call(t, ctx, cs, "wait_and_echo", map[string]any{"seconds": 1, "text": "handle " + version})
					handle, _ := structuredField(started, "handle").(string)
					if started.IsError || handle == "" {
						t.Fatalf("wait_and_echo answered %s, want a handle", show(started))
					}
					var status *mcp.CallToolResult
					for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
						status = call(t, ctx, cs, "task_status", map[string]any{"handle": handle})
						if structuredField(status, "status") != "working" || time.Now().After(deadline) {
							break
						}
					}
					if structuredField(status, "status") != "completed" {
						t.Fatalf("task_status = %s, want completed", show(status))
					}
					result := call(t, ctx, cs, "task_result", map[string]any{"handle": handle})
					if result.IsError || structuredField(result, "text") != "handle "+version || !strings.Contains(text(result), "handle "+version) {
						t.Errorf("task_result = %s, want the echoed text", show(result))
					}
				})

				t.Run("wait", func(t *testing.T) {
					cs := connect(t, "wait")
					names := toolNames(t, ctx, cs)
					if !names["wait_and_echo"] || names["task_result"] {
						t.Errorf("tools/list under wait = %v, want wait_and_echo and no handle tools", names)
					}
					start := time.Now()
					got := call(t, ctx, cs, "wait_and_echo", map[string]any{"seconds": 1, "text": "waited " + version})
					if got.IsError || structuredField(got, "text") != "waited "+version || !strings.Contains(text(got), "waited "+version) {
						t.Errorf("wait_and_echo = %s, want the echoed text", show(got))
					}
					if d := time.Since(start); d < time.Second {
						t.Errorf("wait_and_echo answered after %v, before its workflow's 1 s", d)
					}
					failed := call(t, ctx, cs, "wait_and_fail", map[string]any{"seconds": 0.5, "reason": "no luck " + version})
					if !failed.IsError || !strings.Contains(text(failed), "no luck "+version) {
						t.Errorf("wait_and_fail = %s, want a tool error with the reason", show(failed))
					}

					// The client gives up on a waiting call: the SDK sends notifications/cancelled (and
					// over HTTP ends the request). The workflow must end cancelled.
					marker := fmt.Sprintf("abandoned %s %s %d", version, transport, time.Now().UnixNano())
					since := time.Now()
					callCtx, giveUp := context.WithCancel(ctx)
					done := make(chan error, 1)
					go func() {
						_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "wait_and_echo", Arguments: map[string]any{"seconds": 120, "text": marker}})
						done <- err
					}()
					if st := watchWorkflow(t, ctx, temporalClient, marker, since, func(st enumspb.WorkflowExecutionStatus) bool {
						return st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
					}); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
						t.Fatalf("the waiting call's workflow is %v, want RUNNING", st)
					}
					giveUp()
					if err := <-done; err == nil {
						t.Errorf("the abandoned call returned no error")
					}
					if st := watchWorkflow(t, ctx, temporalClient, marker, since, func(st enumspb.WorkflowExecutionStatus) bool {
						return st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
					}); st != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
						t.Errorf("after the client abandoned the call, its workflow is %v, want CANCELED", st)
					}
				})
			})
		}
	}
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	return names
}

func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structuredField(r *mcp.CallToolResult, key string) any {
	m, _ := r.StructuredContent.(map[string]any)
	return m[key]
}

func show(r *mcp.CallToolResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// watchWorkflow finds the WaitAndEcho workflow started since `since` whose input contains marker,
// and polls its status until done(status) or 20 s pass; it returns the last status seen
// (UNSPECIFIED: no such workflow).
func watchWorkflow(t *testing.T, ctx context.Context, c client.Client, marker string, since time.Time, done func(enumspb.WorkflowExecutionStatus) bool) enumspb.WorkflowExecutionStatus {
	t.Helper()
	var id, run string
	status := enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if id == "" {
			list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf(
				"WorkflowType='%s' AND StartTime >= '%s'", temporalexamples.WaitAndEchoName, since.Add(-2*time.Second).UTC().Format(time.RFC3339))})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list.GetExecutions() {
				iter := c.GetWorkflowHistory(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
				if !iter.HasNext() {
					continue
				}
				ev, err := iter.Next()
				if err != nil {
					continue
				}
				for _, p := range ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads() {
					if strings.Contains(string(p.GetData()), marker) {
						id, run = e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
					}
				}
			}
			if id == "" {
				continue
			}
		}
		d, err := c.DescribeWorkflow(ctx, id, run)
		if err != nil {
			t.Fatal(err)
		}
		if status = d.RawResponse.GetWorkflowExecutionInfo().GetStatus(); done(status) {
			break
		}
	}
	return status
}
