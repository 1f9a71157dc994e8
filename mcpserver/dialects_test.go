package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
)

// stdio connects one client to the env's server the way stdio does (a connection with the
// server's per-connection rewrite), over in-memory pipes.
func (e *env) stdio(t *testing.T) *rpctest.Conn {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	go e.srv.Serve(ctx, st)
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); cancel() })
	return &rpctest.Conn{C: conn}
}

// initialize performs the 2025-11-25 handshake on a connection.
func initialize(t *testing.T, conn *rpctest.Conn, capabilities map[string]any) (*rpctest.Client, map[string]any) {
	t.Helper()
	c := rpctest.Legacy(conn)
	res := c.Decode(t, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": capabilities,
		"clientInfo": map[string]any{"name": "legacy-test", "version": "1"},
	})
	conn.Notify(t, "notifications/initialized", map[string]any{})
	return c, res
}

var legacyTasksCaps = map[string]any{"tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}

func toolsByName(t *testing.T, c *rpctest.Client) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, tool := range c.Decode(t, "tools/list", nil)["tools"].([]any) {
		m := tool.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result has no content: %v", res)
	}
	return content[0].(map[string]any)["text"].(string)
}

func pollLegacy(t *testing.T, c *rpctest.Client, id, want string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		got := c.Decode(t, "tasks/get", map[string]any{"taskId": id})
		if got["status"] == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %v, want %s", got["status"], want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestLegacyTasks(t *testing.T) {
	e := newEnv(t, nil)
	conn := e.stdio(t)
	stdio, init := initialize(t, conn, legacyTasksCaps)
	for name, c := range map[string]*rpctest.Client{"stdio": stdio, "http": rpctest.Legacy(rpctest.HTTP{URL: e.url})} {
		t.Run(name, func(t *testing.T) {
			if name == "stdio" {
				caps := init["capabilities"].(map[string]any)
				if jsonOf(caps["tasks"]) != `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}` || caps["extensions"] != nil || init["protocolVersion"] != "2025-11-25" {
					t.Fatalf("initialize = %v", init)
				}
			}
			tools := toolsByName(t, c)
			// Over stateless HTTP the client's declarations are unknown, and a plain call gets a
			// handle: the tool is optional to it.
			want := map[string]string{"stdio": `{"taskSupport":"required"}`, "http": `{"taskSupport":"optional"}`}[name]
			if jsonOf(tools["wait_and_echo"]["execution"]) != want || tools["quick_echo"]["execution"] != nil {
				t.Fatalf("execution.taskSupport: wait_and_echo %v, quick_echo %v", tools["wait_and_echo"]["execution"], tools["quick_echo"]["execution"])
			}
			for n, tool := range tools {
				if tool["invocationMode"] != nil {
					t.Fatalf("tool %s shows invocationMode to a client that did not opt in to SEP-1391", n)
				}
			}
			// Over stdio the client declared tasks: no handle tools. Over stateless HTTP its
			// declarations are unknown, so they are offered too.
			if _, has := tools["task_status"]; has != (name == "http") {
				t.Fatalf("task_status listed: %v", has)
			}

			created := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "legacy"}, "task": map[string]any{"ttl": 60000}})
			task := created["task"].(map[string]any)
			id, _ := task["taskId"].(string)
			if id == "" || task["status"] != "working" || task["ttl"] != float64(60000) || task["pollInterval"] != float64(1000) || created["resultType"] != nil {
				t.Fatalf("CreateTaskResult = %v", created)
			}
			if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["taskId"] != id || got["status"] != "working" || got["ttl"] != float64(60000) {
				t.Fatalf("tasks/get = %v", got)
			}
			res := c.Decode(t, "tasks/result", map[string]any{"taskId": id}) // blocks until the end
			if jsonOf(res["structuredContent"]) != `{"text":"legacy"}` || jsonOf(res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"]) != `{"taskId":"`+id+`"}` {
				t.Fatalf("tasks/result = %v", res)
			}
			if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "completed" {
				t.Fatalf("after tasks/result: %v", got)
			}
			if name == "stdio" { // a connection that can carry notifications got told of the change
				var told bool
				for _, n := range conn.Notifications {
					var p map[string]any
					json.Unmarshal(n.Params, &p)
					told = told || n.Method == "notifications/tasks/status" && p["taskId"] == id && p["status"] == "completed"
				}
				if !told {
					t.Fatalf("no notifications/tasks/status for %s among %d notifications", id, len(conn.Notifications))
				}
			}
			_, err := c.Call(t, "tasks/cancel", map[string]any{"taskId": id})
			wantError(t, "cancel a completed task", err, -32602, "Cannot cancel task: it is already completed")

			failing := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_fail", "arguments": map[string]any{"seconds": 0, "reason": "no quota"}, "task": map[string]any{}})
			fid := failing["task"].(map[string]any)["taskId"].(string)
			fres := c.Decode(t, "tasks/result", map[string]any{"taskId": fid})
			if fres["isError"] != true || !strings.Contains(firstText(t, fres), "no quota") {
				t.Fatalf("tasks/result of a failure = %v", fres)
			}
			pollLegacy(t, c, fid, "failed")

			long := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 60, "text": "x"}, "task": map[string]any{}})
			lid := long["task"].(map[string]any)["taskId"].(string)
			if got := c.Decode(t, "tasks/cancel", map[string]any{"taskId": lid}); got["status"] != "cancelled" || got["taskId"] != lid {
				t.Fatalf("tasks/cancel = %v", got)
			}
			pollLegacy(t, c, lid, "cancelled")
		})
	}

	// A client that declared tasks must use them for a task-only tool.
	_, err := stdio.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "x"}})
	if err == nil || err.Code != -32601 {
		t.Fatalf("task-only tool called without task: %v, want -32601", err)
	}
}

