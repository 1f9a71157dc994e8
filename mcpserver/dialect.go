package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
)

// A dialect is one way clients speak of tasks (docs/protocol.md): the tasks extension on
// 2026-07-28 (extension.go), tasks on 2025-11-25 (legacy.go), SEP-1391 operations
// (operations.go), the handle tools (handles.go) and the wait mode (wait.go). Each translates
// between its wire shapes and the task service, and nothing else.
type dialect interface {
	// takes reports whether a tools/call of tool by the caller c is the dialect's to serve.
	takes(c caps, tool *mapping.Tool) bool
	// call serves such a call, the answers to the tool's questions gathered.
	call(ctx context.Context, c caps, call toolCall) (mcp.Result, error)
	// speaks reports whether the dialect serves its task methods to the caller c.
	speaks(c caps) bool
	// methods are its task methods, by name.
	methods() map[string]method
	// words are its words for ids that lead nowhere.
	words() words
}

// newDialects are the dialects in the order they are asked whether they take a call or serve a
// method: the first that does serves it. A new dialect is a file with a type that implements
// dialect, and its place here.
func (s *Server) newDialects() []dialect {
	return []dialect{extension{s}, legacy{s}, operations{s}, waiting{s}, handles{s}}
}

// method serves one task method. Its errors are rendered in the dialect's words.
type method func(ctx context.Context, c caps, p *taskParams) (mcp.Result, error)

// taskParams are the params of every task method: each reads its own.
type taskParams struct {
	mcp.ParamsBase
	// TaskID names the task of tasks/*.
	TaskID string `json:"taskId"`
	// InputResponses of tasks/update are read only for the keys that are open: the others are
	// ignored, whatever they hold.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// Cursor of tasks/list says where to go on.
	Cursor string `json:"cursor,omitempty"`
	// Token names the operation of tools/async/*.
	Token string `json:"token"`
}

// words are a dialect's words for ids that lead nowhere.
type words struct{ notFound, expired string }

var (
	taskWords      = words{notFound: "Failed to retrieve task: Task not found", expired: "Failed to retrieve task: Task has expired"}
	operationWords = words{notFound: "Failed to retrieve operation: Operation not found", expired: "Failed to retrieve operation: Operation has expired"}
)

// served is one dialect's handler of a method.
type served struct {
	d dialect
	m method
}

// addTaskMethods has go-sdk pass every dialect's task methods to serveMethod.
func (s *Server) addTaskMethods() error {
	s.methods = map[string][]served{}
	for _, d := range s.dialects {
		for name, m := range d.methods() {
			s.methods[name] = append(s.methods[name], served{d, m})
		}
	}
	for name, handlers := range s.methods {
		err := mcp.AddReceivingCustomMethod(s.mcp, name, func(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (mcp.Result, error) {
			return s.serveMethod(ctx, handlers, p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// serveMethod serves a task method through the first of its dialects that speaks to the caller,
// below the middleware: go-sdk calls it for every task method, and the HTTP fast path
// (fastpath.go) for tasks/get.
func (s *Server) serveMethod(ctx context.Context, handlers []served, p *taskParams) (mcp.Result, error) {
	c := capsOf(ctx)
	if p == nil {
		p = &taskParams{}
	}
	for _, h := range handlers {
		if h.d.speaks(c) {
			res, err := h.m(ctx, c, p)
			if err != nil {
				return nil, s.rpcError(h.d.words(), err)
			}
			return res, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no task dialect of this client serves this method"}
}

// refused is a method a dialect does not have, answered -32601 with why.
func refused(why string) method {
	return func(context.Context, caps, *taskParams) (mcp.Result, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: why}
	}
}
