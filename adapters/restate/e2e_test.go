package restate_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters/driver"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const tasksExtension = "io.modelcontextprotocol/tasks"

// served is taskgate serving the examples' mapping (examples/restate/tools.yaml) on the Restate
// server of the test environment, as `taskgate serve` does: the mapping loaded, its engines
// opened, its targets checked.
type served struct {
	srv    *mcpserver.Server
	url    string
	tokens token.Codec
}

func serve(t *testing.T, edit func(*tasks.Config, *mcpserver.Config)) *served {
	t.Helper()
	env := driver.Env{"RESTATE_INGRESS_URL=" + testenv.RestateIngress(t), "RESTATE_ADMIN_URL=" + testenv.RestateAdmin(t)}
	set, err := mapping.Loader{Env: env}.Parse("tools.yaml", restateexamples.Mapping)
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]driver.Conn{}
	for name, e := range set.Engines {
		if engines[name], err = e.Config.Open(t.Context(), driver.OpenOptions{Env: env}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engines[name].Close() })
	}
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	sealed, _ := token.NewSealed(keys)
	tc := tasks.Config{Mapping: set, Engines: engines, Tokens: sealed}
	cfg := mcpserver.Config{Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}}
	if edit != nil {
		edit(&tc, &cfg)
	}
	svc, err := tasks.New(tc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tasks = svc
	srv, err := mcpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if warnings, err := svc.CheckTargets(t.Context()); err != nil || len(warnings) > 0 {
		t.Fatalf("CheckTargets: %v, %q", err, warnings)
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return &served{srv: srv, url: hs.URL, tokens: tc.Tokens}
}

// http is a 2026-07-28 client over HTTP, declaring extensions.
func (s *served) http(extensions ...string) *rpctest.Client {
	return rpctest.Modern(rpctest.HTTP{URL: s.url}, extensions...)
}

// legacy is a 2025-11-25 client over stdio, initialized with capabilities.
func (s *served) legacy(t *testing.T, capabilities map[string]any) *rpctest.Client {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	go s.srv.Serve(ctx, st)
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); cancel() })
	c := rpctest.Legacy(&rpctest.Conn{C: conn})
	c.Decode(t, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": capabilities,
		"clientInfo": map[string]any{"name": "restate-e2e", "version": "1"}})
	return c
}

