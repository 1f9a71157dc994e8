package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// The dialects the clients speak, as their SDKs do on the wire.
const (
	dialectExtension  = "2026-07-28 tasks"
	dialectLegacy     = "2025-11-25 tasks"
	dialectOperations = "SEP-1391 operations"
	dialectHandles    = "handle tools"
	dialectWait       = "wait mode"
)

var dialects = []string{dialectExtension, dialectLegacy, dialectOperations, dialectHandles, dialectWait}

const extensionTasks = "io.modelcontextprotocol/tasks"

// toolResult is a CallToolResult.
type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// reading is one poll's answer, in words common to the dialects.
type reading struct {
	// status is working, input_required, completed, failed or cancelled.
	status string
	// interval is the interval the server suggests, 0 when it says none.
	interval time.Duration
	// result is the result when the reading carries it (2026-07-28's tasks/get).
	result *toolResult
	// questions are the keys of the open questions, when the reading names them.
	questions []string
	// notified: the reading came in a notifications/tasks, not as the answer to a poll.
	notified bool
}

// callError is a failed request as a client sees it: retryable when the transport failed, the
// request timed out, or the server marked it so.
type callError struct {
	kind      string // transport, timeout, retryable, error
	retryable bool
	msg       string
}

func (e *callError) Error() string { return e.kind + ": " + e.msg }

