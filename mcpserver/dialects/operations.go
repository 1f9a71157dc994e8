package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// operations is SEP-1391's long-running operations (docs/protocol.md, "SEP-1391 operations"): a
// call with an `operation` param (or any call of an async tool by a client that opted in) answers
// an operation token at once, read with tools/async/status and tools/async/result. A client's own
// token is the start's idempotency key, and names the operation as well as the server's.
type operations struct{ r *Router }

// takes: a call with an `operation` param, or of a tool that runs only as a task by a client that
// opted in.
func (operations) takes(c caps, tool *mapping.Tool) bool {
	return tool.TaskSupport != mapping.TaskForbidden && (c.operation != nil || (c.sep1391 && tool.TaskSupport != mapping.TaskOptional))
}

// call starts an operation; a client token makes the start idempotent.
func (d operations) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	var op struct {
		Token     string   `json:"token"`
		KeepAlive *float64 `json:"keepAlive"`
	}
	if c.operation != nil && json.Unmarshal(c.operation, &op) != nil {
		return nil, d.r.rpcError(operationWords, tasks.Invalidf(`operation must be an object like {"token": "...", "keepAlive": 3600}`))
	}
	if len(op.Token) > tasks.MaxKey {
		return nil, d.r.rpcError(operationWords, tasks.Invalidf("operation.token is longer than %d characters", tasks.MaxKey))
	}
	req := call.request()
	req.Key = op.Token
	if op.KeepAlive != nil {
		if *op.KeepAlive <= 0 || *op.KeepAlive > math.MaxInt32 {
			return nil, d.r.rpcError(operationWords, tasks.Invalidf("operation.keepAlive must be a positive number of seconds"))
		}
		req.KeepAlive = time.Duration(*op.KeepAlive * float64(time.Second))
	}
	t, err := d.r.tasks.Start(ctx, req)
	if err != nil {
		return d.r.toolAnswer(c, operationWords, err)
	}
	// notifications/cancelled for the call moves the operation to canceled (stdio).
	if c.Conn != nil {
		c.Conn.OnCancel(func() { d.cancel(t.ID) })
	}
	started := &tasks.Result{Text: fmt.Sprintf("Started %s. Poll tools/async/status with the operation token; read the result with tools/async/result.", call.tool.Name)}
	return &operationStarted{callToolResult: *wireResult(started, c.modern), Operation: operationInfo{
		Token:         t.ID,
		Status:        "working",
		KeepAlive:     d.keepAliveSeconds(t),
		PollFrequency: math.Max(1, math.Round(t.PollInterval().Seconds())),
	}}, nil
}

// keepAliveSeconds is how long the result stays readable after the operation ends, in seconds;
// nil when unknown.
func (d operations) keepAliveSeconds(t *tasks.Task) *int64 {
	k := d.r.tasks.KeepAlive(t)
	if k == 0 {
		return nil
	}
	secs := int64(k.Seconds())
	return &secs
}

// speaks: anyone who holds an operation token.
func (operations) speaks(caps) bool { return true }

func (d operations) methods() map[string]method {
	return map[string]method{"tools/async/status": d.status, "tools/async/result": d.result}
}

func (operations) words() words { return operationWords }

// read reads an operation by the token the server returned or by the client's own token.
func (d operations) read(ctx context.Context, tok string) (*tasks.Task, error) {
	if tok == "" {
		return nil, tasks.Invalidf("Failed to retrieve operation: token is required")
	}
	return d.r.tasks.ReadKeyed(ctx, tok)
}

// status answers tools/async/status. An operation that waits on input asks the client itself
// where the connection carries server requests, and answers once the questions are answered.
// SEP-1391 puts the operation token on such a request as _operation.token; go-sdk's elicitation
// params take no field of their own, so it goes in _meta as "_operation".
func (d operations) status(ctx context.Context, c caps, p *taskParams) (mcp.Result, error) {
	t, err := d.read(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	if t.Status.State == adapters.InputRequired && elicits(c) {
		if err := d.r.askOpenQuestions(ctx, c, t, mcp.Meta{"_operation": map[string]any{"token": p.Token}}); err != nil {
			return nil, err
		}
		if err := d.r.tasks.Describe(ctx, t); err != nil {
			return nil, err
		}
	}
	res := &operationStatus{Status: operationStatusWord(t)}
	switch {
	case t.Failure != nil:
		res.Error = t.Failure.Message
	case t.Result != nil && t.Result.IsError:
		res.Error = t.Result.Text
	}
	return res, nil
}

// result answers once the operation completed or failed (the review thread of SEP-1391 asks for
// the failure's content too); a protocol failure is answered as the error itself. Before that, the
// error says when this replica will next read the engine: a client that saw the operation complete
// through another replica, whose reading was newer, retries then.
func (d operations) result(ctx context.Context, c caps, p *taskParams) (mcp.Result, error) {
	t, err := d.read(ctx, p.Token)
	switch {
	case err != nil:
		return nil, err
	case t.Failure != nil:
		return nil, failureError(t.Failure)
	case t.Result == nil:
		return nil, notYet(operationStatusWord(t), t.PollInterval())
	}
	return &operationResult{Result: wireResult(t.Result, c.modern)}, nil
}

// notYet is tools/async/result's error for an operation that has not ended as read here: the
// dialect's -32602, marked retryable after the interval, as the engine's throttles are.
func notYet(status string, retry time.Duration) *jsonrpc.Error {
	retry = max(retry, 100*time.Millisecond)
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": retry.Milliseconds()})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data, Message: fmt.Sprintf(
		"Failed to retrieve operation result: the operation is %s, not completed or failed; retry in %s", status, retry.Round(100*time.Millisecond))}
}

// cancel stops the operation a token names, after notifications/cancelled; there is no one to
// answer, so failures are only logged.
func (d operations) cancel(tok string) {
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	t, err := d.r.tasks.Open(ctx, tok)
	if err == nil {
		err = d.r.tasks.Cancel(ctx, t, "an MCP client (notifications/cancelled)")
	}
	if err != nil && tasks.KindOf(err) != tasks.Ended {
		d.r.log.Warn("cancelling an operation after notifications/cancelled failed", "error", err)
	}
}

// operationStatusWord is a task's status in SEP-1391's words.
func operationStatusWord(t *tasks.Task) string {
	if t.Status.State == adapters.Submitted {
		return "submitted"
	}
	return endedWord(t, "working", "canceled")
}

// SEP-1391's results.

type operationInfo struct {
	Token         string  `json:"token"`
	Status        string  `json:"status"`
	KeepAlive     *int64  `json:"keepAlive"`
	PollFrequency float64 `json:"pollFrequency"`
}

type operationStarted struct {
	callToolResult
	Operation operationInfo `json:"operation"`
}

type operationStatus struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
	Status     string   `json:"status"`
	Error      string   `json:"error,omitempty"`
}

type operationResult struct {
	mcp.ResultBase
	ResultType complete        `json:"resultType"`
	Result     *callToolResult `json:"result"`
}