func TestSEP1391Operations(t *testing.T) {
	e := newEnv(t, nil)
	conn := e.stdio(t)
	legacy, _ := initialize(t, conn, map[string]any{"experimental": map[string]any{"sep1391": map[string]any{}}})
	modern := e.client()
	modern.Experimental = []string{"sep1391"}
	for name, c := range map[string]*rpctest.Client{"legacy-stdio": legacy, "modern-http": modern} {
		t.Run(name, func(t *testing.T) {
			tools := toolsByName(t, c)
			if tools["wait_and_echo"]["invocationMode"] != "async" || tools["quick_echo"]["invocationMode"] != "sync" || tools["task_status"] != nil {
				t.Fatalf("tools/list for SEP-1391: %v", tools)
			}
			clientToken := "op-" + uuid.NewString()
			args := map[string]any{"seconds": 1, "text": "operation"}
			res := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": args, "operation": map[string]any{"token": clientToken, "keepAlive": 600}})
			op := res["operation"].(map[string]any)
			serverToken, _ := op["token"].(string)
			if serverToken == "" || op["status"] != "working" || op["keepAlive"] != float64(600) || op["pollFrequency"] != float64(1) || firstText(t, res) == "" {
				t.Fatalf("tools/call with operation = %v", res)
			}
			pollOperation(t, c, clientToken, "completed")
			for _, tok := range []string{clientToken, serverToken} {
				if st := c.Decode(t, "tools/async/status", map[string]any{"token": tok}); st["status"] != "completed" {
					t.Fatalf("status by %q = %v", tok, st)
				}
				got := c.Decode(t, "tools/async/result", map[string]any{"token": tok})
				if jsonOf(got["result"].(map[string]any)["structuredContent"]) != `{"text":"operation"}` {
					t.Fatalf("tools/async/result by %q = %v", tok, got)
				}
			}
			again := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": args, "operation": map[string]any{"token": clientToken}})
			if e.ref(t, again["operation"].(map[string]any)["token"].(string)) != e.ref(t, serverToken) {
				t.Fatalf("the same client token and arguments started another execution")
			}
			_, err := c.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "other"}, "operation": map[string]any{"token": clientToken}})
			if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "idempotency key was already used with other arguments") {
				t.Fatalf("same token, other arguments: %v, want -32602", err)
			}
			for _, bad := range []string{"never-issued-" + uuid.NewString(), serverToken[:len(serverToken)-4] + "AAAA"} {
				_, err = c.Call(t, "tools/async/status", map[string]any{"token": bad})
				wantError(t, "status of an unknown token", err, -32602, "Failed to retrieve operation: Operation not found")
			}

			failing := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_fail", "arguments": map[string]any{"seconds": 0, "reason": "bad input file"}, "operation": map[string]any{}})
			ftok := failing["operation"].(map[string]any)["token"].(string)
			if st := pollOperation(t, c, ftok, "failed"); !strings.Contains(st["error"].(string), "bad input file") {
				t.Fatalf("failed status without the reason: %v", st)
			}
			if got := c.Decode(t, "tools/async/result", map[string]any{"token": ftok}); got["result"].(map[string]any)["isError"] != true {
				t.Fatalf("result of a failed operation = %v", got)
			}
		})
	}

	// notifications/cancelled for the request that started an operation stops it.
	res, rerr := conn.RoundTrip(t, 900, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 60, "text": "x"}, "operation": map[string]any{}}, nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var started struct{ Operation struct{ Token string } }
	json.Unmarshal(res, &started)
	conn.Notify(t, "notifications/cancelled", map[string]any{"requestId": 900, "reason": "user changed their mind"})
	pollOperation(t, legacy, started.Operation.Token, "canceled")
}

