package mcpserver

import "testing"

// TestNeedsHoist: a request goes to go-sdk as sent unless hoisting changes it: a tools/call
// with `task` or `operation`, or _meta with taskgate's own keys however the client spelled them
// (a key go-sdk decodes as taskgate/operation must not reach the handlers).
func TestNeedsHoist(t *testing.T) {
	for _, c := range []struct {
		params string
		method string
		want   bool
	}{
		{`{"name":"t","arguments":{"x":1},"_meta":{"progressToken":1}}`, "tools/call", false},
		{`{"name":"t","arguments":{"taskgate/task":1,"task":2}}`, "tools/call", false},
		{`{"name":"t","task":{"ttl":1}}`, "tools/call", true},
		{`{"name":"t","operation":{}}`, "tools/call", true},
		{`{"name":"t","_meta":{"taskgate/operation":{}}}`, "tools/call", true},
		{`{"name":"t","_meta":{"taskgate\/operation":{}}}`, "tools/call", true},
		{`{"name":"t","_meta":{"\u0074askgate/task":{}}}`, "tools/call", true},
		{`{"taskId":"x","_meta":{"taskgate\/conn":"c1"}}`, "tasks/get", true},
		{`{"taskId":"x","_meta":{"note":"a \"taskgate/\" word","taskgate":1}}`, "tasks/get", false},
		{`{"taskId":"x","task":{}}`, "tasks/get", false},
		{`{"taskId":"x"}`, "tasks/get", false},
	} {
		rd, refusal := readMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":` + c.params + `}`))
		if refusal != nil {
			t.Fatalf("%s: %v", c.params, refusal)
		}
		if got := needsHoist(rd); got != c.want {
			t.Errorf("%s %s: needsHoist %v, want %v", c.method, c.params, got, c.want)
		}
	}
}
