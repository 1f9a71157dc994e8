package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
)

// TestToolsListFitsTheCaller shows tools/list as each kind of client gets it: cacheable and typed
// on 2026-07-28, with execution.taskSupport on 2025-11-25, and without the outputSchema that a
// handle would break for clients that may get handles.
func TestToolsListFitsTheCaller(t *testing.T) {
	e := newEnv(t, nil)
	raw, rerr := e.client(ext).Call(t, "tools/list", nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var modern struct {
		ResultType string           `json:"resultType"`
		TTLMs      *int64           `json:"ttlMs"`
		CacheScope string           `json:"cacheScope"`
		Tools      []map[string]any `json:"tools"`
	}
	mustUnmarshal(t, raw, &modern)
	if modern.ResultType != "complete" || modern.TTLMs == nil || *modern.TTLMs != 300000 || modern.CacheScope != "private" || len(modern.Tools) == 0 {
		t.Fatalf("2026-07-28 tools/list: %s", raw)
	}
	for _, tool := range modern.Tools {
		if tool["execution"] != nil || tool["invocationMode"] != nil {
			t.Fatalf("2026-07-28 tool with another version's fields: %v", tool)
		}
	}

	legacy, _ := initialize(t, e.stdio(t), map[string]any{"tasks": map[string]any{}})
	tools := toolsByName(t, legacy)
	if jsonOf(tools["wait_and_echo"]["execution"]) != `{"taskSupport":"required"}` || jsonOf(tools["echo_optional"]["execution"]) != `{"taskSupport":"optional"}` || tools["quick_echo"]["execution"] != nil {
		t.Fatalf("2025-11-25 execution.taskSupport: %v / %v / %v", tools["wait_and_echo"]["execution"], tools["echo_optional"]["execution"], tools["quick_echo"]["execution"])
	}

	noTasks := toolsByName(t, e.client())
	if noTasks["wait_and_echo"]["outputSchema"] != nil || noTasks["echo_optional"]["outputSchema"] == nil || toolsByName(t, e.client(ext))["wait_and_echo"]["outputSchema"] == nil {
		t.Fatalf("handles mode: only tools that answer a handle lose their outputSchema: %v / %v",
			noTasks["wait_and_echo"]["outputSchema"], noTasks["echo_optional"]["outputSchema"])
	}
}

// TestOptionalToolRunsAsATaskOrWaits: a task for the client that takes one, the result in the
// call for the others, with the text that the mapping's text: program writes.
func TestOptionalToolRunsAsATaskOrWaits(t *testing.T) {
	e := newEnv(t, nil)
	args := map[string]any{"seconds": 1, "text": "optional"}
	created := call(t, e.client(ext), "echo_optional", args)
	if created["resultType"] != "task" || created["taskId"] == nil {
		t.Fatalf("with the extension: %v", created)
	}
	done := waitFor(t, e.client(ext), created["taskId"].(string), "completed")
	if firstText(t, done["result"].(map[string]any)) != "Echo: optional" || done["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("completed: %v", done)
	}

	waited := call(t, e.client(), "echo_optional", args)
	if waited["resultType"] != "complete" || firstText(t, waited) != "Echo: optional" || jsonOf(waited["structuredContent"]) != `{"text":"optional"}` {
		t.Fatalf("without the extension: %v", waited)
	}

	legacy, _ := initialize(t, e.stdio(t), map[string]any{"tasks": map[string]any{}})
	if r := call(t, legacy, "echo_optional", args); firstText(t, r) != "Echo: optional" {
		t.Fatalf("2025-11-25 without a task param: %v", r)
	}
	_, rerr := legacy.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": args})
	wantError(t, "2025-11-25, a required tool without a task param", rerr, -32601, "tool wait_and_echo runs only as a task: call it with a `task` param")
}

// TestProtocolErrorsFailTheTask: a failure type under protocolErrors ends the task failed with a
// JSON-RPC error in every dialect; other failures stay tool errors the model reads.
func TestProtocolErrorsFailTheTask(t *testing.T) {
	e := newEnv(t, nil)
	args := map[string]any{"seconds": 0, "reason": "the disk is on fire"}
	c := e.client(ext)
	id := call(t, c, "fail_as_protocol_error", args)["taskId"].(string)
	got := waitFor(t, c, id, "failed", "completed")
	errObj, _ := got["error"].(map[string]any)
	if got["status"] != "failed" || got["result"] != nil || errObj["code"] != float64(-32603) || !strings.Contains(errObj["message"].(string), "the disk is on fire") {
		t.Fatalf("extension: %v", got)
	}
	toolErr := waitFor(t, c, call(t, c, "wait_and_fail", args)["taskId"].(string), "completed", "failed")
	if toolErr["status"] != "completed" || toolErr["result"].(map[string]any)["isError"] != true {
		t.Fatalf("a failure not listed stays a tool error: %v", toolErr)
	}

	legacy, _ := initialize(t, e.stdio(t), map[string]any{"tasks": map[string]any{}})
	created := legacy.Decode(t, "tools/call", map[string]any{"name": "fail_as_protocol_error", "arguments": args, "task": map[string]any{}})
	_, rerr := legacy.Call(t, "tasks/result", map[string]any{"taskId": created["task"].(map[string]any)["taskId"]})
	if rerr == nil || rerr.Code != -32603 || !strings.Contains(rerr.Message, "the disk is on fire") || !strings.Contains(string(rerr.Data), "related-task") {
		t.Fatalf("2025-11-25 tasks/result: %v", rerr)
	}

	sep := e.client()
	sep.Experimental = []string{"sep1391"}
	op := sep.Decode(t, "tools/call", map[string]any{"name": "fail_as_protocol_error", "arguments": args, "operation": map[string]any{}})
	status := pollOperation(t, sep, op["operation"].(map[string]any)["token"].(string), "failed")
	if !strings.Contains(status["error"].(string), "the disk is on fire") {
		t.Fatalf("SEP-1391 status: %v", status)
	}

	handle := call(t, e.client(), "wait_and_fail", args)["structuredContent"].(map[string]any)["handle"].(string)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st := call(t, e.client(), "task_status", map[string]any{"handle": handle})
		if w := st["structuredContent"].(map[string]any)["status"]; w == "failed" {
			break
		} else if w != "working" || time.Now().After(deadline) {
			t.Fatalf("task_status of a failed workflow: %v", st)
		}
	}
}