func call(t *testing.T, c *rpctest.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	return c.Decode(t, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// poll calls method until the answer's status (at statusAt) is one of want.
func poll(t *testing.T, c *rpctest.Client, method string, params map[string]any, statusAt func(map[string]any) any, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.Decode(t, method, params)
		for _, w := range want {
			if statusAt(got) == w {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v: still %v after 30s, want %v", method, params, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func taskStatus(got map[string]any) any { return got["status"] }

func toolStatus(got map[string]any) any {
	s, _ := got["structuredContent"].(map[string]any)
	return s["status"]
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func text(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// TestExtension: the 2026-07-28 tasks extension over HTTP, through every kind of example.
func TestExtension(t *testing.T) {
	c := serve(t, nil).http(tasksExtension)
	t.Run("success", func(t *testing.T) {
		id := call(t, c, "restate_wait_and_echo", map[string]any{"seconds": 1, "text": "from Restate"})["taskId"].(string)
		if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Fatalf("tasks/get right after the call = %v", got)
		}
		done := poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "completed")
		if jsonOf(done["result"].(map[string]any)["structuredContent"]) != `{"text":"from Restate"}` {
			t.Fatalf("task = %v", done)
		}
	})
	t.Run("business failure", func(t *testing.T) {
		id := call(t, c, "restate_wait_and_fail", map[string]any{"seconds": 0, "reason": "card declined"})["taskId"].(string)
		res := poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "completed")["result"].(map[string]any)
		if res["isError"] != true || text(res) != "The workflow ended failed with error Example.Failure: card declined" {
			t.Fatalf("result = %v", res)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id := call(t, c, "restate_wait_and_echo", map[string]any{"seconds": 60, "text": "x"})["taskId"].(string)
		c.Decode(t, "tasks/cancel", map[string]any{"taskId": id})
		poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "cancelled")
	})
	t.Run("progress", func(t *testing.T) {
		id := call(t, c, "restate_build_release", map[string]any{"version": "1.4.0", "stepSeconds": 1})["taskId"].(string)
		got := poll(t, c, "tasks/get", map[string]any{"taskId": id}, func(got map[string]any) any { return got["statusMessage"] },
			"step 1 of 3: compile 1.4.0", "step 2 of 3: test 1.4.0", "step 3 of 3: package 1.4.0")
		if got["status"] != "working" {
			t.Fatalf("a release in progress: %v", got)
		}
		done := poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "completed")
		if jsonOf(done["result"].(map[string]any)["structuredContent"]) != `{"status":"released","version":"1.4.0"}` {
			t.Fatalf("release = %v", done)
		}
	})
	t.Run("a question answered", func(t *testing.T) {
		id := call(t, c, "restate_approve_deployment", map[string]any{"version": "2.0.0", "env": "prod", "stepSeconds": 0})["taskId"].(string)
		got := poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "input_required")
		req, _ := got["inputRequests"].(map[string]any)["approve"].(map[string]any)
		params, _ := req["params"].(map[string]any)
		if req["method"] != "elicitation/create" || params["message"] != "Deploy 2.0.0 to prod?" || params["requestedSchema"] == nil {
			t.Fatalf("the question: %v", got)
		}
		answer := map[string]any{"approve": map[string]any{"action": "accept", "content": map[string]any{"approve": true, "reason": "tested"}}}
		if res := c.Decode(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": answer}); res["resultType"] != "complete" {
			t.Fatalf("tasks/update = %v", res)
		}
		if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] == "input_required" {
			t.Fatalf("tasks/get right after the answer still asks: %v", got)
		}
		done := poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "completed")
		if s := done["result"].(map[string]any)["structuredContent"].(map[string]any); s["deployed"] != true || s["reason"] != "tested" {
			t.Fatalf("deployment = %v", done)
		}
	})
}

