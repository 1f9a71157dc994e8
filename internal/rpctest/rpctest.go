// Package rpctest is a raw JSON-RPC client for tests of taskgate's MCP surface: the go-sdk client
// hides task results, so conformance tests speak the wire format themselves, over Streamable HTTP
// or over a stdio pipe.
package rpctest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Transport sends one request and returns its response's result or error.
type Transport interface {
	RoundTrip(t testing.TB, id int, method string, params any, header http.Header) (json.RawMessage, *Error)
}

// Client numbers requests and, on 2026-07-28, adds the per-request _meta.
type Client struct {
	T Transport
	// Legacy: speak 2025-11-25 (the caller sends initialize itself); else 2026-07-28.
	Legacy bool
	// Extensions and Experimental are declared in every 2026-07-28 request's client capabilities.
	Extensions, Experimental []string
	mu                       sync.Mutex
	next                     int
}

// Legacy returns a 2025-11-25 client.
func Legacy(tr Transport) *Client { return &Client{T: tr, Legacy: true} }

// Modern returns a 2026-07-28 client declaring the given extensions.
func Modern(tr Transport, extensions ...string) *Client {
	return &Client{T: tr, Extensions: extensions}
}

// Call sends method with params (a map; _meta is added) and returns the raw result or error.
func (c *Client) Call(t testing.TB, method string, params map[string]any) (json.RawMessage, *Error) {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	if params == nil {
		params = map[string]any{}
	}
	if c.Legacy {
		return c.T.RoundTrip(t, id, method, params, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
	}
	declared := func(names []string) map[string]any {
		m := map[string]any{}
		for _, n := range names {
			m[n] = map[string]any{}
		}
		return m
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
	meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "rpctest", "version": "1"}
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{
		"extensions": declared(c.Extensions), "experimental": declared(c.Experimental)}
	params["_meta"] = meta
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
	if taskID, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
		h.Set("Mcp-Name", taskID)
	}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		h.Set("Mcp-Name", name)
	}
	return c.T.RoundTrip(t, id, method, params, h)
}

// Decode calls and decodes the result into a map, failing the test on a JSON-RPC error.
func (c *Client) Decode(t testing.TB, method string, params map[string]any) map[string]any {
	t.Helper()
	res, rerr := c.Call(t, method, params)
	if rerr != nil {
		t.Fatalf("%s: unexpected error %v", method, rerr)
	}
	var m map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("%s: result %s: %v", method, res, err)
	}
	return m
}

// HTTP posts to a Streamable HTTP endpoint, with Header (e.g. Authorization) on every request.
type HTTP struct {
	URL    string
	Header http.Header
}

func (h HTTP) RoundTrip(t testing.TB, id int, method string, params any, header http.Header) (json.RawMessage, *Error) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, h.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	for _, h := range []http.Header{h.Header, header} {
		for k, v := range h {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var r response
		if json.Unmarshal(raw, &r) == nil && r.Error != nil {
			return nil, r.Error
		}
		t.Fatalf("POST %s: HTTP %d: %s", method, resp.StatusCode, raw)
	}
	for _, msg := range messages(resp.Header.Get("Content-Type"), raw) {
		var r response
		if json.Unmarshal(msg, &r) == nil && string(r.ID) == fmt.Sprint(id) {
			return r.Result, r.Error
		}
	}
	t.Fatalf("POST %s: no response with id %d in %s", method, id, raw)
	return nil, nil
}

// messages splits a response body into JSON-RPC messages: one JSON body, or SSE data lines.
func messages(contentType string, body []byte) [][]byte {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return [][]byte{body}
	}
	var out [][]byte
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, []byte(data))
		}
	}
	return out
}

// Stdio speaks newline-delimited JSON-RPC over a child process's pipes. Any line of output that is
// not JSON-RPC fails the test: on stdio, standard output belongs to the protocol.
type Stdio struct {
	mu  sync.Mutex
	In  io.Writer
	Out *bufio.Reader
}

func (s *Stdio) RoundTrip(t testing.TB, id int, method string, params any, _ http.Header) (json.RawMessage, *Error) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := s.In.Write(append(body, '\n')); err != nil {
		t.Fatalf("write %s: %v", method, err)
	}
	for {
		line, err := s.Out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read %s: %v", method, err)
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("standard output carries something other than JSON-RPC: %q", line)
		}
		if string(r.ID) == fmt.Sprint(id) {
			return r.Result, r.Error
		}
	}
}

// Notifier is a Transport that can also send notifications.
type Notifier interface {
	Notify(t testing.TB, method string, params any)
}

// Conn speaks JSON-RPC over an mcp.Connection (e.g. one end of mcp.NewInMemoryTransports),
// keeping the notifications it reads on the way.
type Conn struct {
	C  mcp.Connection
	mu sync.Mutex
	// Notifications received so far.
	Notifications []*jsonrpc.Request
	// Responses read for other ids (several calls in flight), by id.
	early map[string]*jsonrpc.Response
}

func (c *Conn) RoundTrip(t testing.TB, id int, method string, params any, _ http.Header) (json.RawMessage, *Error) {
	t.Helper()
	raw, _ := json.Marshal(params)
	rid, _ := jsonrpc.MakeID(float64(id))
	if err := c.C.Write(context.Background(), &jsonrpc.Request{ID: rid, Method: method, Params: raw}); err != nil {
		t.Fatalf("write %s: %v", method, err)
	}
	return c.Await(t, id)
}

// Await reads until the response to id arrives.
func (c *Conn) Await(t testing.TB, id int) (json.RawMessage, *Error) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fmt.Sprint(id)
	for {
		if r, ok := c.early[key]; ok {
			delete(c.early, key)
			return decodeResponse(r)
		}
		msg, err := c.C.Read(context.Background())
		if err != nil {
			t.Fatalf("read response %d: %v", id, err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			c.Notifications = append(c.Notifications, m)
		case *jsonrpc.Response:
			if k := fmt.Sprint(m.ID.Raw()); k != key {
				if c.early == nil {
					c.early = map[string]*jsonrpc.Response{}
				}
				c.early[k] = m
				continue
			}
			return decodeResponse(m)
		}
	}
}

func decodeResponse(r *jsonrpc.Response) (json.RawMessage, *Error) {
	if r.Error != nil {
		var we *jsonrpc.Error
		if errors.As(r.Error, &we) {
			return nil, &Error{Code: int(we.Code), Message: we.Message, Data: json.RawMessage(we.Data)}
		}
		return nil, &Error{Code: -1, Message: r.Error.Error()}
	}
	return r.Result, nil
}

// Notify sends a notification.
func (c *Conn) Notify(t testing.TB, method string, params any) {
	raw, _ := json.Marshal(params)
	if err := c.C.Write(context.Background(), &jsonrpc.Request{Method: method, Params: raw}); err != nil {
		t.Fatalf("notify %s: %v", method, err)
	}
}
