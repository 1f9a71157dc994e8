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
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver/token"
)

// SEP-1391 long-running operations (PROTOCOL.md section 3).

type operationParams struct {
	mcp.ParamsBase
	Token string `json:"token"`
}

// maxClientToken bounds client-chosen operation tokens.
const maxClientToken = 256

func errOperationNotFound() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve operation: Operation not found"}
}

func errOperationExpired() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve operation: Operation has expired"}
}

// asOperationError restates the task errors of read/resolve in the words of this dialect.
func asOperationError(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
		if rpcErr.Message == msgTaskExpired {
			return errOperationExpired()
		}
		return errOperationNotFound()
	}
	return err
}

// operationKey scopes a client's token to the caller before it becomes an idempotency key, so that
// one caller's token never names another caller's execution.
func operationKey(caller, clientToken string) string { return caller + "\x00" + clientToken }

// startOperation starts an operation; a client token makes the start idempotent.
func (s *Server) startOperation(ctx context.Context, c caps, tool *mapping.Tool, args json.RawMessage) (mcp.Result, error) {
	var op struct {
		Token     string   `json:"token"`
		KeepAlive *float64 `json:"keepAlive"`
	}
	if c.operation != nil {
		if err := json.Unmarshal(c.operation, &op); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `operation must be an object like {"token": "...", "keepAlive": 3600}`}
		}
	}
	if len(op.Token) > maxClientToken {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("operation.token is longer than %d characters", maxClientToken)}
	}
	opts := startOptions{}
	if op.Token != "" {
		opts.key = operationKey("", op.Token)
	}
	if op.KeepAlive != nil {
		if *op.KeepAlive <= 0 || *op.KeepAlive > math.MaxInt32 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "operation.keepAlive must be a positive number of seconds"}
		}
		opts.keepAlive = time.Duration(*op.KeepAlive * float64(time.Second))
	}
	t, toolErr, err := s.start(ctx, tool, args, opts)
	if err != nil {
		return nil, err
	}
	if toolErr != nil {
		return toolErr, nil
	}
	fields := callToolFields(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
		Text: fmt.Sprintf("Started %s. Poll tools/async/status with the operation token; read the result with tools/async/result.", tool.Name)}}})
	fields["operation"] = map[string]any{
		"token":         t.id,
		"status":        "working",
		"keepAlive":     s.keepAliveSeconds(t),
		"pollFrequency": math.Max(1, math.Round(t.tool.PollInterval.Seconds())),
	}
	return reply(c, "complete", fields), nil
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
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve operation: token is required"}
	}
	t, err := s.read(ctx, tok, "")
	if err == nil {
		if t.status.State.Terminal() && t.claims.KeepAlive > 0 && s.now().After(t.status.Updated.Add(t.claims.KeepAlive)) {
			return nil, errOperationExpired()
		}
		return t, nil
	}
	if _, openErr := s.tokens.Open(tok, s.now()); openErr == nil || errors.Is(openErr, token.ErrExpired) || len(tok) > maxClientToken {
		return nil, asOperationError(err)
	}
	return s.readByClientToken(ctx, tok)
}

// readByClientToken finds the execution a client token started without any lookup table: the
// token derives one engine id per async tool, and all of them are asked at once.
func (s *Server) readByClientToken(ctx context.Context, clientToken string) (*task, error) {
	key := operationKey("", clientToken)
	type found struct {
		i   int
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
			st, err := s.engines[tool.Engine].Describe(ctx, tool.Target, s.engines[tool.Engine].KeyRef(tool.Target, key))
			results <- found{i, st, err}
		}()
	}
	best := -1
	var bestStatus adapters.Status
	var engineErr error
	for range candidates {
		f := <-results
		switch {
		case f.err == nil && (best < 0 || f.i < best):
			best, bestStatus = f.i, f.st
		case f.err != nil && !errors.Is(f.err, adapters.ErrNotFound):
			engineErr = f.err
		}
	}
	if best < 0 {
		if engineErr != nil {
			return nil, errEngine("Failed to retrieve operation", engineErr)
		}
		return nil, errOperationNotFound()
	}
	tool := candidates[best]
	ref := s.engines[tool.Engine].KeyRef(tool.Target, key)
	t := &task{id: clientToken, tool: tool, claims: token.Claims{Tool: tool.Name, Ref: ref, TTL: tool.TTL}, status: bestStatus}
	if err := s.fetchResult(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Server) operationStatus(ctx context.Context, _ *mcp.ServerSession, p *operationParams) (*object, error) {
	t, err := s.readOperation(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{"status": operationStatusWord(t)}
	switch {
	case t.failure != nil:
		fields["error"] = t.failure.Message
	case t.result != nil && t.result.IsError:
		fields["error"] = textOf(t.result)
	}
	return reply(capsOf(ctx), "complete", fields), nil
}

func operationStatusWord(t *task) string {
	switch t.status.State {
	case adapters.Submitted:
		return "submitted"
	case adapters.Working:
		return "working"
	case adapters.Cancelled:
		return "canceled"
	case adapters.Succeeded, adapters.Failed:
		if t.failure != nil || t.result.IsError {
			return "failed"
		}
		return "completed"
	}
	return "unknown"
}

func (s *Server) operationResult(ctx context.Context, _ *mcp.ServerSession, p *operationParams) (*object, error) {
	t, err := s.readOperation(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	switch {
	case t.failure != nil:
		return nil, t.failure
	case t.result == nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("Failed to retrieve operation result: the operation is %s, not completed or failed", operationStatusWord(t))}
	}
	return reply(capsOf(ctx), "complete", map[string]any{"result": t.result}), nil
}

// cancelOperation stops the operation a token names, for notifications/cancelled; there is no
// one to answer, so failures are only logged.
func (s *Server) cancelOperation(tok, caller string) {
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	t, err := s.resolve(tok, caller)
	if err == nil {
		err = s.cancel(ctx, t, "an MCP client (notifications/cancelled)")
	}
	if err != nil && !isEnded(err) {
		s.log.Warn("cancelling an operation after notifications/cancelled failed", "error", err)
	}
}