// pollOperation polls tools/async/status until the operation reads want, failing at once on any
// other terminal status, and returns the last status.
func pollOperation(t *testing.T, c *rpctest.Client, token, want string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		st := c.Decode(t, "tools/async/status", map[string]any{"token": token})
		switch st["status"] {
		case want:
			return st
		case "working", "submitted":
		default:
			t.Fatalf("tools/async/status = %v, want %s", st, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/async/status still %v after 30s, want %s", st, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestNoTaskClientsGetHandles(t *testing.T) {
	e := newEnv(t, nil) // handles is the default
	conn := e.stdio(t)
	legacy, _ := initialize(t, conn, map[string]any{})
	for name, c := range map[string]*rpctest.Client{"legacy-stdio": legacy, "modern-http": e.client()} {
		t.Run(name, func(t *testing.T) {
			tools := toolsByName(t, c)
			for _, n := range []string{"task_status", "task_result", "task_cancel", "task_answer"} {
				if tools[n] == nil {
					t.Fatalf("%s is not listed", n)
				}
			}
			if d := tools["wait_and_echo"]["description"].(string); !strings.HasSuffix(d, "pass it to task_status to follow it, task_result to read the result, task_cancel to stop it, task_answer to answer its questions.)") {
				t.Fatalf("async tool description does not say it returns a handle: %q", d)
			}
			res := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "by handle"}})
			handle, _ := res["structuredContent"].(map[string]any)["handle"].(string)
			if handle == "" || !strings.Contains(firstText(t, res), handle) || res["resultType"] == "task" {
				t.Fatalf("handle result = %v", res)
			}
			st := c.Decode(t, "tools/call", map[string]any{"name": "task_status", "arguments": map[string]any{"handle": handle}})
			sc := st["structuredContent"].(map[string]any)
			if read, err := time.Parse(time.RFC3339Nano, fmt.Sprint(sc["lastUpdatedAt"])); sc["status"] != "working" || err != nil || time.Since(read) > time.Minute {
				t.Fatalf("task_status = %v, want working, with the time it was read as lastUpdatedAt", st)
			}
			for deadline := time.Now().Add(30 * time.Second); ; {
				r := c.Decode(t, "tools/call", map[string]any{"name": "task_result", "arguments": map[string]any{"handle": handle}})
				if jsonOf(r["structuredContent"]) == `{"text":"by handle"}` {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task_result = %v", r)
				}
				time.Sleep(300 * time.Millisecond)
			}
			long := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 60, "text": "x"}})
			lh := long["structuredContent"].(map[string]any)["handle"].(string)
			if r := c.Decode(t, "tools/call", map[string]any{"name": "task_cancel", "arguments": map[string]any{"handle": lh}}); firstText(t, r) != "Cancellation requested." {
				t.Fatalf("task_cancel = %v", r)
			}
			for deadline := time.Now().Add(30 * time.Second); ; {
				r := c.Decode(t, "tools/call", map[string]any{"name": "task_status", "arguments": map[string]any{"handle": lh}})
				if r["structuredContent"].(map[string]any)["status"] == "cancelled" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task_status after task_cancel = %v", r)
				}
				time.Sleep(200 * time.Millisecond)
			}
			bad := c.Decode(t, "tools/call", map[string]any{"name": "task_status", "arguments": map[string]any{"handle": "nope"}})
			if bad["isError"] != true || firstText(t, bad) != "task_status: Failed to retrieve task: Task not found" {
				t.Fatalf("task_status of a bad handle = %v", bad)
			}
		})
	}
}

