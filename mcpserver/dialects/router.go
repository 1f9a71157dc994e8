package dialects

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// New builds a router. It makes no engine call.
func New(cfg Config) (*Router, error) {
	r := &Router{tasks: cfg.Tasks, log: cfg.Logger, now: time.Now, noTask: cfg.NoTaskClients,
		followed: cfg.Followed, maxListen: cfg.MaxListen, methods: map[string][]served{}}
	if r.noTask == "" {
		r.noTask = NoTaskHandles
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range cfg.Tasks.Mapping().Tools {
		if isHandleTool(t.Name) {
			return nil, fmt.Errorf("tool %q (%s): the name is taken by taskgate's handle tools; rename it", t.Name, t.Source)
		}
	}
	r.dialects = r.newDialects()
	for _, d := range r.dialects {
		for name, m := range d.methods() {
			r.methods[name] = append(r.methods[name], served{d, m})
		}
	}
	return r, nil
}

// Declare adds what the dialects declare to a server's capabilities.
func (r *Router) Declare(c *mcp.ServerCapabilities) {
	c.AddExtension(extensionTasks, nil)
	c.Experimental = map[string]any{experimentalSEP1391: map[string]any{}}
}

// Methods are the task methods the dialects serve (AddMethods).
func (r *Router) Methods() []string {
	names := make([]string, 0, len(r.methods))
	for name := range r.methods {
		names = append(names, name)
	}
	return names
}

// Route answers, in a context Read made, tools/list and tools/call from the mapping (go-sdk knows
// no tools) and initialize fitted to 2025-11-25 clients; next serves every other request.
func (r *Router) Route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			return r.listTools(ctx, capsOf(ctx)), nil
		case "tools/call":
			p, ok := ParamsOf(req).(*mcp.CallToolParamsRaw)
			if !ok || p.Name == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params with the tool's name"}
			}
			return r.callTool(ctx, capsOf(ctx), p)
		case "initialize":
			res, err := next(ctx, method, req)
			if init, ok := res.(*mcp.InitializeResult); ok && err == nil {
				return legacyInitialize(init), nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// newDialects are the dialects in the order they are asked whether they take a call or serve a
// method: the first that does serves it. A new dialect is a file with a type that implements
// dialect, and its place here.
func (r *Router) newDialects() []dialect {
	return []dialect{extension{r}, legacy{r}, operations{r}, waiting{r}, handles{r}}
}

// Read reads what the caller of req speaks, and gives the context that serves the request with
// it, and how the caller speaks of tasks (for an observer: "extension", "2025-11-25", "sep1391"
// or "none").
func (r *Router) Read(ctx context.Context, method string, req mcp.Request, via Via) (context.Context, string) {
	c := capsFromRequest(req)
	c.Via = via
	return context.WithValue(ctx, capsKey{}, &c), c.dialectName(method)
}

// AddMethods has srv pass every dialect's task methods to serveMethod.
func (r *Router) AddMethods(srv *mcp.Server) error {
	for name, handlers := range r.methods {
		err := mcp.AddReceivingCustomMethod(srv, name, func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (mcp.Result, error) {
			return r.serveMethod(ctx, handlers, p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// TaskMethod serves a task method of a request read as go-sdk reads those it passes to
// serveMethod (ReadFast reads them so).
func (r *Router) TaskMethod(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	p, _ := req.GetParams().(*taskParams)
	return r.serveMethod(ctx, r.methods[method], p)
}

// serveMethod serves a task method through the first of its dialects that speaks to the caller,
// below the transports' middleware: go-sdk calls it for every task method, and the HTTP fast path
// through TaskMethod.
func (r *Router) serveMethod(ctx context.Context, handlers []served, p *taskParams) (mcp.Result, error) {
	c := capsOf(ctx)
	if p == nil {
		p = &taskParams{}
	}
	for _, h := range handlers {
		if h.d.speaks(c) {
			res, err := h.m(ctx, c, p)
			if err != nil {
				return nil, r.rpcError(h.d.words(), err)
			}
			return res, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no task dialect of this client serves this method"}
}
