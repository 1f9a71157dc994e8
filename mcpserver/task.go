package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver/token"
)

// task is one task as read from its id and, when read, its engine: the dialects only render it.
type task struct {
	id     string
	tool   *mapping.Tool
	claims token.Claims
	status adapters.Status
	// result is the tool result once the execution ended with an output or an error.
	result *mcp.CallToolResult
	// failure is set instead of result when the ended execution cannot be turned into a result.
	failure *jsonrpc.Error
}

func (t *task) createdAt() time.Time {
	if !t.claims.Created.IsZero() {
		return t.claims.Created
	}
	return t.status.Started
}

func (t *task) updatedAt() time.Time {
	if t.status.Updated.After(t.createdAt()) {
		return t.status.Updated
	}
	return t.createdAt()
}

// ttlMs is the task's ttl in milliseconds, nil when unlimited.
func (t *task) ttlMs() *int64 {
	ttl := t.claims.TTL
	if t.claims.Tool == "" { // a native id carries no ttl: the mapping's applies
		ttl = t.tool.TTL
	}
	if ttl == 0 {
		return nil
	}
	ms := ttl.Milliseconds()
	return &ms
}

func (t *task) message() string {
	if t.status.Message != "" {
		return t.status.Message
	}
	switch t.status.State {
	case adapters.Submitted:
		return "Accepted; waiting for a worker to pick it up."
	case adapters.Working:
		return "Running (" + t.status.Native + ")."
	case adapters.Succeeded:
		return "Completed (" + t.status.Native + ")."
	case adapters.Failed:
		return "Ended with an error (" + t.status.Native + ")."
	case adapters.Cancelled:
		return "Cancelled (" + t.status.Native + ")."
	}
	return ""
}

// errTaskNotFound is the one answer for every id that does not lead to a task this caller may see:
// malformed, forged, of an unmapped target, of another caller, or gone from the engine.
func errTaskNotFound() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskNotFound}
}

func errTaskExpired() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msgTaskExpired}
}

const (
	msgTaskNotFound = "Failed to retrieve task: Task not found"
	msgTaskExpired  = "Failed to retrieve task: Task has expired"
)

// errEngine turns an engine failure into -32603. An unreachable or throttling engine is marked
// retryable: nothing changed, and the same call may succeed in a moment.
func errEngine(what string, err error) error {
	if !errors.Is(err, adapters.ErrUnavailable) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v", what, err)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: json.RawMessage(`{"retryable":true}`),
		Message: fmt.Sprintf("%s: the engine did not answer (%v); the task is unchanged, retry in a moment", what, err)}
}

// resolve checks an untrusted task id completely before any engine sees its reference: the id
// must open, name a mapped tool (or, for native ids, read through a tool's driver as a Ref that
// tool's engine owns), belong to that tool's target, and belong to the caller.
func (s *Server) resolve(id, caller string) (*task, error) {
	claims, err := s.tokens.Open(id, s.now())
	switch {
	case errors.Is(err, token.ErrExpired):
		return nil, errTaskExpired()
	case err != nil:
		return nil, errTaskNotFound()
	}
	var tool *mapping.Tool
	if claims.Tool != "" {
		t, ok := s.set.Tool(claims.Tool)
		if ok && s.engines[t.Engine].Owns(t.Target, claims.Ref) {
			tool = t
		}
	} else {
		for _, t := range s.set.Tools {
			if ref, err := t.ParseRef(id); err == nil && s.engines[t.Engine].Owns(t.Target, ref) {
				tool, claims.Ref = t, ref
				break
			}
		}
	}
	if tool == nil || claims.Caller != caller {
		return nil, errTaskNotFound()
	}
	return &task{id: id, tool: tool, claims: claims}, nil
}

// describe reads the engine state into t. A "not found" shortly after creation means not yet
// visible, not gone.
func (s *Server) describe(ctx context.Context, t *task) error {
	st, err := s.engines[t.tool.Engine].Describe(ctx, t.tool.Target, t.claims.Ref)
	if errors.Is(err, adapters.ErrNotFound) {
		if !t.claims.Created.IsZero() && s.now().Sub(t.claims.Created) < s.grace {
			t.status = adapters.Status{State: adapters.Submitted, Native: "NOT_YET_VISIBLE", Started: t.claims.Created, Updated: t.claims.Created}
			return nil
		}
		return errTaskNotFound()
	}
	if err != nil {
		return errEngine("Failed to retrieve task", err)
	}
	t.status = st
	return nil
}

