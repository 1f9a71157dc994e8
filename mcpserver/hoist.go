package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk decodes tools/call params into a struct that drops unknown top-level fields, so the
// 2025-11-25 `task` and the SEP-1391 `operation` would never reach the middleware; and it decodes
// legacy client capabilities into a struct with no `tasks`. Both transports therefore rewrite each
// request before the SDK reads it, carrying what it would lose under these _meta keys.
const (
	metaTask      = "taskgate/task"
	metaOperation = "taskgate/operation"
	metaClient    = "taskgate/client"
	// metaConn names the stdio connection a request came on, so that handlers can notify it.
	metaConn = "taskgate/conn"
)

// declared is what a client declared in its initialize request, on a connection that has one.
type declared struct {
	Tasks   bool `json:"tasks"`
	SEP1391 bool `json:"sep1391"`
}

// maxBody bounds a request body read by the HTTP rewrite.
const maxBody = 8 << 20

// hoist rewrites one request's params: for tools/call, `task` and `operation` move into _meta; d
// and conn, when set, are recorded in _meta. Whatever a client itself put under these keys is
// dropped.
func hoist(method string, params json.RawMessage, d *declared, conn string) (json.RawMessage, error) {
	if len(params) == 0 || params[0] != '{' {
		return params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := p["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("_meta must be an object")
		}
	}
	delete(meta, metaTask)
	delete(meta, metaOperation)
	delete(meta, metaClient)
	delete(meta, metaConn)
	if method == "tools/call" {
		for field, key := range map[string]string{"task": metaTask, "operation": metaOperation} {
			if v, ok := p[field]; ok {
				meta[key] = v
				delete(p, field)
			}
		}
	}
	if d != nil {
		meta[metaClient], _ = json.Marshal(d)
	}
	if conn != "" {
		meta[metaConn], _ = json.Marshal(conn)
	}
	if len(meta) > 0 {
		p["_meta"], _ = json.Marshal(meta)
	}
	return json.Marshal(p)
}

// declaredIn reads what an initialize request declares.
func declaredIn(params json.RawMessage) declared {
	var p struct {
		Capabilities struct {
			Tasks        json.RawMessage            `json:"tasks"`
			Experimental map[string]json.RawMessage `json:"experimental"`
		} `json:"capabilities"`
	}
	json.Unmarshal(params, &p)
	_, sep := p.Capabilities.Experimental[experimentalSEP1391]
	return declared{Tasks: len(p.Capabilities.Tasks) > 0 && string(p.Capabilities.Tasks) != "null", SEP1391: sep}
}

// stdioTransport wraps a transport with the rewrite and remembers, per connection, what the client
// declared and which request started which SEP-1391 operation (for notifications/cancelled).
type stdioTransport struct {
	mcp.Transport
	s *Server
}

func (t stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn := &stdioConn{Connection: c, s: t.s, started: newOperations(), id: uuid.NewString()}
	t.s.conns.Store(conn.id, conn)
	return conn, nil
}

type stdioConn struct {
	mcp.Connection
	s       *Server
	id      string
	mu      sync.Mutex
	decl    *declared
	started *operations
}

func (c *stdioConn) Close() error {
	c.s.conns.Delete(c.id)
	return c.Connection.Close()
}

// notify sends a notification to the client of this connection.
func (c *stdioConn) notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.Connection.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return msg, err
	}
	c.mu.Lock()
	if req.Method == "initialize" {
		d := declaredIn(req.Params)
		c.decl = &d
	}
	d := c.decl
	c.mu.Unlock()
	if req.Method == "notifications/cancelled" {
		c.cancelOperation(req.Params)
	}
	if params, err := hoist(req.Method, req.Params, d, c.id); err == nil {
		req.Params = params
	}
	if req.Method == "tools/call" && req.IsCall() {
		c.started.expect(req.ID)
	}
	return req, nil
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
		c.started.record(resp.ID, resp.Result)
	}
	return c.Connection.Write(ctx, msg)
}

// cancelOperation stops the operation that the cancelled request started, if it was one.
func (c *stdioConn) cancelOperation(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if token, ok := c.started.token(id); ok {
		c.s.cancelOperation(token, "")
	}
}

// httpRewrite applies the rewrite to every POSTed request (stateless: no client declarations).
func httpRewrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		r.Body.Close()
		if err != nil || len(body) > maxBody {
			http.Error(w, fmt.Sprintf("request body over %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		// A body that is not one JSON-RPC request goes on unchanged, for the SDK to answer.
		var whole map[string]json.RawMessage
		if json.Unmarshal(body, &whole) == nil {
			var method string
			json.Unmarshal(whole["method"], &method)
			if msg := mismatchedName(r.Header.Get("Mcp-Name"), method, whole["params"]); msg != "" {
				id := whole["id"]
				if id == nil {
					id = json.RawMessage("null")
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id,
					"error": map[string]any{"code": jsonrpc.CodeInvalidParams, "message": msg}})
				return
			}
			if params, err := hoist(method, whole["params"], nil, ""); err == nil && method != "" {
				whole["params"] = params
				body, _ = json.Marshal(whole)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientGoneKey{}, r.Context())))
	})
}

// clientGoneKey carries the HTTP request's context to the handlers: the stateless SDK handler runs
// them in a context that outlives the request, so a blocking call (tasks/result, a sync or waiting
// tool) would otherwise go on for a client that left.
type clientGoneKey struct{}

// withClient ends ctx when the HTTP client that sent the request goes away.
func withClient(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if req, ok := ctx.Value(clientGoneKey{}).(context.Context); ok {
		stop := context.AfterFunc(req, cancel)
		return ctx, func() { stop(); cancel() }
	}
	return ctx, cancel
}

// mismatchedName checks the routing header of a task method against the task it names: an
// intermediary routes by the header, taskgate acts on the body, and they must agree. A missing
// header is accepted (go-sdk's own client sends none).
func mismatchedName(header, method string, params json.RawMessage) string {
	if header == "" || !strings.HasPrefix(method, "tasks/") {
		return ""
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == header {
		return ""
	}
	return fmt.Sprintf("Mcp-Name header %q does not match params.taskId of %s", header, method)
}

// operations maps the request ids of a connection's SEP-1391 starts to their tokens, bounded so a
// long connection cannot grow it: the oldest are forgotten (their cancellation then only reaches
// the SDK, and the client can still use the token).
type operations struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	tokens  map[jsonrpc.ID]string
	order   []jsonrpc.ID
}

const maxRemembered = 1024

func newOperations() *operations {
	return &operations{pending: map[jsonrpc.ID]bool{}, tokens: map[jsonrpc.ID]string{}}
}

func (o *operations) expect(id jsonrpc.ID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) < maxRemembered {
		o.pending[id] = true
	}
}

func (o *operations) record(id jsonrpc.ID, result json.RawMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.pending[id] {
		return
	}
	delete(o.pending, id)
	var r struct {
		Operation *struct {
			Token string `json:"token"`
		} `json:"operation"`
	}
	if json.Unmarshal(result, &r) != nil || r.Operation == nil || r.Operation.Token == "" {
		return
	}
	o.tokens[id] = r.Operation.Token
	o.order = append(o.order, id)
	if len(o.order) > maxRemembered {
		delete(o.tokens, o.order[0])
		o.order = o.order[1:]
	}
}

func (o *operations) token(id jsonrpc.ID) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.tokens[id]
	return t, ok
}
