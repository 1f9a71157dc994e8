package dialects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// rpcError renders err as the JSON-RPC error a client of a dialect with words w gets. Engine
// details go to the log under an error id that the client sees, so an operator can find them and
// a client learns nothing about the engine's addresses or ids.
func (r *Router) rpcError(w words, err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	var te *tasks.Error
	if !errors.As(err, &te) {
		te = &tasks.Error{Kind: tasks.Internal, Message: "Internal error", Err: err}
	}
	switch te.Kind {
	case tasks.NotFound:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: w.notFound}
	case tasks.Expired:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: w.expired}
	case tasks.Invalid, tasks.Refused, tasks.Conflict, tasks.Ended:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: te.Message}
	}
	id := r.report(te)
	data := map[string]any{"errorId": id}
	msg := fmt.Sprintf("%s (error id %s)", te.Message, id)
	switch {
	case te.Kind == tasks.Unavailable && te.RetryAfter > 0:
		data["retryable"], data["retryAfterMs"] = true, te.RetryAfter.Milliseconds()
		msg = fmt.Sprintf("%s: the engine is being read as fast as taskgate may; the task is unchanged, retry in %s (error id %s)",
			te.Message, te.RetryAfter.Round(100*time.Millisecond), id)
	case te.Kind == tasks.Unavailable:
		data["retryable"] = true
		msg = fmt.Sprintf("%s: the engine did not answer; the task is unchanged, retry in a moment (error id %s)", te.Message, id)
	}
	raw, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: raw}
}

// report logs an engine failure under a new error id, for the client to quote: an error when a
// retry will not mend it, a warning when the engine did not answer, and only information when
// the engine or the read budget said when to retry, which under load is routine (the soak logged
// 28,000 such errors an hour; taskgate_engine_read_refusals_total and _throttles_total count them).
func (r *Router) report(te *tasks.Error) string {
	id := uuid.NewString()[:8]
	level := slog.LevelError
	switch {
	case te.Kind == tasks.Unavailable && te.RetryAfter > 0:
		level = slog.LevelInfo
	case te.Kind == tasks.Unavailable:
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, te.Message, "errorId", id, "error", te.Err)
	return id
}

// failureError is a task's protocol failure as the JSON-RPC error every dialect reports.
func failureError(f *tasks.Failure) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: f.Message}
}

// ErrNotPermitted is the answer to a call of a tool the caller sees but lacks scopes for.
func ErrNotPermitted(ctx context.Context, tool *mapping.Tool, missing []string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: tasks.NotPermitted(ctx, tool, missing).Message}
}

// refusal is why the service refused to start something, when err says it did (tasks.Refused).
func refusal(err error) (string, bool) {
	var te *tasks.Error
	if errors.As(err, &te) && te.Kind == tasks.Refused {
		return te.Message, true
	}
	return "", false
}

// toolAnswer is the answer of a call that started nothing: a refusal as a tool error the model
// reads, any other error as an error of the request, in words w.
func (r *Router) toolAnswer(c caps, w words, err error) (mcp.Result, error) {
	if why, ok := refusal(err); ok {
		return wireResult(tasks.ToolError("%s", why), c.modern), nil
	}
	return nil, r.rpcError(w, err)
}
