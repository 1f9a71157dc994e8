package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/rpctest"
	"github.com/taskgate/taskgate/mcpserver"
)

// Workflows that ask while they run (examples/temporal AskAndEcho, AskTwoAndEcho), on a real
// Temporal server, in every dialect.

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

func update(t *testing.T, c *rpctest.Client, id string, responses map[string]any) {
	t.Helper()
	res := c.Decode(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": responses})
	if res["resultType"] != "complete" || len(res) > 2 { // resultType and the SDK's _meta
		t.Fatalf("tasks/update: %v, want only {resultType: complete}", res)
	}
}

func TestInputRequiredExtension(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client("io.modelcontextprotocol/tasks")
	id := call(t, c, "ask_and_echo", map[string]any{"message": "Proceed?"})["taskId"].(string)
	got := waitFor(t, c, id, "input_required")
	want := map[string]any{"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": "Proceed?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []any{"confirm"}},
	}}}
	if !reflect.DeepEqual(got["inputRequests"], want) || got["statusMessage"] == "" {
		t.Fatalf("input_required task: %v", got)
	}

	answers := e.count.answers.Load()
	_, err := c.Call(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": accept(map[string]any{"confirm": "yes"})}})
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, `the answer to "confirm" does not fit its schema`) || !strings.Contains(err.Message, "confirm") {
		t.Fatalf("an answer of the wrong schema: %v", err)
	}
	update(t, c, id, map[string]any{"never-asked": accept(map[string]any{"x": 1}), "junk": map[string]any{"ignored": true}})
	if n := e.count.answers.Load() - answers; n != 0 {
		t.Fatalf("a wrong answer and a key never asked reached the engine %d times", n)
	}
	if got := c.Decode(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "input_required" {
		t.Fatalf("after answers to nothing open: %v", got)
	}

	update(t, c, id, map[string]any{"confirm": accept(map[string]any{"confirm": true})})
	done := waitFor(t, c, id, "completed", "failed")
	result, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || !reflect.DeepEqual(result["structuredContent"], map[string]any{"confirm": true}) || done["inputRequests"] != nil {
		t.Fatalf("after the answer: %v", done)
	}
	// A second answer to the same key is ignored.
	update(t, c, id, map[string]any{"confirm": accept(map[string]any{"confirm": false})})
}

func TestInputRequiredDeclined(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client("io.modelcontextprotocol/tasks")
	id := call(t, c, "ask_and_echo", map[string]any{"message": "Proceed?"})["taskId"].(string)
	waitFor(t, c, id, "input_required")
	update(t, c, id, map[string]any{"confirm": map[string]any{"action": "decline"}})
	done := waitFor(t, c, id, "completed", "failed")
	result, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || result["isError"] != true || !strings.Contains(firstText(t, result), "taskgate.Declined") {
		t.Fatalf("a declined question ends the workflow as it decides (a failure, here): %v", done)
	}
}

// TestTwoQuestionsAcrossARestart: two questions open at once are answered one by one, each by
// another taskgate process: nothing of the questions lives in taskgate.
func TestTwoQuestionsAcrossARestart(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client("io.modelcontextprotocol/tasks")
	id := call(t, c, "ask_two_and_echo", map[string]any{})["taskId"].(string)
	var got map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = waitFor(t, c, id, "input_required")
		if reqs, _ := got["inputRequests"].(map[string]any); len(reqs) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if reqs, _ := got["inputRequests"].(map[string]any); reqs["first"] == nil || reqs["second"] == nil ||
		got["statusMessage"] != `waiting for answers to 2 questions: "first": first question: confirm?; "second": second question: confirm?` {
		t.Fatalf("two questions at once: %v", got)
	}
	update(t, c, id, map[string]any{"first": accept(map[string]any{"confirm": true})})

	restarted := newEnv(t, e.tokens)
	c2 := restarted.client("io.modelcontextprotocol/tasks")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = waitFor(t, c2, id, "input_required")
		if reqs, _ := got["inputRequests"].(map[string]any); len(reqs) == 1 && reqs["second"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first answer, want only the second question open: %v", got)
		}
	}
	update(t, c2, id, map[string]any{"second": accept(map[string]any{"confirm": false}), "first": accept(map[string]any{"confirm": false})})
	done := waitFor(t, c2, id, "completed", "failed")
	result, _ := done["result"].(map[string]any)
	want := map[string]any{"first": map[string]any{"confirm": true}, "second": map[string]any{"confirm": false}}
	if !reflect.DeepEqual(result["structuredContent"], want) {
		t.Fatalf("both answers, the first kept: %v", done)
	}
}

