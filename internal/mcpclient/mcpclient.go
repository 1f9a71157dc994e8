// Package mcpclient is a raw JSON-RPC client of taskgate's MCP surface, over Streamable HTTP or a
// stdio pipe. The go-sdk client hides task results, so the tests (through internal/rpctest) and
// the bench speak the wire format themselves; this package is the one implementation of it, and
// reports failures as errors so that a program can use it as well as a test.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " (data: " + string(e.Data) + ")"
	}
	return s
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Transport sends one request and returns its response's result or JSON-RPC error. err reports
// that no response could be had at all (the connection failed, the answer was not JSON-RPC).
type Transport interface {
	RoundTrip(ctx context.Context, id int, method string, params any, header http.Header) (result json.RawMessage, rpcErr *Error, err error)
}

// Client numbers requests and, on 2026-07-28, adds the per-request _meta. It is safe for
// concurrent use when its Transport is.
type Client struct {
	T Transport
	// Legacy: speak 2025-11-25 (the caller sends initialize itself); else 2026-07-28.
	Legacy bool
	// Extensions and Experimental are declared in every 2026-07-28 request's client capabilities,
	// with Capabilities (e.g. "elicitation": {}).
	Extensions, Experimental []string
	Capabilities             map[string]any
	// Name and Version are the clientInfo of every 2026-07-28 request; empty: "rpctest" and "1",
	// what the tests and the bench have always sent.
	Name, Version string
	next          atomic.Int64
}

// Legacy returns a 2025-11-25 client.
func Legacy(tr Transport) *Client { return &Client{T: tr, Legacy: true} }

// Modern returns a 2026-07-28 client declaring the given extensions.
func Modern(tr Transport, extensions ...string) *Client {
	return &Client{T: tr, Extensions: extensions}
}

// Call sends method with params (a map; _meta is added) and returns the raw result or error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, *Error, error) {
	id, params, header := c.Request(method, params)
	return c.T.RoundTrip(ctx, id, method, params, header)
}

// Request numbers one request and prepares its params and headers for the client's protocol
// version, for a caller that sends it through a transport of its own: 2025-11-25 (legacy) only
// names its version in a header; 2026-07-28 carries the version, client info and declared
// capabilities in every request's _meta, and names a task method's task or a called tool in the
// Mcp-Name routing header. params may be nil; a non-nil map gets its _meta set in place.
func (c *Client) Request(method string, params map[string]any) (id int, _ map[string]any, _ http.Header) {
	id = int(c.next.Add(1))
	if params == nil {
		params = map[string]any{}
	}
	if c.Legacy {
		return id, params, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
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
	name, version := c.Name, c.Version
	if name == "" {
		name, version = "rpctest", "1"
	}
	meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
	meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": name, "version": version}
	capabilities := map[string]any{"extensions": declared(c.Extensions), "experimental": declared(c.Experimental)}
	maps.Copy(capabilities, c.Capabilities)
	meta["io.modelcontextprotocol/clientCapabilities"] = capabilities
	params["_meta"] = meta
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
	if taskID, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
		h.Set("Mcp-Name", taskID)
	}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		h.Set("Mcp-Name", name)
	}
	return id, params, h
}

// HTTP posts to a Streamable HTTP endpoint, with Header (e.g. Authorization) on every request.
//
// A read that is safe to send twice (Repeatable) carries an Idempotency-Key header of its own, so
// that net/http sends it again when the kept-alive connection it went on turns out closed by the
// server before any answer (the server's idle timeout, or its shutdown, just as the request left):
// net/http does that for a GET, and for a POST only with that header. Other requests it does not
// send again, and their caller sees the error (EOF); a Client whose Transport lets idle
// connections go before the server does (IdleConnTimeout under taskgate's --idle-timeout, 60 s)
// avoids most of them.
type HTTP struct {
	URL    string
	Header http.Header
	// Client sends the requests; nil means http.DefaultClient (which keeps only two idle
	// connections per host, for 90 s: give many concurrent callers a client of their own).
	Client *http.Client
}

// Repeatable are the methods whose requests only read: sending one twice changes nothing that
// sending it once would not (a task read is charged twice to its caller's rate, no more).
var Repeatable = map[string]bool{
	"tasks/get": true, "tasks/result": true, "tasks/list": true, "tools/list": true, "ping": true,
	"server/discover": true, "tools/async/status": true, "tools/async/result": true,
}

// idempotencyKey is a key no other request of any process carries: a proxy that keeps answers
// under the key (as the IETF draft of the header has it) must never answer one poll with
// another's answer.
func idempotencyKey() string {
	return fmt.Sprintf("%s-%d", keyPrefix(), keys.Add(1))
}

var (
	keyPrefix = sync.OnceValue(func() string { return rand.Text() })
	keys      atomic.Int64
)

// Notified is given each notification that comes on a request's stream before its response.
type Notified func(method string, params json.RawMessage)

// A Streamer is a Transport that hands over the notifications on a request's stream, such as those
// of subscriptions/listen.
type Streamer interface {
	Stream(ctx context.Context, id int, method string, params any, header http.Header, notified Notified) (result json.RawMessage, rpcErr *Error, err error)
}

// Listen sends subscriptions/listen for the notifications filter asks for (like {"taskIds": [...]})
// and hands each notification on its stream to notified until the stream ends, with the listen's
// result (the server ended it) or an error. The transport must be a Streamer.
func (c *Client) Listen(ctx context.Context, filter map[string]any, notified Notified) (json.RawMessage, *Error, error) {
	s, ok := c.T.(Streamer)
	if !ok {
		return nil, nil, fmt.Errorf("subscriptions/listen: the transport %T streams no notifications", c.T)
	}
	id, params, header := c.Request("subscriptions/listen", map[string]any{"notifications": filter})
	return s.Stream(ctx, id, "subscriptions/listen", params, header, notified)
}