// read resolves and describes a task and, once it has ended, fetches its result.
func (s *Server) read(ctx context.Context, id, caller string) (*task, error) {
	t, err := s.resolve(id, caller)
	if err != nil {
		return nil, err
	}
	if err := s.describe(ctx, t); err != nil {
		return nil, err
	}
	if err := s.fetchResult(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// fetchResult reads the outcome of an execution that ended with an output or an error.
func (s *Server) fetchResult(ctx context.Context, t *task) error {
	if t.status.State != adapters.Succeeded && t.status.State != adapters.Failed {
		return nil
	}
	o, err := s.engines[t.tool.Engine].Outcome(ctx, t.tool.Target, t.claims.Ref)
	if err != nil {
		return errEngine("Failed to retrieve task result", err)
	}
	s.settle(t, o)
	return nil
}

// settle turns an outcome into the task's tool result (or its protocol failure).
func (s *Server) settle(t *task, o adapters.Outcome) {
	res, err := toolResult(t.tool, o)
	if err != nil {
		t.failure = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		return
	}
	t.result = res
}

// startOptions are what a dialect adds to a start.
type startOptions struct {
	// key makes the start idempotent (already scoped to the caller).
	key    string
	caller string
	// ttl shortens the tool's ttl when set.
	ttl time.Duration
	// keepAlive bounds how long the result stays readable after the execution ended.
	keepAlive time.Duration
}

// start validates the arguments and starts one execution. A non-nil *mcp.CallToolResult is a tool
// error (bad arguments, an engine limit) for the caller to see: nothing was started.
func (s *Server) start(ctx context.Context, tool *mapping.Tool, args json.RawMessage, opts startOptions) (*task, *mcp.CallToolResult, error) {
	if err := tool.ValidateArguments(args); err != nil {
		return nil, toolError("Invalid arguments for %s: %v", tool.Name, err), nil
	}
	input, err := tool.EngineInput(args)
	if err != nil {
		return nil, toolError("%v", err), nil
	}
	e := s.engines[tool.Engine]
	ref, err := e.Start(ctx, tool.Target, adapters.StartRequest{Input: input, Key: opts.key, Caller: opts.caller})
	switch {
	case errors.Is(err, adapters.ErrInvalid):
		return nil, toolError("Could not start %s: %v", tool.Name, err), nil
	case errors.Is(err, adapters.ErrKeyConflict):
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to start %s: %v", tool.Name, err)}
	case err != nil:
		return nil, nil, errEngine("Failed to start "+tool.Name, err)
	}
	ttl := tool.TTL
	if opts.ttl > 0 && (ttl == 0 || opts.ttl < ttl) {
		ttl = opts.ttl
	}
	claims := token.Claims{Tool: tool.Name, Ref: ref, Caller: opts.caller, Created: s.now().UTC().Truncate(time.Millisecond),
		TTL: ttl, KeepAlive: opts.keepAlive}
	t := &task{id: s.tokens.Issue(claims), tool: tool, claims: claims,
		status: adapters.Status{State: adapters.Working, Native: "STARTED", Message: "Started.", Started: claims.Created, Updated: claims.Created}}
	s.log.Info("task started", "tool", tool.Name, "ref", ref.String())
	return t, nil, nil
}

// cancel asks the engine to stop the task's execution. ErrEnded is returned as is, for dialects
// that report it.
func (s *Server) cancel(ctx context.Context, t *task, who string) error {
	reason := fmt.Sprintf("cancelled through taskgate by %s (task of tool %s)", who, t.tool.Name)
	err := s.engines[t.tool.Engine].Cancel(ctx, t.tool.Target, t.claims.Ref, reason)
	switch {
	case err == nil, errors.Is(err, adapters.ErrEnded):
		return err
	case errors.Is(err, adapters.ErrNotFound):
		return errTaskNotFound()
	default:
		return errEngine("Failed to cancel task", err)
	}
}

func isEnded(err error) bool { return errors.Is(err, adapters.ErrEnded) }
