package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks/token"
)

func wantError(t *testing.T, what string, err *rpctest.Error, code int, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %d %q", what, code, message)
	}
	if err.Code != code || err.Message != message {
		t.Fatalf("%s: error %d %q, want %d %q", what, err.Code, err.Message, code, message)
	}
}

func TestTaskErrors(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskHide)
	c := e.client(ext)
	plain := e.client() // 2026-07-28 without the tasks extension

	_, err := plain.Call(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 1, "text": "x"}})
	wantError(t, "async tool without the extension", err, -32021,
		"Missing required client capability: tool wait_and_echo runs only as a task; declare the io.modelcontextprotocol/tasks extension")
	if string(err.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Fatalf("-32021 data = %s", err.Data)
	}

	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 1, "text": "x"})["taskId"].(string)
	_, err = plain.Call(t, "tasks/get", map[string]any{"taskId": id})
	wantError(t, "tasks/get without the extension", err, -32021, "Missing required client capability")

	reads := e.count.reads.Load()
	sealed := e.tokens.(*token.Sealed)
	other, _ := token.ParseKeys(token.NewKey("t1"))
	otherServer, _ := token.NewSealed(other)
	claims, _ := sealed.Open(id, time.Now())
	forgedForUnmappedTool := claims
	forgedForUnmappedTool.Tool = "not_a_tool"
	expired := claims
	expired.Created, expired.TTL = time.Now().Add(-time.Hour), time.Minute
	otherWorkflow := claims
	otherWorkflow.Ref.ID = "taskgate/SomethingElse/" + strings.TrimPrefix(claims.Ref.ID, "taskgate/WaitAndEcho/")
	for name, bad := range map[string]string{
		"garbage":              "hello",
		"empty":                "",
		"native ref":           claims.Ref.String(),
		"other server's key":   otherServer.Issue(claims),
		"tampered":             id[:len(id)-2] + "AA",
		"truncated":            id[:len(id)/2],
		"replayed past expiry": sealed.Issue(expired),
		"unmapped tool":        sealed.Issue(forgedForUnmappedTool),
		"other workflow type":  sealed.Issue(otherWorkflow),
	} {
		msg := "Failed to retrieve task: Task not found"
		switch name {
		case "empty":
			msg = "Failed to retrieve task: taskId is required"
		case "replayed past expiry":
			msg = "Failed to retrieve task: Task has expired"
		}
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			_, err := c.Call(t, method, map[string]any{"taskId": bad})
			wantError(t, method+" "+name, err, -32602, msg)
		}
	}
	if got := e.count.reads.Load(); got != reads {
		t.Fatalf("bad task ids caused %d engine reads, want 0", got-reads)
	}

	// Responses to keys that are not open are ignored (the tasks extension): the task asks nothing.
	if res, err := c.Call(t, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"never-asked": map[string]any{"action": "accept", "content": map[string]any{}}}}); err != nil || !strings.Contains(string(res), `"resultType":"complete"`) {
		t.Fatalf("tasks/update of a key not open: %s, %v", res, err)
	}
	_, err = c.Call(t, "tasks/update", map[string]any{"taskId": id})
	wantError(t, "tasks/update without inputResponses", err, -32602, `Failed to update task: inputResponses is required, like {"confirm": {"action": "accept", "content": {...}}}`)
	_, err = c.Call(t, "tasks/result", map[string]any{"taskId": id})
	wantError(t, "tasks/result on 2026-07-28", err, -32601, "tasks/result does not exist in the tasks extension: poll tasks/get")

	misrouted := rpctest.HTTP{URL: e.url}
	_, err = misrouted.RoundTrip(t, 77, "tasks/get", map[string]any{"taskId": id}, map[string][]string{"Mcp-Name": {"another-task"}, "Mcp-Protocol-Version": {"2026-07-28"}})
	wantError(t, "Mcp-Name that does not match the task", err, -32020, `Header mismatch: Mcp-Name header "another-task" does not match params.taskId of tasks/get`)

	discover := c.Decode(t, "server/discover", nil)
	if ext := discover["capabilities"].(map[string]any)["extensions"]; jsonOf(ext) != `{"io.modelcontextprotocol/tasks":{}}` {
		t.Fatalf("server/discover extensions = %s", jsonOf(ext))
	}

	short := call(t, c, "echo_short_ttl", map[string]any{"seconds": 0, "text": "x"})
	if short["ttlMs"] != float64(2000) {
		t.Fatalf("ttlMs = %v, want 2000", short["ttlMs"])
	}
	time.Sleep(2100 * time.Millisecond)
	_, err = c.Call(t, "tasks/get", map[string]any{"taskId": short["taskId"]})
	wantError(t, "expired id", err, -32602, "Failed to retrieve task: Task has expired")
}

func TestInvalidArgumentsStartNothing(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	starts := e.count.starts.Load()
	for args, want := range map[string]string{
		`{"seconds": "soon", "text": "x"}`: `Invalid arguments for wait_and_echo: argument "seconds": has type string, want number`,
		`{"seconds": 1}`:                   `Invalid arguments for wait_and_echo: argument "text" is required`,
	} {
		res := c.Decode(t, "tools/call", map[string]any{"name": "wait_and_echo", "arguments": json.RawMessage(args)})
		text := res["content"].([]any)[0].(map[string]any)["text"]
		if res["isError"] != true || text != want {
			t.Errorf("arguments %s: result %v, want isError with %q", args, res, want)
		}
	}
	if got := e.count.starts.Load(); got != starts {
		t.Fatalf("invalid calls started %d executions", got-starts)
	}
}

func TestSyncToolAnswersInTheCall(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []*rpctest.Client{e.client(ext), e.client()} {
		res := c.Decode(t, "tools/call", map[string]any{"name": "quick_echo", "arguments": map[string]any{"text": "now"}})
		if sc, _ := json.Marshal(res["structuredContent"]); string(sc) != `{"text":"now"}` || res["resultType"] == "task" {
			t.Fatalf("sync result = %v", res)
		}
	}
}

func TestNativeTokensAreTheEngineIDs(t *testing.T) {
	set, err := mapping.Load("../examples/temporal/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, token.Native{Refs: set})
	c := e.client(ext)
	id := call(t, c, "wait_and_echo", map[string]any{"seconds": 0, "text": "plain"})["taskId"].(string)
	if !strings.HasPrefix(id, "taskgate/WaitAndEcho/") {
		t.Fatalf("native id = %q, want the workflow id/run id", id)
	}
	done := waitFor(t, c, id, "completed")
	if done["ttlMs"] != float64(86400000) {
		t.Fatalf("native task ttlMs = %v", done["ttlMs"])
	}
	_, rpcErr := c.Call(t, "tasks/get", map[string]any{"taskId": "taskgate/Other/x/y"})
	wantError(t, "unowned native id", rpcErr, -32602, "Failed to retrieve task: Task not found")
}