// exchange sends one request on conn and answers every elicitation/create the server sends
// meanwhile with answer, until the response arrives. It returns the response and the params of
// each elicitation.
func exchange(t *testing.T, conn *rpctest.Conn, id int, method string, params any, answer map[string]any) (*jsonrpc.Response, []map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(params)
	rid, _ := jsonrpc.MakeID(float64(id))
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	if err := conn.C.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: raw}); err != nil {
		t.Fatal(err)
	}
	var asked []map[string]any
	for {
		msg, err := conn.C.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v after %d questions", method, err, len(asked))
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.Method != "elicitation/create" || !m.IsCall() {
				continue
			}
			var p map[string]any
			json.Unmarshal(m.Params, &p)
			asked = append(asked, p)
			result, _ := json.Marshal(answer)
			conn.C.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: result})
		case *jsonrpc.Response:
			if m.ID == rid {
				return m, asked
			}
		}
	}
}

var elicitingTasksCaps = map[string]any{"elicitation": map[string]any{},
	"tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}

// TestInputRequiredLegacy: a 2025-11-25 task shows input_required to tasks/get over HTTP and
// stdio; a stdio client waiting on tasks/result is asked with elicitation/create that names the
// task, and gets the result its answer led to.
func TestInputRequiredLegacy(t *testing.T) {
	e := newEnv(t, nil)
	conn := e.stdio(t)
	c, _ := initialize(t, conn, elicitingTasksCaps)
	created := c.Decode(t, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": map[string]any{"message": "Go on?"}, "task": map[string]any{}})
	id := created["task"].(map[string]any)["taskId"].(string)
	for name, poller := range map[string]*rpctest.Client{"stdio": c, "http": rpctest.Legacy(rpctest.HTTP{URL: e.url})} {
		// Over stateless HTTP nothing else shows the question: the status message says it.
		if got := pollLegacy(t, poller, id, "input_required"); got["statusMessage"] != `waiting for an answer to "confirm": Go on?` {
			t.Fatalf("%s: the status message does not show the question: %v", name, got)
		}
	}
	resp, asked := exchange(t, conn, 900, "tasks/result", map[string]any{"taskId": id}, accept(map[string]any{"confirm": true}))
	if resp.Error != nil || len(asked) != 1 {
		t.Fatalf("tasks/result: %v after %d questions", resp.Error, len(asked))
	}
	meta, _ := asked[0]["_meta"].(map[string]any)
	related, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any)
	if asked[0]["message"] != "Go on?" || asked[0]["mode"] != "form" || related["taskId"] != id || asked[0]["requestedSchema"] == nil {
		t.Fatalf("the elicitation: %v", asked[0])
	}
	var result map[string]any
	json.Unmarshal(resp.Result, &result)
	if !reflect.DeepEqual(result["structuredContent"], map[string]any{"confirm": true}) {
		t.Fatalf("tasks/result: %v", result)
	}
}

// TestInputRequiredOperation: SEP-1391 reports input_required; on stdio, tools/async/status asks
// with a request that carries the operation token.
func TestInputRequiredOperation(t *testing.T) {
	e := newEnv(t, nil)
	conn := e.stdio(t)
	c, _ := initialize(t, conn, map[string]any{"elicitation": map[string]any{}, "experimental": map[string]any{"sep1391": map[string]any{}}})
	started := c.Decode(t, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": map[string]any{"message": "Go on?"}, "operation": map[string]any{}})
	tok := started["operation"].(map[string]any)["token"].(string)

	httpClient := rpctest.Legacy(rpctest.HTTP{URL: e.url})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st := httpClient.Decode(t, "tools/async/status", map[string]any{"token": tok})
		if st["status"] == "input_required" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation still %v", st)
		}
	}
	resp, asked := exchange(t, conn, 901, "tools/async/status", map[string]any{"token": tok}, accept(map[string]any{"confirm": true}))
	if resp.Error != nil || len(asked) != 1 {
		t.Fatalf("tools/async/status: %v after %d questions", resp.Error, len(asked))
	}
	meta, _ := asked[0]["_meta"].(map[string]any)
	if op, _ := meta["_operation"].(map[string]any); op["token"] != tok {
		t.Fatalf("the elicitation does not carry the operation token: %v", asked[0])
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if st := httpClient.Decode(t, "tools/async/status", map[string]any{"token": tok}); st["status"] == "completed" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("operation still %v after the answer", st)
		}
	}
	res := httpClient.Decode(t, "tools/async/result", map[string]any{"token": tok})
	if r, _ := res["result"].(map[string]any); !reflect.DeepEqual(r["structuredContent"], map[string]any{"confirm": true}) {
		t.Fatalf("tools/async/result: %v", res)
	}
}

