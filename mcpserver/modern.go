package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
)

// The Tasks extension on protocol 2026-07-28 (PROTOCOL.md section 1).

func errMissingTasksCapability(tool string) error {
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{"extensions": map[string]any{extensionTasks: map[string]any{}}},
	})
	msg := "Missing required client capability"
	if tool != "" {
		msg += ": tool " + tool + " runs only as a task; declare the " + extensionTasks + " extension"
	}
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: msg, Data: data}
}

type taskParams struct {
	mcp.ParamsBase
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// The task method names are shared by the extension and 2025-11-25: each answers in the caller's
// dialect.
func (s *Server) addTaskMethods() error {
	for method, h := range map[string]func(context.Context, *mcp.ServerSession, *taskParams) (*object, error){
		"tasks/get":    s.tasksGet,
		"tasks/cancel": s.tasksCancel,
		"tasks/update": s.tasksUpdate,
		"tasks/result": s.tasksResult,
	} {
		if err := mcp.AddReceivingCustomMethod(s.mcp, method, h); err != nil {
			return err
		}
	}
	for method, h := range map[string]func(context.Context, *mcp.ServerSession, *operationParams) (*object, error){
		"tools/async/status": s.operationStatus,
		"tools/async/result": s.operationResult,
	} {
		if err := mcp.AddReceivingCustomMethod(s.mcp, method, h); err != nil {
			return err
		}
	}
	return nil
}

// openTask checks the caller's capability and the id: the common start of every task method.
func openTask(ctx context.Context, p *taskParams) error {
	if c := capsOf(ctx); c.modern && !c.tasks {
		return errMissingTasksCapability("")
	}
	if p.TaskID == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: taskId is required"}
	}
	return nil
}

func (s *Server) tasksGet(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*object, error) {
	if err := openTask(ctx, p); err != nil {
		return nil, err
	}
	t, err := s.read(ctx, p.TaskID, "")
	if err != nil {
		return nil, err
	}
	c := capsOf(ctx)
	if !c.modern {
		return reply(c, "", legacyTask(t)), nil
	}
	return reply(c, "complete", modernTask(t)), nil
}

func (s *Server) tasksCancel(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*object, error) {
	if err := openTask(ctx, p); err != nil {
		return nil, err
	}
	c := capsOf(ctx)
	if !c.modern {
		return s.legacyCancel(ctx, c, p.TaskID)
	}
	t, err := s.resolve(p.TaskID, "")
	if err != nil {
		return nil, err
	}
	// Cancellation is cooperative here: an execution that already ended simply keeps its outcome.
	if err := s.cancel(ctx, t, "an MCP client"); err != nil && !isEnded(err) {
		return nil, err
	}
	return reply(c, "complete", nil), nil
}

func (s *Server) tasksUpdate(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*object, error) {
	if err := openTask(ctx, p); err != nil {
		return nil, err
	}
	if _, err := s.resolve(p.TaskID, ""); err != nil {
		return nil, err
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to update task: the task has no open input requests"}
}

func (s *Server) tasksResult(ctx context.Context, _ *mcp.ServerSession, p *taskParams) (*object, error) {
	if c := capsOf(ctx); !c.modern {
		if err := openTask(ctx, p); err != nil {
			return nil, err
		}
		return s.legacyResult(ctx, c, p.TaskID)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tasks/result does not exist in the tasks extension: poll tasks/get"}
}

// modernTask renders a task as the extension's DetailedTask.
func modernTask(t *task) map[string]any {
	m := map[string]any{
		"taskId":         t.id,
		"createdAt":      timestamp(t.createdAt()),
		"lastUpdatedAt":  timestamp(t.updatedAt()),
		"ttlMs":          t.ttlMs(),
		"pollIntervalMs": t.tool.PollInterval.Milliseconds(),
		"statusMessage":  t.message(),
	}
	switch t.status.State {
	case adapters.Succeeded, adapters.Failed:
		if t.failure != nil {
			m["status"] = "failed"
			m["error"] = t.failure
		} else {
			m["status"] = "completed"
			m["result"] = t.result
		}
	case adapters.Cancelled:
		m["status"] = "cancelled"
	default:
		m["status"] = "working"
	}
	return m
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// object is a result the SDK has no type for; it keeps the _meta the SDK adds.
type object struct {
	mcp.ResultBase
	fields map[string]any
}

func (o *object) MarshalJSON() ([]byte, error) {
	if len(o.Meta) == 0 {
		return json.Marshal(o.fields)
	}
	m := make(map[string]any, len(o.fields)+1)
	for k, v := range o.fields {
		m[k] = v
	}
	meta := map[string]any{}
	if own, ok := m["_meta"].(map[string]any); ok {
		for k, v := range own {
			meta[k] = v
		}
	}
	for k, v := range o.Meta {
		meta[k] = v
	}
	m["_meta"] = meta
	return json.Marshal(m)
}
