// Package mcpclient is a raw JSON-RPC client of taskgate's MCP surface, over Streamable HTTP or a
// stdio pipe. The go-sdk client hides task results, so the tests (through internal/rpctest) and
// the bench speak the wire format themselves; this package is the one implementation of it, and
// reports failures as errors so that a program can use it as well as a test.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

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
	// Extensions and Experimental are declared in every 2026-07-28 request's client capabilities.
	Extensions, Experimental []string
	next                     atomic.Int64
}

// Legacy returns a 2025-11-25 client.
func Legacy(tr Transport) *Client { return &Client{T: tr, Legacy: true} }

// Modern returns a 2026-07-28 client declaring the given extensions.
func Modern(tr Transport, extensions ...string) *Client {
	return &Client{T: tr, Extensions: extensions}
}

// Call sends method with params (a map; _meta is added) and returns the raw result or error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, *Error, error) {
	id := int(c.next.Add(1))
	params, header := Dress(c.Legacy, c.Extensions, c.Experimental, method, params)
	return c.T.RoundTrip(ctx, id, method, params, header)
}

// Dress prepares one request's params and headers for a protocol version: 2025-11-25 (legacy)
// only names its version in a header; 2026-07-28 carries the version, client info and declared
// capabilities in every request's _meta, and names a task method's task or a called tool in the
// Mcp-Name routing header. params may be nil; a non-nil map gets its _meta set in place.
func Dress(legacy bool, extensions, experimental []string, method string, params map[string]any) (map[string]any, http.Header) {
	if params == nil {
		params = map[string]any{}
	}
	if legacy {
		return params, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
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
		"extensions": declared(extensions), "experimental": declared(experimental)}
	params["_meta"] = meta
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
	if taskID, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
		h.Set("Mcp-Name", taskID)
	}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		h.Set("Mcp-Name", name)
	}
	return params, h
}

// HTTP posts to a Streamable HTTP endpoint, with Header (e.g. Authorization) on every request.
type HTTP struct {
	URL    string
	Header http.Header
	// Client sends the requests; nil means http.DefaultClient (which keeps only two idle
	// connections per host: give many concurrent callers a client of their own).
	Client *http.Client
}

func (h HTTP) RoundTrip(ctx context.Context, id int, method string, params any, header http.Header) (json.RawMessage, *Error, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %v", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %v", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	for _, hd := range []http.Header{h.Header, header} {
		for k, v := range hd {
			req.Header[k] = v
		}
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: reading the response: %v", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		var r response
		if json.Unmarshal(raw, &r) == nil && r.Error != nil {
			return nil, r.Error, nil
		}
		return nil, nil, fmt.Errorf("POST %s: HTTP %d: %s", method, resp.StatusCode, raw)
	}
	want := strconv.Itoa(id)
	for _, msg := range Messages(resp.Header.Get("Content-Type"), raw) {
		var r response
		if json.Unmarshal(msg, &r) == nil && string(r.ID) == want {
			return r.Result, r.Error, nil
		}
	}
	return nil, nil, fmt.Errorf("POST %s: no response with id %d in %s", method, id, raw)
}

// Messages splits a response body into JSON-RPC messages: one JSON body, or SSE data lines.
func Messages(contentType string, body []byte) [][]byte {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return [][]byte{body}
	}
	var out [][]byte
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, data)
		}
	}
	return out
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

func (s *Stdio) RoundTrip(_ context.Context, id int, method string, params any, _ http.Header) (json.RawMessage, *Error, error) {
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
	}
}

// DecodeResponse is a decoded JSON-RPC response's result or error.
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
