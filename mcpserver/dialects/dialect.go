package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
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

// toolCall is one call of a mapped tool, with the answers to its questions once it has them.
type toolCall struct {
	tool    *mapping.Tool
	args    json.RawMessage
	answers map[string]json.RawMessage
}

// request is the call as the task service starts it.
func (c toolCall) request() tasks.StartRequest {
	return tasks.StartRequest{Tool: c.tool, Args: c.args, Answers: c.answers}
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

// refused is a method a dialect does not have, answered -32601 with why.
func refused(why string) method {
	return func(context.Context, caps, *taskParams) (mcp.Result, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: why}
	}
}

// codeHeaderMismatch is the extension's HeaderMismatch error.
const codeHeaderMismatch = -32020

// MismatchedName checks the routing header of a task method (header, Mcp-Name) against the task
// its params name: an intermediary routes by the header, taskgate acts on the body, and they must
// agree. A missing header is accepted (clients before 2026-07-28 send none).
func MismatchedName(header, method string, params map[string]json.RawMessage) *jsonrpc.Error {
	if header == "" || !strings.HasPrefix(method, "tasks/") {
		return nil
	}
	if id, ok := strictjson.String(params["taskId"]); ok && strings.TrimSpace(header) == id {
		return nil
	}
	return &jsonrpc.Error{Code: codeHeaderMismatch,
		Message: fmt.Sprintf("Header mismatch: Mcp-Name header %q does not match params.taskId of %s", header, method)}
}
