package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/internal/rpctest"
)

// TestQuestionsBeforeTheStart: on 2026-07-28 a tool that asks answers input_required with its
// questions and a sealed requestState; the call that brings the answers starts the workflow with
// them. Nothing is stored in between.
func TestQuestionsBeforeTheStart(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client(ext)
	before := e.count.starts.Load()
	round1 := call(t, c, "echo_after_asking", map[string]any{})
	reqs, _ := round1["inputRequests"].(map[string]any)
	who, _ := reqs["who"].(map[string]any)
	state, _ := round1["requestState"].(string)
	if round1["resultType"] != "input_required" || len(reqs) != 2 || who["method"] != "elicitation/create" || state == "" || round1["taskId"] != nil {
		t.Fatalf("round 1: %v", round1)
	}
	if params := who["params"].(map[string]any); params["message"] != "Whom should I greet?" || params["mode"] != "form" || params["requestedSchema"] == nil {
		t.Fatalf("the question: %v", who)
	}
	// The questions come in the mapping's order ("who" before "go", which a sorted map would swap).
	raw, _ := c.Call(t, "tools/call", map[string]any{"name": "echo_after_asking", "arguments": map[string]any{}})
	if w, g := strings.Index(string(raw), `"who":`), strings.Index(string(raw), `"go":`); w < 0 || g < w {
		t.Fatalf("inputRequests out of the mapping's order: %s", raw)
	}
	answer := func(name string, confirm any) map[string]any {
		return map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": name}},
			"go": map[string]any{"action": "accept", "content": map[string]any{"confirm": confirm}}}
	}
	retry := func(responses map[string]any, st string) (map[string]any, *int) {
		raw, rerr := c.Call(t, "tools/call", map[string]any{"name": "echo_after_asking", "arguments": map[string]any{}, "inputResponses": responses, "requestState": st})
		if rerr != nil {
			return map[string]any{"error": rerr.Message}, &rerr.Code
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m, nil
	}

	// One answer only: the other question is asked again.
	partial, _ := retry(map[string]any{"who": answer("Alice", true)["who"]}, state)
	if partial["resultType"] != "input_required" || len(partial["inputRequests"].(map[string]any)) != 1 || partial["inputRequests"].(map[string]any)["go"] == nil {
		t.Fatalf("a partial answer: %v", partial)
	}
	for name, c := range map[string]struct {
		responses map[string]any
		state     string
		want      string
	}{
		"an answer of the wrong type": {answer("Alice", "yes"), state, `the answer to "go" does not fit its schema: answer field "confirm": has type string, want boolean`},
		"a tampered requestState":     {answer("Alice", true), state[:len(state)-3] + "AAA", "requestState is not one taskgate gave: call echo_after_asking again without inputResponses to be asked anew"},
	} {
		got, code := retry(c.responses, c.state)
		if code == nil || *code != -32602 || got["error"] != c.want {
			t.Errorf("%s: %v", name, got)
		}
	}
	declined, _ := retry(map[string]any{"who": answer("Alice", true)["who"], "go": map[string]any{"action": "decline"}}, state)
	if declined["isError"] != true || firstText(t, declined) != `echo_after_asking did not start: the question "go" was declined (Greet now?)` {
		t.Fatalf("declined: %v", declined)
	}
	if n := e.count.starts.Load() - before; n != 0 {
		t.Fatalf("%d starts before the answers were all in", n)
	}

	created, _ := retry(answer("Alice", true), state)
	if created["resultType"] != "task" || created["requestState"] != nil || created["inputRequests"] != nil {
		t.Fatalf("round 2: %v", created)
	}
	done := waitFor(t, c, created["taskId"].(string), "completed")
	if text := firstText(t, done["result"].(map[string]any)); text != "Hello, Alice!" {
		t.Fatalf("the answer did not reach the workflow: %q", text)
	}
}

// TestQuestionsByElicitation: a 2025-11-25 client on stdio that takes elicitation is asked with
// elicitation/create before the workflow starts.
func TestQuestionsByElicitation(t *testing.T) {
	e := newEnv(t, nil)
	conn := e.stdio(t)
	initialize(t, conn, map[string]any{"elicitation": map[string]any{}})
	params, _ := json.Marshal(map[string]any{"name": "echo_after_asking", "arguments": map[string]any{}, "task": map[string]any{}})
	id, _ := jsonrpc.MakeID(float64(501))
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if err := conn.C.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: params}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	for {
		msg, err := conn.C.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.Method != "elicitation/create" || !m.IsCall() {
				continue
			}
			var p struct {
				Message string `json:"message"`
			}
			json.Unmarshal(m.Params, &p)
			asked = append(asked, p.Message)
			content := map[string]any{"confirm": true}
			if p.Message == "Whom should I greet?" {
				content = map[string]any{"name": "Bob"}
			}
			result, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
			conn.C.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: result})
		case *jsonrpc.Response:
			if m.Error != nil || len(asked) != 2 {
				t.Fatalf("tools/call: %v after asking %q", m.Error, asked)
			}
			var created struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			}
			json.Unmarshal(m.Result, &created)
			c := rpctest.Legacy(conn)
			pollLegacy(t, c, created.Task.TaskID, "completed")
			if r := c.Decode(t, "tasks/result", map[string]any{"taskId": created.Task.TaskID}); firstText(t, r) != "Hello, Bob!" {
				t.Fatalf("the answer did not reach the workflow: %v", r)
			}
			return
		}
	}
}
