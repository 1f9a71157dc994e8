package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
