package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mcpserver/dialects"
)

// Observer is told of every request, for metrics, traces and logs (package observe is one). Its
// methods run on every request: they must be cheap and must not block. (What the task service
// does, starts and ends, it tells a tasks.Observer.)
type Observer interface {
	// Request is called as a request arrives, before it is served, with what is known of it yet;
	// the context it returns serves the request.
	Request(ctx context.Context, r *Request) context.Context
	// Answered is called once the request is answered, with r complete.
	Answered(ctx context.Context, r *Request)
}

// Request is one request as an Observer sees it. Nothing in it is a task id or a credential, and
// every field but Execution and Duration takes one of few values.
type Request struct {
	// Method is the JSON-RPC method if taskgate knows it, else "other".
	Method string
	// Dialect is how the caller speaks of tasks: "extension" (the tasks extension, 2026-07-28),
	// "2025-11-25" (tasks on 2025-11-25), "sep1391" (operations), or "none".
	Dialect string
	// Tool and Engine are the mapped tool the request is about, and its engine block; empty when
	// none (a handle tool's request is about the task its handle names).
	Tool, Engine string
	// Execution is the engine's own id of the execution the request started or read.
	Execution adapters.Ref
	// Outcome is "ok", "tool_error" (a result with isError), "cancelled" (the client went away),
	// or the error: "invalid_params" (including unknown and expired tasks), "invalid_request",
	// "method_not_found", "missing_capability", "unavailable" (an engine did not answer: a
	// retryable -32603), "internal_error" or "error".
	Outcome string
	// Code is the JSON-RPC error code; 0 when none.
	Code int64
	// Duration is how long the request took to answer.
	Duration time.Duration
}

// outcomeOf is how a request went (Request.Outcome) and its JSON-RPC error code.
func outcomeOf(res mcp.Result, err error) (string, int64) {
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		if dialects.IsToolError(res) {
			return "tool_error", 0
		}
		return "ok", 0
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "cancelled", 0
	case !errors.As(err, &rpcErr):
		return "error", 0
	}
	switch rpcErr.Code {
	case jsonrpc.CodeInvalidParams:
		return "invalid_params", rpcErr.Code
	case jsonrpc.CodeInvalidRequest:
		return "invalid_request", rpcErr.Code
	case jsonrpc.CodeMethodNotFound:
		return "method_not_found", rpcErr.Code
	case mcp.CodeMissingRequiredClientCapabilities:
		return "missing_capability", rpcErr.Code
	case jsonrpc.CodeInternalError:
		var data struct {
			Retryable bool `json:"retryable"`
		}
		if json.Unmarshal(rpcErr.Data, &data) == nil && data.Retryable {
			return "unavailable", rpcErr.Code
		}
		return "internal_error", rpcErr.Code
	}
	return "error", rpcErr.Code
}
