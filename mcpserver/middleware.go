package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// answers tools/list and tools/call from the mapping (the SDK knows no tools), fits initialize to
// 2025-11-25 clients, and refuses the methods of undeclared capabilities. No request, however
// malformed, may end the process: a panic is answered -32603 and logged with its stack.
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
		observeCaps(ctx, c, method)
		ctx = charged(ctx, s.rates.limiter(principalOf(ctx), method, s.now()), s.now)
		ctx, cancel := withClient(context.WithValue(ctx, capsKey{}, c))
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
		}
		return next(ctx, method, req)
	}
}

// legacyInitialize replaces the tasks extension, which the SDK shows to every protocol, with the
// 2025-11-25 tasks capability (tasks/list included: a caller lists only its own tasks).
func legacyInitialize(res *mcp.InitializeResult) mcp.Result {
	out := &legacyInitializeResult{InitializeResult: res}
	if res.Capabilities != nil {
		out.Capabilities.ServerCapabilities = *res.Capabilities
	}
	ext := maps.Clone(out.Capabilities.Extensions)
	delete(ext, extensionTasks)
	if len(ext) == 0 {
		ext = nil
	}
	out.Capabilities.Extensions = ext
	return out
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
