package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/lru"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

// SEP-1391 long-running operations (docs/protocol.md, "SEP-1391 operations").

type operationParams struct {
	mcp.ParamsBase
	Token string `json:"token"`
}

// maxClientToken bounds client-chosen operation tokens.
const maxClientToken = 256

// unknownFor is how long a client token that named no operation answers "not found" without asking
// the engines again: a token that opens as no task id costs one engine call per tool that may run
// as a task, and repeating it must cost nothing.
const unknownFor = 30 * time.Second

// unknownTokens are, per caller, the client tokens that named no operation, until when (a shortcut
// only). Each caller keeps its own few, so that one caller's misses cannot push out another's,
// and the callers kept are few too: 16,384 tokens at most in all.
type unknownTokens struct {
	callers *lru.Cache[*lru.Cache[time.Time]]
}

const unknownCallers, unknownPerCaller = 128, 128

func newUnknownTokens() unknownTokens {
	return unknownTokens{callers: lru.New[*lru.Cache[time.Time]](unknownCallers)}
}

// until is when caller's token stops being known as unknown.
func (u unknownTokens) until(caller, token string) (time.Time, bool) {
	if tokens, ok := u.callers.Get(caller); ok {
		return tokens.Get(token)
	}
	return time.Time{}, false
}

func (u unknownTokens) remember(caller, token string, until time.Time) {
	var tokens *lru.Cache[time.Time]
	u.callers.Update(caller, func(c **lru.Cache[time.Time]) {
		if *c == nil {
			*c = lru.New[time.Time](unknownPerCaller)
		}
		tokens = *c
	})
	tokens.Update(token, func(t *time.Time) { *t = until })
}

func (u unknownTokens) forget(caller, token string) {
	if tokens, ok := u.callers.Get(caller); ok {
		tokens.DeleteIf(token, func(time.Time) bool { return true })
	}
}