// TestStructuredContentPerVersion: 2026-07-28 takes any JSON value; earlier versions only objects,
// so a bare string stays in the text.
func TestStructuredContentPerVersion(t *testing.T) {
	e := newEnv(t, nil)
	args := map[string]any{"seconds": 0, "text": "bare"}
	modern := call(t, e.client(), "echo_bare_string", args)
	if modern["structuredContent"] != "bare" || firstText(t, modern) != `"bare"` {
		t.Fatalf("2026-07-28: %v", modern)
	}
	legacy, _ := initialize(t, e.stdio(t), map[string]any{})
	old := call(t, legacy, "echo_bare_string", args)
	if _, has := old["structuredContent"]; has || firstText(t, old) != `"bare"` {
		t.Fatalf("2025-11-25: %v", old)
	}
}

// TestAbandonedWaitCancelsTheExecution: a client without tasks can only stop a waiting call by
// giving it up, over HTTP by closing the request and on stdio by notifications/cancelled.
func TestAbandonedWaitCancelsTheExecution(t *testing.T) {
	e := newEnv(t, nil)
	args := map[string]any{"seconds": 120, "text": "abandoned"}
	cancelled := func(t *testing.T) {
		t.Helper()
		var ref adapters.Ref
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			ref, _ = e.count.started.Load().(adapters.Ref)
			st, err := e.engine.Describe(context.Background(), adapters.Target{}, ref)
			if err == nil && st.State == adapters.Cancelled {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the abandoned execution %s is %v (%v)", ref, st.Native, err)
			}
		}
	}

	t.Run("http", func(t *testing.T) {
		ctx, stop := context.WithCancel(context.Background())
		before := e.count.starts.Load()
		go func() {
			for e.count.starts.Load() == before {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			stop()
		}()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_optional","arguments":{"seconds":120,"text":"abandoned"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		if resp, err := http.DefaultClient.Do(modernRequest(ctx, e.url, body, "tools/call", "echo_optional")); err == nil {
			resp.Body.Close()
			t.Fatalf("the call answered HTTP %d instead of waiting", resp.StatusCode)
		}
		cancelled(t)
	})

	t.Run("stdio", func(t *testing.T) {
		conn := e.stdio(t)
		initialize(t, conn, map[string]any{})
		before := e.count.starts.Load()
		params, _ := json.Marshal(map[string]any{"name": "echo_optional", "arguments": args})
		id, _ := jsonrpc.MakeID(float64(4242))
		if err := conn.C.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/call", Params: params}); err != nil {
			t.Fatal(err)
		}
		for e.count.starts.Load() == before {
			time.Sleep(50 * time.Millisecond)
		}
		conn.Notify(t, "notifications/cancelled", map[string]any{"requestId": 4242, "reason": "the user gave up"})
		cancelled(t)
	})
}

