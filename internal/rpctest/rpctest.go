// Package rpctest is a raw JSON-RPC client for tests of taskgate's MCP surface: the go-sdk client
// hides task results, so conformance tests speak the wire format themselves, over Streamable HTTP
// or over a stdio pipe. It is a thin layer over internal/mcpclient that fails the test where
// mcpclient returns an error.
package rpctest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// Error is a JSON-RPC error object.
type Error = mcpclient.Error

// Transport sends one request and returns its response's result or error.
type Transport interface {
	RoundTrip(t testing.TB, id int, method string, params any, header http.Header) (json.RawMessage, *Error)
}

// Client is an mcpclient.Client, which numbers the requests and, on 2026-07-28, adds the
// per-request _meta, with a Transport that fails the test where no answer can be had (the
// embedded client's own T is unused).
type Client struct {
	T Transport
	*mcpclient.Client
}

// Legacy returns a 2025-11-25 client.
func Legacy(tr Transport) *Client { return &Client{T: tr, Client: mcpclient.Legacy(nil)} }

// Modern returns a 2026-07-28 client declaring the given extensions.
func Modern(tr Transport, extensions ...string) *Client {
	return &Client{T: tr, Client: mcpclient.Modern(nil, extensions...)}
}

// Call sends method with params (a map; _meta is added) and returns the raw result or error.
func (c *Client) Call(t testing.TB, method string, params map[string]any) (json.RawMessage, *Error) {
	t.Helper()
	id, params, h := c.Request(method, params)
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
	res, rerr, err := mcpclient.HTTP{URL: h.URL, Header: h.Header}.RoundTrip(context.Background(), id, method, params, header)
	if err != nil {
		t.Fatal(err)
	}
	return res, rerr
}

// Stdio speaks newline-delimited JSON-RPC over a child process's pipes. Any line of output that is
// not JSON-RPC fails the test: on stdio, standard output belongs to the protocol.
type Stdio struct {
	once sync.Once
	s    *mcpclient.Stdio
	In   io.Writer
	Out  *bufio.Reader
}

func (s *Stdio) RoundTrip(t testing.TB, id int, method string, params any, header http.Header) (json.RawMessage, *Error) {
	t.Helper()
	s.once.Do(func() { s.s = &mcpclient.Stdio{In: s.In, Out: s.Out} })
	res, rerr, err := s.s.RoundTrip(context.Background(), id, method, params, header)
	if err != nil {
		t.Fatal(err)
	}
	return res, rerr
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
			return mcpclient.DecodeResponse(r)
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
			return mcpclient.DecodeResponse(m)
		}
	}
}

// Notify sends a notification.
func (c *Conn) Notify(t testing.TB, method string, params any) {
	raw, _ := json.Marshal(params)
	if err := c.C.Write(context.Background(), &jsonrpc.Request{Method: method, Params: raw}); err != nil {
		t.Fatalf("notify %s: %v", method, err)
	}
}

// ListenToEnd listens over c's HTTP transport on the task id, declaring the tasks extension, until
// the stream ends (within a minute), and returns the notifications/tasks it carried, in order. It
// fails the test unless the listen acknowledged id and ended with its result.
func ListenToEnd(t testing.TB, c *Client, id string) []map[string]any {
	t.Helper()
	h, ok := c.T.(HTTP)
	if !ok {
		t.Fatalf("ListenToEnd listens over HTTP, not %T", c.T)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var acked []string
	var notified []map[string]any
	lc := mcpclient.Modern(mcpclient.HTTP{URL: h.URL, Header: h.Header}, "io.modelcontextprotocol/tasks")
	res, rerr, err := lc.Listen(ctx, map[string]any{"taskIds": []string{id}}, func(method string, params json.RawMessage) {
		switch method {
		case "notifications/subscriptions/acknowledged":
			var ack struct{ Notifications struct{ TaskIDs []string } }
			json.Unmarshal(params, &ack)
			acked = ack.Notifications.TaskIDs
		case "notifications/tasks":
			var n map[string]any
			json.Unmarshal(params, &n)
			notified = append(notified, n)
		}
	})
	if err != nil || rerr != nil || res == nil {
		t.Fatalf("listening on %s: %v %v", id, err, rerr)
	}
	if len(acked) != 1 || acked[0] != id {
		t.Fatalf("the listen acknowledged %v, want %s", acked, id)
	}
	return notified
}