// TestInputRequiredHandles: a client without tasks reads the question from task_status and
// answers it with task_answer.
func TestInputRequiredHandles(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	handle := structured(t, call(t, c, "ask_and_echo", map[string]any{"message": "Ship it?"}))["handle"].(string)
	var status map[string]any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res := call(t, c, "task_status", map[string]any{"handle": handle})
		status = structured(t, res)
		if status["status"] == "input_required" {
			if text := firstText(t, res); !strings.Contains(text, "Ship it?") || !strings.Contains(text, "task_answer") {
				t.Fatalf("task_status does not show the question and how to answer it: %q", text)
			}
			if status["statusMessage"] != `waiting for an answer to "confirm": Ship it?` {
				t.Fatalf("task_status's status message: %v", status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v", status)
		}
	}
	qs, _ := status["questions"].([]any)
	if len(qs) != 1 || qs[0].(map[string]any)["key"] != "confirm" || qs[0].(map[string]any)["schema"] == nil {
		t.Fatalf("task_status questions: %v", status)
	}
	wrong := call(t, c, "task_answer", map[string]any{"handle": handle, "answers": map[string]any{"confirm": map[string]any{"confirm": 3}}})
	if wrong["isError"] != true || !strings.Contains(firstText(t, wrong), `does not fit its schema`) {
		t.Fatalf("a wrong answer: %v", wrong)
	}
	if none := call(t, c, "task_answer", map[string]any{"handle": handle, "answers": map[string]any{"other": map[string]any{}}}); none["isError"] != true {
		t.Fatalf("an answer to nothing open: %v", none)
	}
	ok := call(t, c, "task_answer", map[string]any{"handle": handle, "answers": map[string]any{"confirm": map[string]any{"confirm": true}}})
	if got := structured(t, ok); ok["isError"] == true || !reflect.DeepEqual(got, map[string]any{"delivered": []any{"confirm"}, "ignored": []any{}}) {
		t.Fatalf("task_answer: %v", ok)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res := call(t, c, "task_result", map[string]any{"handle": handle})
		if s := structured(t, res); reflect.DeepEqual(s, map[string]any{"confirm": true}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task_result: %v", res)
		}
	}
}

// TestInputRequiredWaitMode: a client that takes no task but takes elicitation is asked while
// its call waits.
func TestInputRequiredWaitMode(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskWait)
	conn := e.stdio(t)
	initialize(t, conn, map[string]any{"elicitation": map[string]any{}})
	resp, asked := exchange(t, conn, 902, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": map[string]any{"message": "Wait and ask?"}}, accept(map[string]any{"confirm": true}))
	var result map[string]any
	json.Unmarshal(resp.Result, &result)
	if resp.Error != nil || len(asked) != 1 || asked[0]["message"] != "Wait and ask?" || !reflect.DeepEqual(result["structuredContent"], map[string]any{"confirm": true}) {
		t.Fatalf("tools/call: %v, %v after %v", result, resp.Error, asked)
	}
}

// TestWaitModeAsksInRounds: on 2026-07-28 go-sdk sends no elicitation/create, so a waiting call
// whose workflow asks answers input_required with the question and a requestState naming the
// execution, and the retry that brings the answer resumes that execution: over stdio and HTTP.
func TestWaitModeAsksInRounds(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskWait)
	for name, c := range map[string]*rpctest.Client{"stdio": rpctest.Modern(e.stdio(t)), "http": e.client()} {
		c.Capabilities = map[string]any{"elicitation": map[string]any{}}
		args := map[string]any{"message": "Go on, " + name + "?"}
		starts := e.count.starts.Load()
		asked := call(t, c, "ask_and_echo", args)
		state, _ := asked["requestState"].(string)
		want := map[string]any{"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "Go on, " + name + "?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []any{"confirm"}},
		}}}
		if asked["resultType"] != "input_required" || !reflect.DeepEqual(asked["inputRequests"], want) || state == "" {
			t.Fatalf("%s: the waiting call whose workflow asks: %v", name, asked)
		}

		_, err := c.Call(t, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": map[string]any{"message": "other"},
			"requestState": state, "inputResponses": map[string]any{"confirm": accept(map[string]any{"confirm": true})}})
		wantError(t, name+": the state with other arguments", err, -32602,
			"requestState belongs to another call: repeat the arguments of the call that was asked, or call ask_and_echo again without inputResponses")
		_, err = c.Call(t, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": args,
			"requestState": state, "inputResponses": map[string]any{"confirm": accept(map[string]any{"confirm": "yes"})}})
		if err == nil || err.Code != -32602 || !strings.Contains(err.Message, `the answer to "confirm" does not fit its schema`) {
			t.Fatalf("%s: an answer of the wrong schema: %v", name, err)
		}

		resumed := c.Decode(t, "tools/call", map[string]any{"name": "ask_and_echo", "arguments": args,
			"requestState": state, "inputResponses": map[string]any{"confirm": accept(map[string]any{"confirm": true})}})
		if resumed["isError"] == true || !reflect.DeepEqual(resumed["structuredContent"], map[string]any{"confirm": true}) {
			t.Fatalf("%s: the retry with the answer: %v", name, resumed)
		}
		if n := e.count.starts.Load() - starts; n != 1 {
			t.Fatalf("%s: %d executions started, want the one the retry resumed", name, n)
		}
	}
}

