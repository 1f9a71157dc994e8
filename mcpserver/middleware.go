package mcpserver

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// middleware sees every request after the SDK decoded it. It reads what the caller speaks once,
// charges the request's engine calls to its caller's rate, answers tools/list and tools/call from
// the mapping (the SDK knows no tools), fits initialize to 2025-11-25 clients, and refuses the
// methods of undeclared capabilities. No request, however malformed, may end the process: a panic
// is answered -32603 and logged with its stack.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	serve := s.serveRequest(next)
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
		c := capsFromRequest(req)
		ctx, r := withRequest(ctx)
		r.caps = c
		r.observeDialect(method)
		if bucket := s.rates.limiter(tasks.Principal(ctx), method, s.now()); bucket != nil {
			ctx = tasks.Charging(ctx, bucket.pay)
		}
		ctx, cancel := withClient(ctx)
		defer cancel()
		defer func() { s.keepRefusal(ctx, c, err) }()
		switch {
		case method == "tools/list":
			return s.listTools(ctx, c), nil
		case method == "tools/call":
			p, ok := paramsOf(req).(*mcp.CallToolParamsRaw)
			if !ok || p.Name == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params with the tool's name"}
			}
			return s.callTool(ctx, c, p)
		case method == "initialize":
			res, err := next(ctx, method, req)
			if init, ok := res.(*mcp.InitializeResult); ok && err == nil {
				return legacyInitialize(init), nil
			}
			return res, err
		case undeclared[method]:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not served: taskgate declares no such capability"}
		case method == listenMethod && !transportsListen(req):
			return nil, errListenShape
		}
		return next(ctx, method, req)
	}
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
	"as one JSON-RPC request (no batch) of protocol version " + modernVersion + " (in the Mcp-Protocol-Version header and in _meta), " +
	"with Content-Type: application/json, an Accept header that names application/json and text/event-stream outright, and no Last-Event-ID"}