// RoundTrip posts one request. Its errors name the method, and say what to check: whether a
// server runs at the URL, whether the URL is an MCP endpoint.
func (h HTTP) RoundTrip(ctx context.Context, id int, method string, params any, header http.Header) (json.RawMessage, *Error, error) {
	return h.Stream(ctx, id, method, params, header, nil)
}

// Stream posts one request, handing the notifications before its response to notified (nil:
// skipped).
func (h HTTP) Stream(ctx context.Context, id int, method string, params any, header http.Header, notified Notified) (json.RawMessage, *Error, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	// The caller's headers first, so that none can replace what the protocol needs.
	for _, hd := range []http.Header{h.Header, header} {
		for k, v := range hd {
			req.Header[k] = v
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if Repeatable[method] && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", idempotencyKey())
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w (is the MCP server running there?)", method, err)
	}
	defer resp.Body.Close()
	var r *response
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && resp.StatusCode == http.StatusOK {
		r, err = readEvents(resp.Body, id, notified)
		// A server ends the stream after the response: read to its end, so that the connection
		// can carry the next request.
		io.Copy(io.Discard, resp.Body)
	} else {
		r, err = readJSON(resp, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	return r.Result, r.Error, nil
}

// readJSON reads a plain JSON answer: the response to request id, or a JSON-RPC error whatever
// its status and id (an HTTP error status carries one, and so does an answer to a request the
// server could not read).
func readJSON(resp *http.Response, id int) (*response, error) {
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r response
	if json.Unmarshal(body, &r) == nil && (r.Error != nil || (resp.StatusCode == http.StatusOK && string(r.ID) == strconv.Itoa(id))) {
		return &r, nil
	}
	if len(body) > 200 {
		body = append(body[:200], "..."...)
	}
	return nil, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status, URL: resp.Request.URL.String(), Body: string(body)}
}

// StatusError is an HTTP answer that carries no JSON-RPC response: a refusal before MCP (no
// credentials, another Origin) or a URL that is not an MCP endpoint.
type StatusError struct {
	StatusCode int
	Status     string // like "401 Unauthorized"
	URL        string
	Body       string // its first 200 bytes
}

func (e *StatusError) Error() string {
	hint := "is it an MCP endpoint, such as http://127.0.0.1:8080/mcp?"
	switch e.StatusCode {
	case http.StatusUnauthorized:
		hint = "the server wants a credential in an Authorization header"
	case http.StatusForbidden:
		hint = "the server refuses this credential, Origin or Host"
	}
	return fmt.Sprintf("HTTP %s from %s: %q (%s)", e.Status, e.URL, e.Body, hint)
}

// readEvents reads a server-sent event stream up to the response to request id, handing the
// notifications before it to notified and skipping other messages. An event's data is its data
// lines joined by newlines, "data:" with or without a space after it, lines ending in LF or CRLF.
func readEvents(body io.Reader, id int, notified Notified) (*response, error) {
	want := strconv.Itoa(id)
	br := bufio.NewReader(body)
	var data []byte
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			data = append(data, '\n')
		} else if len(line) == 0 && len(data) > 0 {
			var r response
			if json.Unmarshal(data, &r) == nil && string(r.ID) == want {
				return &r, nil
			}
			notify(data, notified)
			data = data[:0]
		}
		if err == io.EOF {
			return nil, errors.New("the server closed the event stream without answering")
		}
		if err != nil {
			return nil, err
		}
	}
}

// notify hands msg to notified when it is a notification.
func notify(msg []byte, notified Notified) {
	var n struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if notified != nil && json.Unmarshal(msg, &n) == nil && n.ID == nil && n.Method != "" {
		notified(n.Method, n.Params)
	}
}

// Stdio speaks newline-delimited JSON-RPC over a child process's pipes, one request at a time.
// Any line of output that is not JSON-RPC is an error: on stdio, standard output belongs to the
// protocol.
type Stdio struct {
	mu  sync.Mutex
	In  io.Writer
	Out *bufio.Reader
}

// ErrNotJSONRPC is wrapped by Stdio when the server writes a line that is not JSON-RPC.
var ErrNotJSONRPC = errors.New("standard output carries something other than JSON-RPC")

func (s *Stdio) RoundTrip(ctx context.Context, id int, method string, params any, header http.Header) (json.RawMessage, *Error, error) {
	return s.Stream(ctx, id, method, params, header, nil)
}

// Stream sends one request and reads up to its response, handing the notifications on the way to
// notified (nil: skipped). No other request is sent meanwhile.
func (s *Stdio) Stream(_ context.Context, id int, method string, params any, _ http.Header, notified Notified) (json.RawMessage, *Error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, nil, fmt.Errorf("write %s: %v", method, err)
	}
	if _, err := s.In.Write(append(body, '\n')); err != nil {
		return nil, nil, fmt.Errorf("write %s: %v", method, err)
	}
	want := strconv.Itoa(id)
	for {
		line, err := s.Out.ReadBytes('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %v", method, err)
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, nil, fmt.Errorf("%w: %q", ErrNotJSONRPC, line)
		}
		if string(r.ID) == want {
			return r.Result, r.Error, nil
		}
		notify(line, notified)
	}
}

// DecodeResponse returns a JSON-RPC response's result or error, decoded.
func DecodeResponse(r *jsonrpc.Response) (json.RawMessage, *Error) {
	if r.Error != nil {
		var we *jsonrpc.Error
		if errors.As(r.Error, &we) {
			return nil, &Error{Code: int(we.Code), Message: we.Message, Data: json.RawMessage(we.Data)}
		}
		return nil, &Error{Code: -1, Message: r.Error.Error()}
	}
	return r.Result, nil
}