func structured(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	s, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structured content: %v", res)
	}
	return s
}

// TestInputRequiredWaitModeWithoutElicitation: a waiting call whose client cannot answer ends at
// its timeout saying what the workflow waits on.
func TestInputRequiredWaitModeWithoutElicitation(t *testing.T) {
	e := newEnv(t, nil, mcpserver.NoTaskWait)
	res := call(t, e.client(), "ask_within_a_second", map[string]any{"message": "Anyone?"})
	if text := firstText(t, res); res["isError"] != true || !strings.Contains(text, `waiting for an answer to "confirm": Anyone?`) || !strings.Contains(text, "takes neither tasks nor elicitation") {
		t.Fatalf("the timed-out call: %v", res)
	}
}

// TestElicitationSchemasLoadNothing: go-sdk checks an elicitation's answer against its requested
// schema with the other JSON Schema library in use (google/jsonschema-go), on the server and on
// the client; taskgate never hands it a schema that refers elsewhere (shownQuestions), and were it
// handed one, it would fetch nothing either.
func TestElicitationSchemasLoadNothing(t *testing.T) {
	var hits atomic.Int64
	schemas := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer schemas.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"pw": "x"}}, nil
		}})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // the era of elicitation/create
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, ref := range []string{schemas.URL + "/pw.json", "file:///etc/passwd"} {
		_, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "pw?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"pw": map[string]any{"type": "string", "$ref": ref}}}})
		if err == nil || !strings.Contains(err.Error(), "loading "+ref+": cannot resolve remote schemas") {
			t.Errorf("an elicitation whose schema refers to %s: %v", ref, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server was asked %d times", n)
	}
}