func TestNoTaskClientsWait(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskWait)
	conn := e.stdio(t)
	c, _ := initialize(t, conn, map[string]any{})
	tools := toolsByName(t, c)
	if tools["task_status"] != nil || tools["wait_and_echo"] == nil || tools["wait_and_echo"]["execution"] != nil {
		t.Fatalf("tools/list in wait mode: %v", tools)
	}
	res := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 3, "text": "waited"}, "_meta": map[string]any{"progressToken": "p-1"}})
	if jsonOf(res["structuredContent"]) != `{"text":"waited"}` {
		t.Fatalf("wait-mode result = %v", res)
	}
	var progress []string
	for _, n := range conn.Notifications {
		if n.Method == "notifications/progress" {
			var p struct {
				ProgressToken string
				Message       string
			}
			json.Unmarshal(n.Params, &p)
			if p.ProgressToken != "p-1" {
				t.Fatalf("progress for token %q", p.ProgressToken)
			}
			progress = append(progress, p.Message)
		}
	}
	if len(progress) == 0 || !strings.Contains(progress[0], "RUNNING") {
		t.Fatalf("progress notifications = %q, want at least one with the engine status", progress)
	}
}

func TestNoTaskClientsHide(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskHide)
	conn := e.stdio(t)
	c, _ := initialize(t, conn, map[string]any{})
	tools := toolsByName(t, c)
	if tools["wait_and_echo"] != nil || tools["task_status"] != nil || tools["quick_echo"] == nil {
		t.Fatalf("tools/list in hide mode: %v", tools)
	}
	_, err := c.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "x"}})
	// 2025-11-25: a tool that requires a task, called without one, is -32601.
	wantError(t, "hidden async tool", err, -32601, "tool wait_and_echo runs only as a task: call it with a `task` param")
	if r := c.Decode(t, "tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": "sync"}}); jsonOf(r["structuredContent"]) != `{"text":"sync"}` {
		t.Fatalf("sync tool in hide mode = %v", r)
	}
}

func mustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

// TestBlockingResultEndsWithTheClient: a tasks/result whose client hangs up stops waiting (no
// goroutine is left behind in the server), while the task itself goes on.
func TestBlockingResultEndsWithTheClient(t *testing.T) {
	e := newEnv(t, nil)
	c := rpctest.Legacy(rpctest.HTTP{URL: e.url})
	// On a queue no worker polls, so that no worker's goroutines come and go in the measured process.
	id := c.Decode(t, "tools/call", map[string]any{"name": "echo_unpolled", "arguments": map[string]any{"seconds": 60, "text": "x"}, "task": map[string]any{}})["task"].(map[string]any)["taskId"].(string)
	before, _ := settle()

	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/result", "params": map[string]any{"taskId": id}})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("tasks/result of a running task answered (HTTP %d) instead of blocking", resp.StatusCode)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Fatalf("tasks/result returned after %s, before the client gave up", waited)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		after, _ := settle()
		if after <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d -> %d: the server is still waiting for a client that left", before, after)
		}
	}
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("the task after its waiter left: %v", got)
	}
}