func (s *Server) addOperationMethods() error {
	for method, h := range map[string]func(context.Context, caps, string, *task) (mcp.Result, error){
		"tools/async/status": s.operationStatus,
		"tools/async/result": s.operationResult,
	} {
		err := mcp.AddReceivingCustomMethod(s.mcp, method, func(ctx context.Context, _ *mcp.ServerSession, p *operationParams) (mcp.Result, error) {
			var tok string
			if p != nil {
				tok = p.Token
			}
			t, err := s.readOperation(ctx, tok)
			if err == nil {
				var res mcp.Result
				if res, err = h(ctx, capsOf(ctx), tok, t); err == nil {
					return res, nil
				}
			}
			return nil, s.rpcError(operations{}, err)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// startOperation starts an operation; a client token makes the start idempotent.
func (s *Server) startOperation(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	tool := call.tool
	var op struct {
		Token     string   `json:"token"`
		KeepAlive *float64 `json:"keepAlive"`
	}
	if c.operation != nil && json.Unmarshal(c.operation, &op) != nil {
		return nil, s.rpcError(operations{}, invalid(`operation must be an object like {"token": "...", "keepAlive": 3600}`))
	}
	if len(op.Token) > maxClientToken {
		return nil, s.rpcError(operations{}, invalid("operation.token is longer than %d characters", maxClientToken))
	}
	opts := startOptions{}
	// The engine scopes the key to the caller: one caller's token never names another's execution.
	opts.key = op.Token
	if op.KeepAlive != nil {
		if *op.KeepAlive <= 0 || *op.KeepAlive > math.MaxInt32 {
			return nil, s.rpcError(operations{}, invalid("operation.keepAlive must be a positive number of seconds"))
		}
		opts.keepAlive = time.Duration(*op.KeepAlive * float64(time.Second))
	}
	t, toolErr, err := s.start(ctx, call, opts)
	if err != nil || toolErr != nil {
		return s.toolAnswer(c, operations{}, toolErr, err)
	}
	if opts.key != "" {
		s.unknownTokens.forget(callerOf(ctx), opts.key)
	}
	started := &toolOutput{text: fmt.Sprintf("Started %s. Poll tools/async/status with the operation token; read the result with tools/async/result.", tool.Name)}
	return &operationStarted{callToolResult: *started.wire(c.modern), Operation: operationInfo{
		Token:         t.id,
		Status:        "working",
		KeepAlive:     s.keepAliveSeconds(t),
		PollFrequency: math.Max(1, math.Round(t.pollInterval().Seconds())),
	}}, nil
}

// keepAliveSeconds is how long the result stays readable after the operation ends: the engine's
// retention, shortened by the client's wish and by the id's own ttl; nil when none of them is known.
func (s *Server) keepAliveSeconds(t *task) *int64 {
	var k time.Duration
	if r, ok := s.retention.Load(t.tool.Name); ok {
		k = r.(time.Duration)
	}
	for _, bound := range []time.Duration{t.claims.KeepAlive, t.claims.TTL} {
		if bound > 0 && (k == 0 || bound < k) {
			k = bound
		}
	}
	if k == 0 {
		return nil
	}
	secs := int64(k.Seconds())
	return &secs
}

// readOperation reads an operation by the token the server returned or by the client's own token.
func (s *Server) readOperation(ctx context.Context, tok string) (*task, error) {
	if tok == "" {
		return nil, invalid("Failed to retrieve operation: token is required")
	}
	t, err := s.read(ctx, tok)
	if err == nil {
		if t.status.State.Terminal() && t.claims.KeepAlive > 0 && s.now().After(t.status.Updated.Add(t.claims.KeepAlive)) {
			return nil, &taskError{kind: errExpired}
		}
		return t, nil
	}
	if _, openErr := s.tokens.Open(tok, s.now()); openErr == nil || errors.Is(openErr, token.ErrExpired) || len(tok) > maxClientToken {
		return nil, err
	}
	return s.readByClientToken(ctx, tok)
}

// readByClientToken finds the execution a client token started without any lookup table: the
// token derives one engine id per tool that may run as a task, and all of them are asked at once.
func (s *Server) readByClientToken(ctx context.Context, clientToken string) (*task, error) {
	caller := callerOf(ctx)
	if until, ok := s.unknownTokens.until(caller, clientToken); ok && s.now().Before(until) {
		return nil, &taskError{kind: errNotFound}
	}
	type found struct {
		i   int
		ref adapters.Ref
		st  adapters.Status
		err error
	}
	var candidates []*mapping.Tool
	for _, t := range s.set.Tools {
		if t.TaskSupport != mapping.TaskForbidden {
			candidates = append(candidates, t)
		}
	}
	results := make(chan found, len(candidates))
	for i, tool := range candidates {
		go func() {
			e := s.engines[tool.Engine]
			ref := e.KeyRef(tool.Target, clientToken, caller)
			st, err := e.Describe(pacedTool(ctx, tool, time.Time{}), tool.Target, ref)
			results <- found{i, ref, st, err}
		}()
	}
	best := -1
	var bestRef adapters.Ref
	var bestStatus adapters.Status
	var engineErr error
	for range candidates {
		f := <-results
		switch {
		case f.err == nil && (best < 0 || f.i < best):
			best, bestRef, bestStatus = f.i, f.ref, f.st
		case f.err != nil && !errors.Is(f.err, adapters.ErrNotFound):
			engineErr = f.err
		}
	}
	if best < 0 {
		if engineErr != nil {
			return nil, engineError("Failed to retrieve operation", engineErr)
		}
		s.unknownTokens.remember(caller, clientToken, s.now().Add(unknownFor))
		return nil, &taskError{kind: errNotFound}
	}
	tool := candidates[best]
	t := &task{id: clientToken, tool: tool, claims: token.Claims{Tool: tool.Name, Ref: bestRef, TTL: tool.TTL, Caller: caller}, status: bestStatus}
	if err := s.fetchResult(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// operationStatus answers tools/async/status. An operation that waits on input asks the client
// itself where the connection carries server requests, and answers once the questions are
// answered. SEP-1391 puts the operation token on such a request as _operation.token; go-sdk's
// elicitation params take no field of their own, so it goes in _meta as "_operation".
func (s *Server) operationStatus(ctx context.Context, c caps, tok string, t *task) (mcp.Result, error) {
	if t.status.State == adapters.InputRequired && elicits(c) {
		if err := s.askOpenQuestions(ctx, c, t, mcp.Meta{"_operation": map[string]any{"token": tok}}); err != nil {
			return nil, err
		}
		if err := s.describe(ctx, t); err != nil {
			return nil, err
		}
	}
	res := &operationStatus{Status: operations{}.status(t)}
	switch {
	case t.failure != nil:
		res.Error = t.failure.Message
	case t.result != nil && t.result.isError:
		res.Error = t.result.text
	}
	return res, nil
}

// operationResult answers once the operation completed or failed (the review thread of SEP-1391
// asks for the failure's content too); a protocol failure is answered as the error itself. Before
// that, the error says when this replica will next read the engine: a client that saw the
// operation complete through another replica, whose reading was newer, retries then.
func (s *Server) operationResult(_ context.Context, c caps, _ string, t *task) (mcp.Result, error) {
	switch {
	case t.failure != nil:
		return nil, t.failure
	case t.result == nil:
		return nil, notYet(operations{}.status(t), t.pollInterval())
	}
	return &operationResult{Result: t.result.wire(c.modern)}, nil
}

// notYet is tools/async/result's error for an operation that has not ended as read here: the
// dialect's -32602, marked retryable after the interval, as the engine's throttles are.
func notYet(status string, retry time.Duration) *jsonrpc.Error {
	retry = max(retry, 100*time.Millisecond)
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": retry.Milliseconds()})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data, Message: fmt.Sprintf(
		"Failed to retrieve operation result: the operation is %s, not completed or failed; retry in %s", status, retry.Round(100*time.Millisecond))}
}

// cancelOperation stops the operation a token names, for notifications/cancelled on stdio; there
// is no one to answer, so failures are only logged.
func (s *Server) cancelOperation(tok string) {
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	t, err := s.resolve(ctx, tok)
	if err == nil {
		err = s.cancel(ctx, t, "an MCP client (notifications/cancelled)")
	}
	if err != nil && kindOf(err) != errEnded {
		s.log.Warn("cancelling an operation after notifications/cancelled failed", "error", err)
	}
}
