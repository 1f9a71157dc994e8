package dialects

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// extension is the tasks extension on 2026-07-28 (docs/protocol.md, its first dialect): a call
// answers a task at once, polled with tasks/get, answered with tasks/update, stopped with
// tasks/cancel. A tool error is still a completed task; only a protocol error fails it.
type extension struct{ r *Router }

// takes: a call of a client that declared the extension, unless it asked for a SEP-1391 operation.
func (extension) takes(c caps, tool *mapping.Tool) bool {
	return tool.TaskSupport != mapping.TaskForbidden && c.operation == nil && c.modern && c.tasks
}

func (d extension) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	t, err := d.r.tasks.Start(ctx, call.request())
	if err != nil {
		return d.r.toolAnswer(c, taskWords, err)
	}
	return &createTaskResult{taskInfo: extensionTask(t)}, nil
}

// startsAtOnce reports whether a plain call of tool by a caller whose _meta is meta, asking no
// progress, is one the extension answers at once with its task and nothing else (fast.go): a tool
// that may run as a task and asks nothing before it starts, by a caller that declared the
// extension.
func (extension) startsAtOnce(tool *mapping.Tool, meta mcp.Meta) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	_, declared := extensions[extensionTasks]
	return declared && tool.TaskSupport != mapping.TaskForbidden && len(tool.Ask) == 0
}

// speaks: every 2026-07-28 client; those that did not declare the extension are told to.
func (extension) speaks(c caps) bool { return c.modern }

func (d extension) methods() map[string]method {
	return map[string]method{
		"tasks/get":    ofDeclared(d.get),
		"tasks/cancel": ofDeclared(d.cancel),
		"tasks/update": ofDeclared(d.update),
		"tasks/result": ofDeclared(refused("tasks/result does not exist in the tasks extension: poll tasks/get")),
		"tasks/list":   refused("tasks/list does not exist in the tasks extension"),
	}
}

func (extension) words() words { return taskWords }

// ofDeclared is m for a caller that declared the extension; others get -32021.
func ofDeclared(m method) method {
	return func(ctx context.Context, c caps, p *taskParams) (mcp.Result, error) {
		if !c.tasks {
			return nil, errMissingTasksCapability("")
		}
		return m(ctx, c, p)
	}
}

// detailed is a task as tasks/get answers it: with its result once completed, its error once
// failed, its open questions while input_required.
func detailed(t *tasks.Task) *detailedTask {
	res := &detailedTask{taskInfo: extensionTask(t)}
	switch {
	case t.Failure != nil:
		res.Error = failureError(t.Failure)
	case t.Result != nil:
		res.Result = wireResult(t.Result, true)
	default:
		res.InputRequests = openRequests(t)
	}
	return res
}

func (d extension) get(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Read(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return detailed(t), nil
}

// cancel is cooperative: an ended task keeps its outcome, and the answer is the same.
func (d extension) cancel(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Open(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if err := d.r.tasks.Cancel(ctx, t, "an MCP client"); err != nil && tasks.KindOf(err) != tasks.Ended {
		return nil, err
	}
	return &ack{}, nil
}

// update delivers answers to the task's open questions; responses to keys that are not open are
// ignored, and the acknowledgement comes once the engine has the answers.
func (d extension) update(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Open(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, tasks.Invalidf(`Failed to update task: inputResponses is required, like {"confirm": {"action": "accept", "content": {...}}}`)
	}
	if _, err := d.r.tasks.Answer(ctx, t, sent(p.InputResponses)); err != nil {
		return nil, err
	}
	return &ack{}, nil
}

// extensionStatus is a task's status in the extension's words.
func extensionStatus(t *tasks.Task) string {
	switch t.Status.State {
	case adapters.Succeeded, adapters.Failed:
		if t.Failure != nil {
			return "failed"
		}
		return "completed"
	case adapters.Cancelled:
		return "cancelled"
	case adapters.InputRequired:
		return "input_required"
	}
	return "working"
}

// extensionTask renders a task for the extension.
func extensionTask(t *tasks.Task) taskInfo {
	return taskInfo{
		TaskID: t.ID, Status: extensionStatus(t), StatusMessage: t.Message(),
		CreatedAt: timestamp(t.CreatedAt()), LastUpdatedAt: timestamp(t.UpdatedAt()),
		TTLMs: ttlMs(t), PollIntervalMs: t.PollInterval().Milliseconds(),
	}
}

// ttlMs is the task's ttl in milliseconds, nil when unlimited.
func ttlMs(t *tasks.Task) *int64 {
	ttl := t.TTL()
	if ttl == 0 {
		return nil
	}
	ms := ttl.Milliseconds()
	return &ms
}

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

// The extension's results.

type taskInfo struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

type createTaskResult struct {
	mcp.ResultBase
	ResultType created `json:"resultType"`
	taskInfo
}

// detailedTask answers tasks/get: result once completed, error once failed, the open questions
// while input_required.
type detailedTask struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
	taskInfo
	Result        *callToolResult `json:"result,omitempty"`
	Error         *jsonrpc.Error  `json:"error,omitempty"`
	InputRequests inputRequests   `json:"inputRequests,omitempty"`
}
