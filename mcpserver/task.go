package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// task is one task as read from its id and, when read, its engine: the dialects only render it.
type task struct {
	id     string
	tool   *mapping.Tool
	claims token.Claims
	status adapters.Status
	// result is the tool result once the execution ended with an output or an error.
	result *toolOutput
	// failure is set instead of result when the execution ended in a protocol error: a failure
	// type the tool lists under protocolErrors, or an output that cannot become a result.
	failure *jsonrpc.Error
}

// toolOutput is what a tool call returns, before it is put on the wire for one protocol version.
type toolOutput struct {
	text       string
	structured json.RawMessage
	isError    bool
}

// wire renders the output for a client of protocol 2026-07-28 (modern) or an earlier one, where
// structuredContent must be an object: other values are left to the text.
func (o *toolOutput) wire(modern bool) *callToolResult {
	r := &callToolResult{Content: []textContent{{Text: o.text}}, IsError: o.isError}
	if o.structured != nil && (modern || isObject(o.structured)) {
		r.StructuredContent = o.structured
	}
	return r
}

func toolError(format string, args ...any) *toolOutput {
	return &toolOutput{text: fmt.Sprintf(format, args...), isError: true}
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// failed reports whether the task ended with an error of either kind (an execution that failed
// and whose outcome was not read is failed too).
func (t *task) failed() bool {
	return t.failure != nil || (t.result != nil && t.result.isError) || (t.result == nil && t.status.State == adapters.Failed)
}

func (t *task) createdAt() time.Time {
	if !t.claims.Created.IsZero() {
		return t.claims.Created
	}
	return t.status.Started
}

// updatedAt is the time as of which the status is true: a running execution's reading time
// (readings are reused, and may be older under load), else the engine's last change.
func (t *task) updatedAt() time.Time {
	at := t.status.Updated
	if !t.status.State.Terminal() && t.status.ReadAt.After(at) {
		at = t.status.ReadAt
	}
	if at.After(t.createdAt()) {
		return at
	}
	return t.createdAt()
}

// pollInterval is the interval suggested to the task's pollers at its present age, or longer,
// until the engine will next be read for it (which grows with the load on the read budget).
func (t *task) pollInterval() time.Duration {
	d := t.tool.PollIntervalAt(time.Since(t.createdAt()))
	if next := time.Until(t.status.NextReadAt); !t.status.State.Terminal() && next > d {
		d = next.Round(time.Millisecond)
	}
	return d
}

// paced is ctx telling the engine decorators how the task is polled (adapters/pace).
func (t *task) paced(ctx context.Context) context.Context {
	return pacedTool(ctx, t.tool, t.claims.Created)
}

// pacedTool is ctx telling the engine decorators how tasks of tool created at created (zero:
// unknown) are polled.
func pacedTool(ctx context.Context, tool *mapping.Tool, created time.Time) context.Context {
	return pace.With(ctx, pace.Pace{Created: created, Curve: tool.PollIntervalAt, MaxStale: tool.MaxStaleness})
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

// message is the task's status message: the engine's, or words for its state. While the task
// waits on answers it is the questions themselves, whatever else the engine says (its progress, or
// only the questions' keys): a client that cannot read inputRequests (stateless HTTP before
// 2026-07-28, the handle tools) sees the question there.
func (t *task) message() string {
	if t.status.State == adapters.InputRequired && len(t.status.Inputs) > 0 {
		return awaiting(t.status.Inputs)
	}
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

// awaiting says which questions a task waits on, each with its text.
func awaiting(qs []adapters.Question) string {
	if len(qs) == 1 {
		return fmt.Sprintf("waiting for an answer to %q: %s", qs[0].Key, qs[0].Message)
	}
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = fmt.Sprintf("%q: %s", q.Key, q.Message)
	}
	return fmt.Sprintf("waiting for answers to %d questions: %s", len(qs), strings.Join(parts, "; "))
}

// resolve checks an untrusted task id completely before any engine sees its reference: the id
// must open, name a mapped tool (or, for native ids, read through a tool's driver as a Ref that
// tool's engine owns), belong to that tool's target, and belong to the caller. An id of another
// caller is not found, like any other.
func (s *Server) resolve(ctx context.Context, id string) (*task, error) {
	if id == "" {
		return nil, invalid("Failed to retrieve task: taskId is required")
	}
	claims, err := s.tokens.Open(id, s.now())
	switch {
	case errors.Is(err, token.ErrExpired):
		return nil, &taskError{kind: errExpired}
	case err != nil:
		return nil, &taskError{kind: errNotFound}
	}
	caller := callerOf(ctx)
	var tool *mapping.Tool
	if claims.Tool != "" {
		t, ok := s.set.Tool(claims.Tool)
		if ok && s.engines[t.Engine].Owns(t.Target, claims.Ref, caller) {
			tool = t
		}
	} else {
		for _, t := range s.set.Tools {
			if ref, err := t.ParseRef(id); err == nil && s.engines[t.Engine].Owns(t.Target, ref, caller) {
				tool, claims.Ref = t, ref
				break
			}
		}
	}
	if tool == nil || (claims.Tool != "" && claims.Caller != caller) {
		return nil, &taskError{kind: errNotFound}
	}
	observeTask(ctx, tool, claims.Ref)
	return &task{id: id, tool: tool, claims: claims}, nil
}

// describe reads the engine state into t. A "not found" shortly after creation means not yet
// visible, not gone.
func (s *Server) describe(ctx context.Context, t *task) error {
	st, err := s.engines[t.tool.Engine].Describe(t.paced(ctx), t.tool.Target, t.claims.Ref)
	if errors.Is(err, adapters.ErrNotFound) && !t.claims.Created.IsZero() && s.now().Sub(t.claims.Created) < s.grace {
		t.status = adapters.Status{State: adapters.Submitted, Native: "NOT_YET_VISIBLE", Started: t.claims.Created, Updated: t.claims.Created}
		return nil
	}
	if err != nil {
		return engineError("Failed to retrieve the task", err)
	}
	t.status = st
	return nil
}

// read resolves and describes a task and, once it has ended, fetches its result.
func (s *Server) read(ctx context.Context, id string) (*task, error) {
	t, err := s.resolve(ctx, id)
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
	o, err := s.engines[t.tool.Engine].Outcome(t.paced(ctx), t.tool.Target, t.claims.Ref)
	if err != nil {
		return engineError("Failed to retrieve the task result", err)
	}
	t.result, t.failure = settle(t.tool, o)
	return nil
}

// settle turns how an execution ended into the tool's result, or into a protocol error when the
// failure type is one of the tool's protocolErrors or the output cannot become a result.
func settle(tool *mapping.Tool, o adapters.Outcome) (*toolOutput, *jsonrpc.Error) {
	switch o.State {
	case adapters.Succeeded:
		structured, err := tool.StructuredResult(o.Output)
		if err == nil {
			var text string
			if text, err = tool.ResultText(structured); err == nil {
				out := &toolOutput{text: text}
				if !isJSONNull(structured) {
					out.structured = structured
				}
				return out, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("%s succeeded, but its output could not be turned into the tool result: %v", tool.Name, err)}
	case adapters.Failed:
		if slices.Contains(tool.ProtocolErrors, o.Error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: failureText(o)}
		}
		return &toolOutput{text: failureText(o), isError: true}, nil
	case adapters.Cancelled:
		return toolError("The workflow was cancelled (%s)%s", o.Native, prefixed(": ", o.Cause)), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the workflow is %s (%s) and has no result", o.State, o.Native)}
}

func failureText(o adapters.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The workflow ended %s", o.Native)
	if o.Error != "" {
		fmt.Fprintf(&b, " with error %s", o.Error)
	}
	b.WriteString(prefixed(": ", o.Cause))
	return b.String()
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func isJSONNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}

// startOptions are what a dialect adds to a start.
type startOptions struct {
	// key makes the start idempotent (already scoped to the caller).
	key string
	// ttl shortens the tool's ttl when set.
	ttl time.Duration
	// keepAlive bounds how long the result stays readable after the execution ended.
	keepAlive time.Duration
}

// prepare checks the arguments and turns them, with the answers to the tool's questions, into the
// engine input. A *toolOutput is a tool error for the caller to see: nothing starts.
func prepare(tool *mapping.Tool, args json.RawMessage, answers map[string]json.RawMessage) (json.RawMessage, *toolOutput) {
	if err := tool.ValidateArguments(args); err != nil {
		return nil, toolError("Invalid arguments for %s: %v", tool.Name, err)
	}
	args, err := mapping.WithAnswers(args, answers)
	if err != nil {
		return nil, toolError("%v", err)
	}
	input, err := tool.EngineInput(args)
	if err != nil {
		return nil, toolError("%v", err)
	}
	return input, nil
}

// start validates the arguments and starts one execution. A non-nil *toolOutput is a tool error
// (bad arguments, an engine limit) for the caller to see: nothing was started.
func (s *Server) start(ctx context.Context, call toolCall, opts startOptions) (*task, *toolOutput, error) {
	tool := call.tool
	input, toolErr := prepare(tool, call.args, call.answers)
	if toolErr != nil {
		s.auditLine(ctx, "start", tool, adapters.Ref{}, "refused: invalid arguments")
		return nil, toolErr, nil
	}
	caller := callerOf(ctx)
	created := s.now().UTC().Truncate(time.Millisecond)
	ref, err := s.engines[tool.Engine].Start(pacedTool(ctx, tool, created), tool.Target, adapters.StartRequest{Input: input, Key: opts.key, Caller: caller})
	s.auditLine(ctx, "start", tool, ref, outcome(err))
	if err == nil {
		s.started(ctx, tool)
	}
	switch {
	case errors.Is(err, adapters.ErrInvalid):
		return nil, toolError("Could not start %s: %v", tool.Name, err), nil
	case errors.Is(err, adapters.ErrKeyConflict):
		return nil, nil, &taskError{kind: errConflict, msg: fmt.Sprintf("Failed to start %s: this idempotency key was already used with other arguments", tool.Name), cause: err}
	case err != nil:
		return nil, nil, engineError("Failed to start "+tool.Name, err)
	}
	ttl := tool.TTL
	if opts.ttl > 0 && (ttl == 0 || opts.ttl < ttl) {
		ttl = opts.ttl
	}
	claims := token.Claims{Tool: tool.Name, Ref: ref, Caller: caller, Created: created, TTL: ttl, KeepAlive: opts.keepAlive}
	t := &task{id: s.tokens.Issue(claims), tool: tool, claims: claims,
		status: adapters.Status{State: adapters.Working, Native: "STARTED", Message: "Started.", Started: claims.Created, Updated: claims.Created}}
	return t, nil, nil
}

// started counts an execution that a call started.
func (s *Server) started(ctx context.Context, tool *mapping.Tool) {
	if s.observer != nil {
		s.observer.Started(ctx, tool.Name)
	}
}

// cancel asks the engine to stop the task's execution; errEnded when it had already ended.
func (s *Server) cancel(ctx context.Context, t *task, who string) error {
	reason := fmt.Sprintf("cancelled through taskgate by %s (task of tool %s)", who, t.tool.Name)
	err := s.engines[t.tool.Engine].Cancel(ctx, t.tool.Target, t.claims.Ref, reason)
	s.auditLine(ctx, "cancel", t.tool, t.claims.Ref, outcome(err))
	if err != nil {
		return engineError("Failed to cancel the task", err)
	}
	return nil
}

// auditLine records one start, cancel or answer: who, which tool, which execution, and how it
// went. Task ids are bearer handles and never appear in it.
func (s *Server) auditLine(ctx context.Context, event string, tool *mapping.Tool, ref adapters.Ref, outcome string) {
	observeTask(ctx, tool, ref)
	s.audit.Info("audit", "event", event, "principal", principalOf(ctx), "tool", tool.Name, "engine", tool.Engine,
		"execution", ref.String(), "outcome", outcome)
}

// outcome is an engine call's result in an audit line.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, adapters.ErrEnded):
		return "already ended"
	case errors.Is(err, adapters.ErrKeyConflict):
		return "refused: idempotency key conflict"
	case errors.Is(err, adapters.ErrInvalid):
		return "refused: " + err.Error()
	}
	return "failed: " + err.Error()
}
