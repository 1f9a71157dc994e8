package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mcpserver/dialects"
	"github.com/taskgate/taskgate/tasks"
)

// undeclared are the methods of capabilities taskgate does not declare: go-sdk would answer them
// with empty lists, and a client must be told they do not exist.
var undeclared = map[string]bool{
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true,
}

// methodNames are the methods a Request names, the dialects' task methods among them; any other is
// "other", so that a client cannot make up names that metrics would keep.
func methodNames(taskMethods []string) map[string]string {
	names := map[string]string{}
	for _, m := range []string{"initialize", "ping", "tools/list", "tools/call", listenMethod, "server/discover", "logging/setLevel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/roots/list_changed"} {
		names[m] = m
	}
	for _, m := range taskMethods {
		names[m] = m
	}
	for m := range undeclared {
		names[m] = m
	}
	return names
}

// middleware sees every request after the SDK decoded it. It has the dialects read what the
// caller speaks, charges the request's engine calls to its caller's rate, refuses the methods of
// undeclared capabilities, and hands the request to the dialects (dialects.Router.Route), next
// serving what they do not. No request, however malformed, may end the process: a panic is
// answered -32603 and logged with its stack.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	serve := s.serveRequest(s.dialects.Route(next))
	if s.observer == nil {
		return serve
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return s.observed(ctx, method, func(ctx context.Context) (mcp.Result, error) { return serve(ctx, method, req) })
	}
}

func (s *Server) serveRequest(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic while serving a request", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the request could not be served"}
			}
		}()
		ctx, r := withRequest(ctx)
		o := originOf(req)
		ctx, dialect := s.dialects.Read(ctx, method, req, dialects.Via{Conn: s.conns.of(o), MaxWait: r.maxWait})
		if r.record != nil {
			r.record.Dialect = dialect
		}
		if bucket := s.rates.limiter(tasks.Principal(ctx), method, s.now()); bucket != nil {
			ctx = tasks.Charging(ctx, bucket.pay)
		}
		ctx, cancel := withClient(ctx)
		defer cancel()
		defer func() { s.keepRefusal(ctx, o, err) }()
		switch {
		case undeclared[method]:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not served: taskgate declares no such capability"}
		case method == listenMethod && !transportsListen(req):
			return nil, errListenShape
		}
		return next(ctx, method, req)
	}
}

// observed serves a request through serve, telling the observer of it.
func (s *Server) observed(ctx context.Context, method string, serve func(context.Context) (mcp.Result, error)) (res mcp.Result, err error) {
	ctx, r := withRequest(ctx)
	rec := &Request{Method: "other"}
	if name, ok := s.methodNames[method]; ok {
		rec.Method = name
	}
	r.record = rec
	ctx = s.observer.Request(ctx, rec)
	ctx, subject := tasks.Track(ctx)
	start := time.Now()
	defer func() {
		rec.Duration = time.Since(start)
		rec.Tool, rec.Engine, rec.Execution = subject.Get()
		rec.Outcome, rec.Code = outcomeOf(res, err)
		if r.answerFirst {
			r.answered = func() { s.observer.Answered(ctx, rec) }
			return
		}
		s.observer.Answered(ctx, rec)
	}()
	return serve(ctx)
}

// keepRefusal hands err, when it is a -32601 error, to the transport of the request (of origin o).
func (s *Server) keepRefusal(ctx context.Context, o origin, err error) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		return
	}
	if r := requestOf(ctx); r != nil && r.refusal != nil {
		r.refusal.set(rpcErr)
		return
	}
	if conn, ok := s.conns.get(o.conn); ok && o.request.IsValid() {
		conn.refusals.Store(o.request, rpcErr)
	}
}

// listen serves the listen req (request id) on out, until end closes or the dialects end it.
func (s *Server) listen(ctx context.Context, id jsonrpc.ID, req mcp.Request, out dialects.Stream, end <-chan struct{}) (mcp.Result, error) {
	p := req.GetParams().(*listenParams)
	members := p.members
	p.members = nil // what the listen keeps of its params is what the dialects read of them
	return s.dialects.Listen(ctx, id, members, out, end)
}

// transportsListen reports whether a subscriptions/listen is one the transports answer
// (listen.go), not one go-sdk decoded after the HTTP front passed it on for its shape. go-sdk's
// own listen follows no task, and taskgate declares none of the list changes it would follow, so
// that one is refused rather than left silent.
func transportsListen(req mcp.Request) bool {
	_, ok := req.GetParams().(*listenParams)
	return ok
}

var errListenShape = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "subscriptions/listen is answered over HTTP " +
	"as one JSON-RPC request (no batch) of protocol version " + dialects.ModernVersion + " (in the Mcp-Protocol-Version header and in _meta), " +
	"with Content-Type: application/json, an Accept header that names application/json and text/event-stream outright, and no Last-Event-ID"}