// errorID matches the error ids and addresses that make each message unique, so that messages
// can be counted by kind.
var errorID = regexp.MustCompile(`error id [0-9a-f]+|127\.0\.0\.1:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// session is one client's connection to the front, in its dialect.
type session struct {
	dialect string
	mcp     *mcpclient.Client
	timeout time.Duration
}

func newSession(dialect string, tr mcpclient.Transport, timeout time.Duration) *session {
	s := &session{dialect: dialect, timeout: timeout}
	switch dialect {
	case dialectExtension:
		s.mcp = mcpclient.Modern(tr, extensionTasks)
	case dialectLegacy:
		s.mcp = mcpclient.Legacy(tr)
	case dialectOperations:
		s.mcp = &mcpclient.Client{T: tr, Experimental: []string{"sep1391"}}
	default:
		s.mcp = mcpclient.Modern(tr)
	}
	s.mcp.Name, s.mcp.Version = "taskgate-soak", "1"
	return s
}

// call sends one request within the session's timeout (or timeout, when longer) and decodes its
// result into v.
func (s *session) call(ctx context.Context, timeout time.Duration, method string, params map[string]any, v any) error {
	ctx, cancel := context.WithTimeout(ctx, max(timeout, s.timeout))
	defer cancel()
	raw, rpcErr, err := s.mcp.Call(ctx, method, params)
	switch {
	case err != nil && ctx.Err() != nil:
		return &callError{kind: "timeout", retryable: true, msg: method + ": no answer within the client's timeout"}
	case err != nil:
		return &callError{kind: "transport", retryable: true, msg: err.Error()}
	case rpcErr != nil:
		var data struct {
			Retryable bool `json:"retryable"`
		}
		json.Unmarshal(rpcErr.Data, &data)
		kind := "error"
		if data.Retryable {
			kind = "retryable"
		}
		return &callError{kind: kind, retryable: data.Retryable, msg: fmt.Sprintf("%s: %d %s", method, rpcErr.Code, rpcErr.Message)}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &callError{kind: "error", msg: fmt.Sprintf("%s: undecodable result %.200s: %v", method, raw, err)}
	}
	return nil
}

// toolCall calls a tool; a tool error that says to retry (the handle tools render an engine
// outage or a spent read budget so, for a model to read) is a retryable error, others are
// returned as the result.
func (s *session) toolCall(ctx context.Context, timeout time.Duration, name string, args map[string]any, extra map[string]any) (toolResult, error) {
	params := map[string]any{"name": name, "arguments": args}
	for k, v := range extra {
		params[k] = v
	}
	var r toolResult
	if err := s.call(ctx, timeout, "tools/call", params, &r); err != nil {
		return r, err
	}
	if r.IsError && strings.Contains(r.text(), "retry in ") {
		return r, &callError{kind: "retryable", retryable: true, msg: name + ": " + r.text()}
	}
	return r, nil
}

// initialize is what a 2025-11-25 client sends first (stateless HTTP does not keep it).
func (s *session) initialize(ctx context.Context) error {
	var res map[string]any
	return s.call(ctx, 0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
		"clientInfo":      map[string]any{"name": "taskgate-soak", "version": "1"},
	}, &res)
}

// started is what a start gives: the id to follow (task id, operation token, handle), the
// interval to poll at, or, in wait mode, the result itself.
type started struct {
	id       string
	interval time.Duration
	result   *toolResult
}

// start starts tool. token is the SEP-1391 client token (the idempotency key), ignored by the
// other dialects; waitFor is how long a waiting call may take.
func (s *session) start(ctx context.Context, tool string, args map[string]any, token string, waitFor time.Duration) (started, error) {
	switch s.dialect {
	case dialectExtension:
		var r struct {
			ResultType     string `json:"resultType"`
			TaskID         string `json:"taskId"`
			PollIntervalMs int64  `json:"pollIntervalMs"`
			toolResult
		}
		if err := s.call(ctx, 0, "tools/call", map[string]any{"name": tool, "arguments": args}, &r); err != nil {
			return started{}, err
		}
		if r.ResultType != "task" {
			return started{}, &callError{kind: "error", msg: fmt.Sprintf("tools/call %s answered %s, not a task: %s", tool, r.ResultType, r.text())}
		}
		return started{id: r.TaskID, interval: ms(r.PollIntervalMs)}, nil
	case dialectLegacy:
		var r struct {
			Task struct {
				TaskID       string `json:"taskId"`
				PollInterval int64  `json:"pollInterval"`
			} `json:"task"`
			toolResult
		}
		params := map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 3_600_000}}
		if err := s.call(ctx, 0, "tools/call", params, &r); err != nil {
			return started{}, err
		}
		if r.Task.TaskID == "" {
			return started{}, &callError{kind: "error", msg: fmt.Sprintf("tools/call %s with a task answered no task: %s", tool, r.text())}
		}
		return started{id: r.Task.TaskID, interval: ms(r.Task.PollInterval)}, nil
	case dialectOperations:
		var r struct {
			Operation struct {
				Token         string  `json:"token"`
				PollFrequency float64 `json:"pollFrequency"`
			} `json:"operation"`
			toolResult
		}
		params := map[string]any{"name": tool, "arguments": args, "operation": map[string]any{"token": token}}
		if err := s.call(ctx, 0, "tools/call", params, &r); err != nil {
			return started{}, err
		}
		if r.Operation.Token == "" {
			return started{}, &callError{kind: "error", msg: fmt.Sprintf("tools/call %s with an operation answered no operation: %s", tool, r.text())}
		}
		return started{id: r.Operation.Token, interval: time.Duration(r.Operation.PollFrequency * float64(time.Second))}, nil
	case dialectHandles:
		r, err := s.toolCall(ctx, 0, tool, args, nil)
		if err != nil {
			return started{}, err
		}
		var h struct {
			Handle string `json:"handle"`
		}
		if json.Unmarshal(r.StructuredContent, &h); r.IsError || h.Handle == "" {
			return started{}, &callError{kind: "error", msg: fmt.Sprintf("tools/call %s answered no handle: %s", tool, r.text())}
		}
		return started{id: h.Handle}, nil
	}
	r, err := s.toolCall(ctx, waitFor, tool, args, nil)
	if err != nil {
		return started{}, err
	}
	return started{result: &r}, nil
}

// poll reads the task once.
func (s *session) poll(ctx context.Context, id string) (reading, error) {
	switch s.dialect {
	case dialectExtension, dialectLegacy:
		var r struct {
			Status         string                     `json:"status"`
			PollIntervalMs int64                      `json:"pollIntervalMs"`
			PollInterval   int64                      `json:"pollInterval"`
			Result         *toolResult                `json:"result"`
			InputRequests  map[string]json.RawMessage `json:"inputRequests"`
		}
		if err := s.call(ctx, 0, "tasks/get", map[string]any{"taskId": id}, &r); err != nil {
			return reading{}, err
		}
		rd := reading{status: r.Status, interval: ms(max(r.PollIntervalMs, r.PollInterval)), result: r.Result}
		for k := range r.InputRequests {
			rd.questions = append(rd.questions, k)
		}
		return rd, nil
	case dialectOperations:
		var r struct {
			Status string `json:"status"`
		}
		if err := s.call(ctx, 0, "tools/async/status", map[string]any{"token": id}, &r); err != nil {
			return reading{}, err
		}
		switch r.Status {
		case "submitted":
			r.Status = "working"
		case "canceled":
			r.Status = "cancelled"
		}
		return reading{status: r.Status}, nil
	}
	r, err := s.toolCall(ctx, 0, "task_status", map[string]any{"handle": id}, nil)
	if err != nil {
		return reading{}, err
	}
	var st struct {
		Status    string `json:"status"`
		Questions []struct {
			Key string `json:"key"`
		} `json:"questions"`
	}
	if json.Unmarshal(r.StructuredContent, &st); r.IsError || st.Status == "" {
		return reading{}, &callError{kind: "error", msg: "task_status: " + r.text()}
	}
	rd := reading{status: st.Status}
	for _, q := range st.Questions {
		rd.questions = append(rd.questions, q.Key)
	}
	return rd, nil
}

// result reads the result of an ended task, where the dialect reads it apart from the status.
func (s *session) result(ctx context.Context, id string) (toolResult, error) {
	switch s.dialect {
	case dialectLegacy:
		var r toolResult
		return r, s.call(ctx, 0, "tasks/result", map[string]any{"taskId": id}, &r)
	case dialectOperations:
		var r struct {
			Result toolResult `json:"result"`
		}
		err := s.call(ctx, 0, "tools/async/result", map[string]any{"token": id}, &r)
		return r.Result, err
	}
	r, err := s.toolCall(ctx, 0, "task_result", map[string]any{"handle": id}, nil)
	var st struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(r.StructuredContent, &st); err == nil && !r.IsError && (st.Status == "working" || st.Status == "input_required") {
		// task_result reports the status until the task has ended as this replica reads it; a
		// replica whose reading is older than the one task_status answered from is read again.
		return r, &callError{kind: "not yet", retryable: true, msg: "task_result: " + r.text()}
	}
	return r, err
}

// answer accepts the open question key with content. The dialects without an answer of their
// own over stateless HTTP answer through the task_answer tool, as README says.
func (s *session) answer(ctx context.Context, id, key string, content map[string]any) error {
	if s.dialect == dialectExtension {
		var ack map[string]any
		return s.call(ctx, 0, "tasks/update", map[string]any{"taskId": id,
			"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": content}}}, &ack)
	}
	r, err := s.toolCall(ctx, 0, "task_answer", map[string]any{"handle": id, "answers": map[string]any{key: content}}, nil)
	if err == nil && r.IsError && !strings.Contains(r.text(), "no open question") {
		// "no open question" is the answer to a repeated answer whose first answer arrived.
		return &callError{kind: "error", msg: "task_answer: " + r.text()}
	}
	return err
}

// cancel asks the task to stop.
func (s *session) cancel(ctx context.Context, id string) error {
	switch s.dialect {
	case dialectExtension, dialectLegacy:
		var r map[string]any
		return s.call(ctx, 0, "tasks/cancel", map[string]any{"taskId": id}, &r)
	}
	r, err := s.toolCall(ctx, 0, "task_cancel", map[string]any{"handle": id}, nil)
	if err == nil && r.IsError {
		return &callError{kind: "error", msg: "task_cancel: " + r.text()}
	}
	return err
}

// alreadyEnded reports whether a cancel was refused because the task had ended: the answer to
// a repeated cancel whose first one arrived.
func alreadyEnded(err error) bool {
	var ce *callError
	return errors.As(err, &ce) && (strings.Contains(ce.msg, "already ended") || strings.Contains(ce.msg, "had already ended"))
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
