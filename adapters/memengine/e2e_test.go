package memengine_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

const tools = `
engines:
  mem:
    memory: {retention: 1h}
tools:
  - name: echo
    description: Waits, then echoes the text.
    engine: mem
    job: {program: echo}
    inputSchema:
      type: object
      properties:
        seconds: {type: number, minimum: 0}
        text: {type: string}
      required: [seconds, text]
  - name: fail
    description: Waits, then fails.
    engine: mem
    job: {program: fail}
    inputSchema: {type: object}
`

// serve loads the mapping, opens its engines as taskgate does, and serves them over HTTP.
func serve(t *testing.T, tokens func(*mapping.Set) token.Codec) *rpctest.Client {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]driver.Conn{}
	for name, e := range set.Engines {
		if engines[name], err = e.Config.Open(t.Context(), driver.OpenOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engines[name].Close() })
	}
	svc, err := tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: tokens(set)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Tasks: svc})
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := svc.CheckTargets(t.Context())
	if err != nil || len(warnings) > 0 {
		t.Fatalf("CheckTargets: %v, %q", err, warnings)
	}
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	return rpctest.Modern(rpctest.HTTP{URL: hs.URL}, "io.modelcontextprotocol/tasks")
}

func sealed(*mapping.Set) token.Codec {
	keys, _ := token.ParseKeys(token.NewKey("k1"))
	s, _ := token.NewSealed(keys)
	return s
}

// await polls tasks/get until the task is no longer working.
func await(t *testing.T, c *rpctest.Client, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c.Decode(t, "tasks/get", map[string]any{"taskId": id})
		if got["status"] != "working" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still working after 10s: %v", id, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServedEndToEnd: a third engine, known to taskgate only by its registration, is served by
// mcpserver through a mapping file like any other.
func TestServedEndToEnd(t *testing.T) {
	c := serve(t, sealed)
	if names := jsonOf(c.Decode(t, "tools/list", nil)["tools"]); !strings.Contains(names, `"name":"echo"`) {
		t.Fatalf("tools/list = %s", names)
	}

	created := c.Decode(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"seconds": 0.5, "text": "from memory"}})
	if created["resultType"] != "task" || created["status"] != "working" {
		t.Fatalf("tools/call = %v, want a working task", created)
	}
	id := created["taskId"].(string)
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("tasks/get at once = %v, want working", got)
	}
	done := await(t, c, id)
	if done["status"] != "completed" || jsonOf(done["result"].(map[string]any)["structuredContent"]) != `{"text":"from memory"}` {
		t.Fatalf("tasks/get after the end = %v, want completed with the text", done)
	}

	failed := await(t, c, c.Decode(t, "tools/call", map[string]any{"name": "fail", "arguments": map[string]any{"seconds": 0, "reason": "no disk"}})["taskId"].(string))
	res := failed["result"].(map[string]any)
	if failed["status"] != "completed" || res["isError"] != true || !strings.Contains(jsonOf(res["content"]), "Example.Failure: no disk") {
		t.Fatalf("a failed execution = %v, want completed with an error result", failed)
	}

	res = c.Decode(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"seconds": 1}})
	if res["isError"] != true || !strings.Contains(jsonOf(res["content"]), `argument \"text\" is required`) {
		t.Fatalf("a call without text = %v, want a tool error", res)
	}
}

// TestNativeIDs: with native task ids, the driver writes and reads them.
func TestNativeIDs(t *testing.T) {
	c := serve(t, func(set *mapping.Set) token.Codec { return token.Native{Refs: set} })
	id := c.Decode(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"seconds": 0, "text": "native"}})["taskId"].(string)
	if !strings.HasPrefix(id, "memory:echo/") {
		t.Fatalf("native task id %q, want memory:echo/...", id)
	}
	if done := await(t, c, id); done["status"] != "completed" {
		t.Fatalf("tasks/get = %v", done)
	}
	for _, other := range []string{strings.Replace(id, "memory:echo/", "memory:fail/", 1), strings.TrimPrefix(id, "memory:")} {
		if _, err := c.Call(t, "tasks/get", map[string]any{"taskId": other}); err == nil || err.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("tasks/get %q: %v, want Task not found", other, err)
		}
	}
}

// TestClientTokensWithNativeIDs: a SEP-1391 client's own token, which no driver reads as an
// engine id, still finds the execution it started when task ids are native.
func TestClientTokensWithNativeIDs(t *testing.T) {
	c := serve(t, func(set *mapping.Set) token.Codec { return token.Native{Refs: set} })
	c.Experimental = []string{"sep1391"}
	const clientToken = "my-own-token-1"
	res := c.Decode(t, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"seconds": 0, "text": "by my token"},
		"operation": map[string]any{"token": clientToken}})
	if op, _ := res["operation"].(map[string]any); op == nil || !strings.HasPrefix(op["token"].(string), "memory:echo/") || !strings.Contains(op["token"].(string), "/k-") {
		t.Fatalf("tools/call with an operation = %v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := c.Decode(t, "tools/async/status", map[string]any{"token": clientToken})
		if st["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/async/status by the client's token = %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := c.Decode(t, "tools/async/result", map[string]any{"token": clientToken})
	if jsonOf(got["result"].(map[string]any)["structuredContent"]) != `{"text":"by my token"}` {
		t.Fatalf("tools/async/result by the client's token = %v", got)
	}
}
