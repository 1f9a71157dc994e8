package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// StartRequest is one call of a mapped tool.
type StartRequest struct {
	Tool *mapping.Tool
	// Args are the call's arguments, as the client sent them.
	Args json.RawMessage
	// Answers are the answers to the tool's questions before the start (Gather), by key.
	Answers map[string]json.RawMessage
	// Key makes the start idempotent: the same key with the same arguments starts one execution
	// (the engine scopes it to the caller: one caller's key never names another's execution).
	Key string
	// TTL shortens the tool's ttl when set.
	TTL time.Duration
	// KeepAlive bounds how long the result stays readable after the execution ended.
	KeepAlive time.Duration
}

// prepare checks the arguments and turns them, with the answers to the tool's questions, into the
// engine input. Its error is Refused: nothing starts.
func prepare(req StartRequest) (json.RawMessage, error) {
	tool := req.Tool
	if err := tool.ValidateArguments(req.Args); err != nil {
		return nil, refusedf("Invalid arguments for %s: %v", tool.Name, err)
	}
	args, err := mapping.WithAnswers(req.Args, req.Answers)
	if err != nil {
		return nil, refusedf("%v", err)
	}
	input, err := tool.EngineInput(args)
	if err != nil {
		return nil, refusedf("%v", err)
	}
	return input, nil
}

// Start validates the arguments and starts one execution, as a task of the caller. A Refused
// error (bad arguments, input the engine refused) means nothing started.
func (s *Service) Start(ctx context.Context, req StartRequest) (*Task, error) {
	tool := req.Tool
	input, err := prepare(req)
	if err != nil {
		s.auditLine(ctx, "start", tool, adapters.Ref{}, "refused: invalid arguments")
		return nil, err
	}
	who := s.callers.current(ctx, tool)
	created := s.now().UTC().Truncate(time.Millisecond)
	ectx, e := s.engine(ctx, tool)
	ref, err := e.Start(ectx, tool.Target, adapters.StartRequest{Input: input, Key: req.Key, Caller: who}, pace.Pace{Created: created, Curve: tool})
	s.auditLine(ctx, "start", tool, ref, outcome(err))
	if err == nil {
		s.started(ctx, tool)
	}
	switch {
	case errors.Is(err, adapters.ErrInvalid):
		return nil, startRefused(tool, err)
	case errors.Is(err, adapters.ErrKeyConflict):
		return nil, &Error{Kind: Conflict, Message: fmt.Sprintf("Failed to start %s: this idempotency key was already used with other arguments", tool.Name), Err: err}
	case err != nil:
		return nil, engineError("Failed to start "+tool.Name, err)
	}
	if req.Key != "" {
		s.clientKeys.found(Principal(ctx), req.Key, tool.Name)
	}
	ttl := tool.TTL
	if req.TTL > 0 && (ttl == 0 || req.TTL < ttl) {
		ttl = req.TTL
	}
	claims := token.Claims{Tool: tool.Name, Ref: ref, Caller: who, Created: created, TTL: ttl, KeepAlive: req.KeepAlive}
	return &Task{ID: s.tokens.Issue(claims), Tool: tool, claims: claims,
		Status: adapters.Status{State: adapters.Working, Native: "STARTED", Message: "Started.", Started: claims.Created, Updated: claims.Created}}, nil
}

// Run starts one execution of a tool that may not run as a task and waits for its outcome, up to
// the end of ctx: it serves targets that cannot be described once started (Step Functions
// Express) as well. The task it returns has no id; it has ended, unless err says otherwise, and
// names the execution whenever one started (to cancel it when the caller gives up).
func (s *Service) Run(ctx context.Context, req StartRequest) (*Task, error) {
	tool := req.Tool
	input, err := prepare(req)
	if err != nil {
		return nil, err
	}
	ectx, e := s.engine(ctx, tool)
	ref, o, err := e.Run(ectx, tool.Target, adapters.StartRequest{Input: input}, pace.Pace{Created: s.now(), Curve: tool})
	s.auditLine(ctx, "run", tool, ref, outcome(err))
	if ref != (adapters.Ref{}) {
		s.started(ctx, tool)
	}
	t := &Task{Tool: tool, claims: token.Claims{Tool: tool.Name, Ref: ref}}
	if err != nil {
		return t, waitError("Failed to run "+tool.Name, tool, err)
	}
	t.end(o)
	return t, nil
}

// end records how t's execution ended.
func (t *Task) end(o adapters.Outcome) {
	t.Status.State, t.Status.Native = o.State, o.Native
	t.Result, t.Failure = settle(t.Tool, o)
}

// waitError is the error of a wait on an execution of tool (what failed, if the engine did): the
// context's own when it ended first.
func waitError(what string, tool *mapping.Tool, err error) error {
	switch {
	case errors.Is(err, adapters.ErrInvalid):
		return startRefused(tool, err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return engineError(what, err)
}

// startRefused is the error of a start the engine refused: the reason in the caller's words, which
// name the tool and nothing of the engine (the audit line has the engine's whole error).
func startRefused(tool *mapping.Tool, err error) *Error {
	return refusedf("Could not start %s: %s", tool.Name, driver.ReasonOf(err, "the engine refused the request as invalid"))
}

// Cancel asks the engine to stop t's execution; by says who asks, for the engine's records. Its
// error is Ended when the execution had already ended.
func (s *Service) Cancel(ctx context.Context, t *Task, by string) error {
	reason := fmt.Sprintf("cancelled through taskgate by %s (task of tool %s)", by, t.Tool.Name)
	ectx, e := s.engine(ctx, t.Tool)
	err := e.Cancel(ectx, t.Tool.Target, t.claims.Ref, reason)
	s.auditLine(ctx, "cancel", t.Tool, t.claims.Ref, outcome(err))
	if err != nil {
		return engineError("Failed to cancel the task", err)
	}
	return nil
}

// Abandon cancels the execution of a call whose caller (by) stopped waiting for it, even though
// ctx has ended; failures are only logged, there being no one to tell.
func (s *Service) Abandon(ctx context.Context, t *Task, by string) {
	ref := t.claims.Ref
	if ref == (adapters.Ref{}) {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer stop()
	reason := fmt.Sprintf("cancelled through taskgate: %s stopped waiting for %s", by, t.Tool.Name)
	ectx, e := s.engine(ctx, t.Tool)
	err := e.Cancel(ectx, t.Tool.Target, ref, reason)
	s.auditLine(ctx, "cancel", t.Tool, ref, outcome(err))
	if err != nil && !errors.Is(err, adapters.ErrEnded) {
		s.log.Warn("cancelling an abandoned call failed", "tool", t.Tool.Name, "ref", ref.String(), "error", err)
	}
}