// TestRequestsTaskgateDoesNotServe: batches, and the methods of capabilities it does not declare.
func TestRequestsTaskgateDoesNotServe(t *testing.T) {
	e := newEnv(t, nil)
	for _, version := range []string{"2025-03-26", "2026-07-28"} {
		status, body := post(t, e.url, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, version, "ping")
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "batches are not served") {
			t.Fatalf("a batch on %s: HTTP %d %s", version, status, body)
		}
	}
	for _, c := range []*rpctest.Client{e.client(ext), mustInit(t, e)} {
		for _, m := range []string{"prompts/list", "resources/list", "resources/templates/list", "completion/complete"} {
			_, rerr := c.Call(t, m, nil)
			wantError(t, m, rerr, -32601, m+" is not served: taskgate declares no such capability")
		}
	}
	_, rerr := e.client(ext).Call(t, "tasks/list", nil)
	wantError(t, "tasks/list on 2026-07-28", rerr, -32601, "tasks/list does not exist in the tasks extension")
}

// modernRequest is a raw 2026-07-28 POST with the headers that version requires.
func modernRequest(ctx context.Context, url, body, method, name string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return req
}

func mustInit(t *testing.T, e *env) *rpctest.Client {
	c, _ := initialize(t, e.stdio(t), map[string]any{})
	return c
}

// TestMethodNotFoundSaysWhy: go-sdk rewrites every -32601 message to `method not found: "M"`;
// taskgate's own -32601s still reach the client, on the wire, with the message that says why.
func TestMethodNotFoundSaysWhy(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskHide)
	for _, tc := range []struct {
		what, version, body, want string
		status                    int
	}{
		{"a required tool called without a task, 2025-11-25", "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_and_echo","arguments":{"seconds":0,"text":"x"}}}`,
			"event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"tool wait_and_echo runs only as a task: call it with a ` + "`task`" + ` param"}}` + "\n\n", http.StatusOK},
		{"tasks/update, 2025-11-25", "2025-11-25",
			`{"jsonrpc":"2.0","id":"u","method":"tasks/update","params":{"taskId":"x","inputResponses":{}}}`,
			"event: message\ndata: " + `{"jsonrpc":"2.0","id":"u","error":{"code":-32601,"message":"tasks/update is part of the tasks extension on 2026-07-28"}}` + "\n\n", http.StatusOK},
		{"tasks/result, 2026-07-28", "2026-07-28",
			`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"tasks/result does not exist in the tasks extension: poll tasks/get"}}`, http.StatusNotFound},
	} {
		method := "tools/call"
		if strings.Contains(tc.body, `"tasks/`) {
			method = tc.body[strings.Index(tc.body, `"tasks/`)+1 : strings.Index(tc.body, `","params"`)]
		}
		status, body := post(t, e.url, tc.body, tc.version, method)
		if status != tc.status || body != tc.want {
			t.Errorf("%s over HTTP: %d %q, want %d %q", tc.what, status, body, tc.status, tc.want)
		}
	}

	conn := e.stdio(t)
	c, _ := initialize(t, conn, legacyTasksCaps)
	for method, want := range map[string]string{
		"prompts/list": "prompts/list is not served: taskgate declares no such capability",
		"tasks/update": "tasks/update is part of the tasks extension on 2026-07-28",
	} {
		_, err := c.Call(t, method, map[string]any{"taskId": "x", "inputResponses": map[string]any{}})
		wantError(t, method+" on stdio", err, -32601, want)
	}
	_, err := c.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "x"}})
	wantError(t, "a required tool called without a task on stdio", err, -32601, "tool wait_and_echo runs only as a task: call it with a `task` param")
	// The connection serves on: the answers went to the requests they belong to.
	if r := c.Decode(t, "tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": "after"}}); jsonOf(r["structuredContent"]) != `{"text":"after"}` {
		t.Fatalf("a call after the refusals: %v", r)
	}
}