// TestLegacy: 2025-11-25 tasks over stdio; tasks/result blocks until the end.
func TestLegacy(t *testing.T) {
	c := serve(t, nil).legacy(t, map[string]any{"tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}})
	created := c.Decode(t, "tools/call", map[string]any{"name": "restate_wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "legacy"}, "task": map[string]any{"ttl": 60000}})
	id, _ := created["task"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	res := c.Decode(t, "tasks/result", map[string]any{"taskId": id})
	if jsonOf(res["structuredContent"]) != `{"text":"legacy"}` {
		t.Fatalf("tasks/result = %v", res)
	}
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "completed" {
		t.Fatalf("tasks/get after the result = %v", got)
	}
}

// TestSEP1391: operations, with the client's own token as the idempotency key.
func TestSEP1391(t *testing.T) {
	s := serve(t, nil)
	c := s.http()
	c.Experimental = []string{"sep1391"}
	clientToken := "op-" + randomHex(8)
	args := map[string]any{"seconds": 1, "text": "operation"}
	op := c.Decode(t, "tools/call", map[string]any{"name": "restate_wait_and_echo", "arguments": args, "operation": map[string]any{"token": clientToken}})["operation"].(map[string]any)
	serverToken, _ := op["token"].(string)
	poll(t, c, "tools/async/status", map[string]any{"token": clientToken}, taskStatus, "completed")
	for _, tok := range []string{clientToken, serverToken} {
		got := c.Decode(t, "tools/async/result", map[string]any{"token": tok})
		if jsonOf(got["result"].(map[string]any)["structuredContent"]) != `{"text":"operation"}` {
			t.Fatalf("tools/async/result by %q = %v", tok, got)
		}
	}
	again := c.Decode(t, "tools/call", map[string]any{"name": "restate_wait_and_echo", "arguments": args, "operation": map[string]any{"token": clientToken}})
	first, _ := s.tokens.Open(serverToken, time.Now())
	second, _ := s.tokens.Open(again["operation"].(map[string]any)["token"].(string), time.Now())
	if first.Ref == (driver.Ref{}) || second.Ref != first.Ref {
		t.Fatalf("the same token and arguments: %v, want the first invocation %v", second.Ref, first.Ref)
	}
	_, err := c.Call(t, "tools/call", map[string]any{"name": "restate_wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "other"}, "operation": map[string]any{"token": clientToken}})
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "idempotency key was already used with other arguments") {
		t.Fatalf("the same token, other arguments: %v, want -32602", err)
	}
}

// TestHandles: a client without tasks follows and answers a task with the handle tools.
func TestHandles(t *testing.T) {
	c := serve(t, nil).http()
	res := call(t, c, "restate_approve_deployment", map[string]any{"version": "3.0.0", "env": "dev", "stepSeconds": 0})
	handle, _ := res["structuredContent"].(map[string]any)["handle"].(string)
	st := poll(t, c, "tools/call", map[string]any{"name": "task_status", "arguments": map[string]any{"handle": handle}}, toolStatus, "input_required")
	if !strings.Contains(text(st), "Deploy 3.0.0 to dev?") {
		t.Fatalf("task_status: %q", text(st))
	}
	if r := call(t, c, "task_answer", map[string]any{"handle": handle, "decline": []string{"approve"}}); r["isError"] == true {
		t.Fatalf("task_answer: %v", r)
	}
	done := poll(t, c, "tools/call", map[string]any{"name": "task_result", "arguments": map[string]any{"handle": handle}},
		func(got map[string]any) any { s, _ := got["structuredContent"].(map[string]any); return s["reason"] }, "declined")
	if s := done["structuredContent"].(map[string]any); s["deployed"] != false {
		t.Fatalf("task_result after declining: %v", done)
	}
}

// TestWait: in wait mode a client without tasks gets the result in the call itself.
func TestWait(t *testing.T) {
	c := serve(t, func(_ *tasks.Config, cfg *mcpserver.Config) { cfg.NoTaskClients = mcpserver.NoTaskWait }).legacy(t, map[string]any{})
	res := call(t, c, "restate_wait_and_echo", map[string]any{"seconds": 1, "text": "waited"})
	if jsonOf(res["structuredContent"]) != `{"text":"waited"}` {
		t.Fatalf("wait-mode result = %v", res)
	}
}

// TestNativeIDs: with native task ids, the driver writes and reads them, and ids of another
// tool or of nothing are not found.
func TestNativeIDs(t *testing.T) {
	c := serve(t, func(tc *tasks.Config, _ *mcpserver.Config) { tc.Tokens = token.Native{Refs: tc.Mapping} }).http(tasksExtension)
	id := call(t, c, "restate_wait_and_echo", map[string]any{"seconds": 0, "text": "native"})["taskId"].(string)
	if !strings.HasPrefix(id, "WaitAndEcho/run/") {
		t.Fatalf("native task id %q, want WaitAndEcho/run/...", id)
	}
	poll(t, c, "tasks/get", map[string]any{"taskId": id}, taskStatus, "completed")
	key := strings.Split(id, "/")[2]
	for _, other := range []string{
		strings.Replace(id, "WaitAndEcho/run/", "WaitAndFail/run/", 1),
		strings.Replace(id, key, driver.CallerTag("")+"-00000000-0000-4000-8000-000000000000", 1),
		strings.Replace(id, strings.Split(id, "/")[3], missingInvocation(), 1),
	} {
		if _, err := c.Call(t, "tasks/get", map[string]any{"taskId": other}); err == nil || err.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("tasks/get %q: %v, want Task not found", other, err)
		}
	}
}

// TestListenedToTheEnd: a listener is told of a Restate invocation as it runs and at its end,
// with its result.
func TestListenedToTheEnd(t *testing.T) {
	c := serve(t, nil).http(tasksExtension)
	id := call(t, c, "restate_wait_and_echo", map[string]any{"seconds": 2, "text": "from Restate"})["taskId"].(string)
	notified := rpctest.ListenToEnd(t, c, id)
	var got []string
	for _, n := range notified {
		got = append(got, n["status"].(string))
	}
	if len(got) < 2 || got[0] != "working" || got[len(got)-1] != "completed" {
		t.Fatalf("notified %v, want working, then completed", got)
	}
	if res := notified[len(notified)-1]["result"].(map[string]any); jsonOf(res["structuredContent"]) != `{"text":"from Restate"}` {
		t.Fatalf("the end carries %v", res)
	}
}
