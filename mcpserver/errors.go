package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/adapters"
)

// errKind is what went wrong with a request about a task, whatever the dialect calls it.
type errKind int

const (
	// errNotFound: the id leads to no task this caller may see (malformed, forged, of an unmapped
	// target, of another caller, or gone from the engine).
	errNotFound errKind = iota + 1
	// errExpired: the id is past its ttl, or the result past its keepAlive.
	errExpired
	// errInvalid: the request itself is wrong; the message says how.
	errInvalid
	// errConflict: an idempotency key already names an execution started with other input.
	errConflict
	// errEnded: cancel of an execution that had already ended.
	errEnded
	// errUnavailable: the engine did not answer or throttled; nothing changed, a retry may work.
	errUnavailable
	// errInternal: the engine failed in a way a retry does not mend.
	errInternal
)

// taskError is the one error type of the shared task code. Each dialect renders it at its edge.
type taskError struct {
	kind errKind
	// msg is what the caller did wrong (errInvalid, errConflict, errEnded), or what failed
	// (errUnavailable, errInternal: "Failed to retrieve task").
	msg string
	// cause is the engine's own error: logged with an error id, never sent to the client.
	cause error
	// retryAfter, for errUnavailable, is when a retry may succeed, when the engine or the read
	// budget said.
	retryAfter time.Duration
}

func (e *taskError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *taskError) Unwrap() error { return e.cause }

func invalid(format string, args ...any) *taskError {
	return &taskError{kind: errInvalid, msg: fmt.Sprintf(format, args...)}
}

func kindOf(err error) errKind {
	var te *taskError
	if errors.As(err, &te) {
		return te.kind
	}
	return 0
}

// rpcError renders err as the JSON-RPC error a client of dialect d gets. Engine details go to the
// log under an error id that the client sees, so an operator can find them and a client learns
// nothing about the engine's addresses or ids.
func (s *Server) rpcError(d dialect, err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	var te *taskError
	if !errors.As(err, &te) {
		te = &taskError{kind: errInternal, msg: "Internal error", cause: err}
	}
	switch te.kind {
	case errNotFound:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: d.notFound()}
	case errExpired:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: d.expired()}
	case errInvalid, errConflict, errEnded:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: te.msg}
	}
	id := s.report(te)
	data := map[string]any{"errorId": id}
	msg := fmt.Sprintf("%s (error id %s)", te.msg, id)
	switch {
	case te.kind == errUnavailable && te.retryAfter > 0:
		data["retryable"], data["retryAfterMs"] = true, te.retryAfter.Milliseconds()
		msg = fmt.Sprintf("%s: the engine is being read as fast as taskgate may; the task is unchanged, retry in %s (error id %s)",
			te.msg, te.retryAfter.Round(100*time.Millisecond), id)
	case te.kind == errUnavailable:
		data["retryable"] = true
		msg = fmt.Sprintf("%s: the engine did not answer; the task is unchanged, retry in a moment (error id %s)", te.msg, id)
	}
	raw, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: raw}
}

// report logs an engine failure under a new error id, for the client to quote.
func (s *Server) report(te *taskError) string {
	id := uuid.NewString()[:8]
	s.log.Error(te.msg, "errorId", id, "error", te.cause)
	return id
}

// engineError classifies an engine failure for the caller; what says what failed.
func engineError(what string, err error) *taskError {
	switch {
	case errors.Is(err, adapters.ErrNotFound):
		return &taskError{kind: errNotFound, cause: err}
	case errors.Is(err, adapters.ErrEnded):
		return &taskError{kind: errEnded, msg: what + ": the task had already ended", cause: err}
	case errors.Is(err, adapters.ErrUnavailable):
		te := &taskError{kind: errUnavailable, msg: what, cause: err}
		var th *adapters.Throttle
		if errors.As(err, &th) {
			te.retryAfter = max(th.RetryAfter, time.Millisecond)
		}
		return te
	}
	return &taskError{kind: errInternal, msg: what, cause: err}
}
