package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// answers is a transport that answers each request with the next of its errors, then with a task.
type answers struct {
	errs  []*mcpclient.Error
	calls int
}

func (a *answers) RoundTrip(ctx context.Context, id int, method string, params any, header http.Header) (json.RawMessage, *mcpclient.Error, error) {
	a.calls++
	if a.calls <= len(a.errs) {
		return nil, a.errs[a.calls-1], nil
	}
	return json.RawMessage(`{"resultType":"task","taskId":"t1"}`), nil, nil
}

func rpcError(data string) *mcpclient.Error {
	return &mcpclient.Error{Code: -32603, Message: "Failed to start: the engine did not answer", Data: json.RawMessage(data)}
}

// TestCallRetries: an error marked retryable is sent again, as often as retryTries allows; any
// other error ends the call at once.
func TestCallRetries(t *testing.T) {
	retryable := rpcError(`{"retryable":true,"retryAfterMs":1}`)
	for _, c := range []struct {
		name      string
		errs      []*mcpclient.Error
		calls     int
		wantError string
	}{
		{"retryable, then answered", []*mcpclient.Error{retryable, rpcError(`{"retryable":true}`)}, 3, ""},
		{"not retryable", []*mcpclient.Error{rpcError(`{"errorId":"x"}`), retryable}, 1, "the engine did not answer"},
		{"retryable too often", []*mcpclient.Error{retryable, retryable, retryable, retryable, retryable, retryable, retryable, retryable, retryable},
			retryTries, "marked retryable, still failing after 8 tries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := &answers{errs: c.errs}
			a, err := call(context.Background(), mcpclient.Modern(tr), "tools/call", map[string]any{"name": "echo"})
			if tr.calls != c.calls {
				t.Errorf("sent %d times, want %d", tr.calls, c.calls)
			}
			switch {
			case c.wantError == "" && (err != nil || a.TaskID != "t1"):
				t.Errorf("got %+v, %v; want the task", a, err)
			case c.wantError != "" && (err == nil || !strings.Contains(err.Error(), c.wantError)):
				t.Errorf("got error %v, want one saying %q", err, c.wantError)
			}
		})
	}
}
