package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReadEvents(t *testing.T) {
	for name, stream := range map[string]string{
		"one event":           "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n",
		"no space after data": "data:{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n",
		"CRLF":                "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\r\n\r\n",
		"multi-line data":     "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\ndata: \"result\":{\"ok\":true}}\n\n",
		"after a notification and another response": "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
			": a comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			r, err := readEvents(strings.NewReader(stream), 7, nil)
			if err != nil || string(r.Result) != `{"ok":true}` {
				t.Fatalf("got %+v, %v", r, err)
			}
		})
	}
	if _, err := readEvents(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n"), 7, nil); err == nil || !strings.Contains(err.Error(), "closed the event stream without answering") {
		t.Errorf("a stream without the response: %v", err)
	}
}

func TestHTTPAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") {
		case "events":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: message\r\ndata:{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":1}}\r\n\r\n"))
		case "invalid":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"why":"x"}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	h := HTTP{URL: srv.URL}
	if res, rerr, err := h.RoundTrip(context.Background(), 1, "events", nil, nil); err != nil || rerr != nil || string(res) != `{"n":1}` {
		t.Errorf("events: %s, %v, %v", res, rerr, err)
	}
	if _, rerr, err := h.RoundTrip(context.Background(), 1, "invalid", nil, nil); err != nil || rerr == nil || rerr.Error() != `error -32602: bad (data: {"why":"x"})` {
		t.Errorf("invalid: %v, %v", rerr, err)
	}
	if _, _, err := h.RoundTrip(context.Background(), 1, "tools/list", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "tools/list: HTTP 404 Not Found from "+srv.URL) || !strings.Contains(err.Error(), "is it an MCP endpoint") {
		t.Errorf("not an MCP endpoint: %v", err)
	}
	srv.Close()
	var rerr *Error
	if _, _, err := h.RoundTrip(context.Background(), 1, "tools/list", nil, nil); err == nil || errors.As(err, &rerr) || !strings.HasSuffix(err.Error(), "(is the MCP server running there?)") {
		t.Errorf("no server: %v", err)
	}
}

func TestClientInfo(t *testing.T) {
	c := Modern(nil, "io.modelcontextprotocol/tasks")
	c.Name, c.Version = "taskgate call", "1.2.3"
	id, params, h := c.Request("tasks/get", map[string]any{"taskId": "t1"})
	info := params["_meta"].(map[string]any)["io.modelcontextprotocol/clientInfo"].(map[string]any)
	if id != 1 || info["name"] != "taskgate call" || info["version"] != "1.2.3" || h.Get("Mcp-Name") != "t1" {
		t.Errorf("id %d, clientInfo %v, Mcp-Name %q", id, info, h.Get("Mcp-Name"))
	}
	if _, params, _ := Modern(nil).Request("tools/list", nil); params["_meta"].(map[string]any)["io.modelcontextprotocol/clientInfo"].(map[string]any)["name"] != "rpctest" {
		t.Errorf("default clientInfo: %v", params["_meta"])
	}
}

// listenServer answers subscriptions/listen as a server that pushes: an acknowledgement, a
// keep-alive comment and a notification per status (one split over two data lines), each flushed
// at once, then holds the stream open until the client goes, or, when end is set, closes it with
// the response. Any other method gets a JSON error answer.
func listenServer(t *testing.T, end bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID int }
		json.NewDecoder(r.Body).Decode(&req)
		if r.Header.Get("Mcp-Method") != "subscriptions/listen" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		events := []string{
			`data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"taskIds":["t1"]}}}`,
			`: keep-alive`,
			`data: {"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t1","status":"working"}}`,
			`data: {"jsonrpc":"2.0","method":"notifications/tasks",` + "\ndata: " + `"params":{"taskId":"t1","status":"completed"}}`,
		}
		for _, e := range events {
			fmt.Fprintf(w, "%s\n\n", e)
			w.(http.Flusher).Flush()
		}
		if end {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%d}}}\n\n", req.ID, req.ID)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Listen hands on every notification of the stream, in order, as it comes: before the response
// when the server ends the stream, and until the caller's context ends when it does not.
func TestListen(t *testing.T) {
	want := []string{"notifications/subscriptions/acknowledged", "notifications/tasks t1 working", "notifications/tasks t1 completed"}
	record := func(seen *[]string) Notified {
		return func(method string, params json.RawMessage) {
			var p struct{ TaskID, Status string }
			json.Unmarshal(params, &p)
			*seen = append(*seen, strings.TrimSpace(method+" "+p.TaskID+" "+p.Status))
		}
	}
	filter := map[string]any{"taskIds": []string{"t1"}}

	var ended []string
	c := Modern(HTTP{URL: listenServer(t, true).URL}, "io.modelcontextprotocol/tasks")
	res, rerr, err := c.Listen(t.Context(), filter, record(&ended))
	if err != nil || rerr != nil || !strings.Contains(string(res), "subscriptionId") {
		t.Errorf("a stream the server ends: %s, %v, %v", res, rerr, err)
	}
	if fmt.Sprint(ended) != fmt.Sprint(want) {
		t.Errorf("a stream the server ends: notifications %q, want %q", ended, want)
	}

	var open []string
	c = Modern(HTTP{URL: listenServer(t, false).URL}, "io.modelcontextprotocol/tasks")
	ctx, cancel := context.WithCancel(t.Context())
	seen := record(&open)
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Listen(ctx, filter, func(method string, params json.RawMessage) {
			if seen(method, params); len(open) == len(want) {
				cancel()
			}
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "subscriptions/listen: ") {
			t.Errorf("a stream left open, its context cancelled after the notifications: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Listen did not return within 10 s of its context's end (notifications so far: %q)", open)
	}
	if fmt.Sprint(open) != fmt.Sprint(want) {
		t.Errorf("a stream left open: notifications %q, want %q", open, want)
	}

	h := HTTP{URL: listenServer(t, true).URL}
	if _, rerr, err := h.Stream(t.Context(), 1, "tasks/get", nil, nil, func(m string, _ json.RawMessage) { t.Errorf("a notification from a JSON answer: %s", m) }); err != nil || rerr == nil || rerr.Code != -32601 {
		t.Errorf("a JSON error answer: %v, %v, want error -32601", rerr, err)
	}
}

// TestIdempotencyKeys: a read carries an Idempotency-Key of its own, so that net/http sends it
// again on a connection the server closed as it left (as mcpserver's
// TestUnusedConnectionClosedAtHeaderTimeout shows); a start never does; a key the caller set is
// kept.
func TestIdempotencyKeys(t *testing.T) {
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Mcp-Method")+" "+r.Header.Get("Idempotency-Key"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer srv.Close()
	h := HTTP{URL: srv.URL}
	for _, method := range []string{"tasks/get", "tasks/get", "tools/call", "tasks/cancel"} {
		if _, _, err := h.RoundTrip(context.Background(), 1, method, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := h.RoundTrip(context.Background(), 1, "tasks/get", nil, http.Header{"Idempotency-Key": {"mine"}}); err != nil {
		t.Fatal(err)
	}
	first, _ := strings.CutPrefix(keys[0], "tasks/get ")
	second, _ := strings.CutPrefix(keys[1], "tasks/get ")
	if first == "" || second == "" || first == second || keys[2] != "tools/call " || keys[3] != "tasks/cancel " || keys[4] != "tasks/get mine" {
		t.Errorf("Idempotency-Key by request: %q", keys)
	}
}
