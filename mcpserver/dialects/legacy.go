package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks"
)

// legacy is tasks on 2025-11-25 (docs/protocol.md, its second dialect): a call with a `task`
// param answers a task, read with tasks/get, waited on with tasks/result, stopped with
// tasks/cancel, listed with tasks/list. Here a tool error fails the task.
type legacy struct{ r *Router }

const metaRelatedTask = "io.modelcontextprotocol/related-task"

// takes: a call with a `task` param, and a plain call of a tool that runs only as a task by a
// client that declared tasks (and not SEP-1391, which takes it), which must send one.
func (legacy) takes(c caps, tool *mapping.Tool) bool {
	if tool.TaskSupport == mapping.TaskForbidden || c.operation != nil || c.modern {
		return false
	}
	return c.task != nil || (c.tasks && !c.sep1391 && tool.TaskSupport == mapping.TaskRequired)
}

// call starts a task; the client's ttl can only shorten the tool's.
func (d legacy) call(ctx context.Context, c caps, call toolCall) (mcp.Result, error) {
	if c.task == nil {
		return nil, errTaskRequired(call.tool)
	}
	var meta struct {
		TTL *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(c.task, &meta); err != nil {
		return nil, d.r.rpcError(taskWords, tasks.Invalidf(`task must be an object like {"ttl": 60000}`))
	}
	req := call.request()
	if meta.TTL != nil {
		if *meta.TTL <= 0 {
			return nil, d.r.rpcError(taskWords, tasks.Invalidf("task.ttl must be a positive number of milliseconds"))
		}
		req.TTL = time.Duration(*meta.TTL) * time.Millisecond
	}
	t, err := d.r.tasks.Start(ctx, req)
	if err != nil {
		// 2025-11-25 has no way to hand back a tool error instead of a task: the call itself fails.
		return nil, d.r.rpcError(taskWords, err)
	}
	return &legacyCreateTaskResult{Task: legacyInfo(t)}, nil
}

// errTaskRequired refuses a plain call of a tool that runs only as a task.
func errTaskRequired(tool *mapping.Tool) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("tool %s runs only as a task: call it with a `task` param", tool.Name)}
}

// speaks: every client before 2026-07-28.
func (legacy) speaks(c caps) bool { return !c.modern }

func (d legacy) methods() map[string]method {
	return map[string]method{
		"tasks/get":    d.get,
		"tasks/cancel": d.cancel,
		"tasks/result": d.result,
		"tasks/list":   d.list,
		"tasks/update": refused("tasks/update is part of the tasks extension on 2026-07-28"),
	}
}

func (legacy) words() words { return taskWords }

func (d legacy) get(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Read(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return &legacyTask{legacyTaskInfo: legacyInfo(t)}, nil
}

// cancel answers with the task, already cancelled, and refuses an ended one.
func (d legacy) cancel(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	t, err := d.r.tasks.Open(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if err := d.r.tasks.Describe(ctx, t); err != nil {
		return nil, err
	}
	if t.Ended() {
		return nil, tasks.Invalidf("Cannot cancel task: it is already %s", legacyStatus(t))
	}
	switch err := d.r.tasks.Cancel(ctx, t, "an MCP client"); {
	case tasks.KindOf(err) == tasks.Ended:
		return nil, tasks.Invalidf("Cannot cancel task: it has already ended")
	case err != nil:
		return nil, err
	}
	t.Status = adapters.Status{State: adapters.Cancelled, Native: "CANCEL_REQUESTED", Started: t.Status.Started, Updated: d.r.now(),
		Message: "Cancellation requested; the workflow is stopping."}
	return &legacyTask{legacyTaskInfo: legacyInfo(t)}, nil
}

// result blocks until the task has ended (or the client goes away) and returns what the call
// would have returned, tagged with the task. Over HTTP it blocks for at most the server's longest
// wait (a request holds its principal's share meanwhile); then it answers with the task's status
// and how to go on (errStillRunning).
func (d legacy) result(ctx context.Context, c caps, p *taskParams) (mcp.Result, error) {
	id := p.TaskID
	waitCtx, bound, stop := withWaitBound(ctx)
	defer stop()
	for waited := false; ; waited = true {
		t, err := d.r.tasks.Read(ctx, id)
		if err != nil {
			return nil, err
		}
		related := mcp.Meta{metaRelatedTask: map[string]any{"taskId": id}}
		if t.Ended() {
			if waited {
				d.notifyStatus(ctx, c, t)
			}
			if t.Failure != nil {
				failure := failureError(t.Failure)
				failure.Data, _ = json.Marshal(map[string]any{"_meta": related})
				return nil, failure
			}
			res := t.Result
			if res == nil { // cancelled
				res = tasks.ToolError("%s", t.Message())
			}
			out := wireResult(res, false)
			out.Meta = related
			return out, nil
		}
		if waitCtx.Err() != nil {
			return nil, errStillRunning(t, bound, related)
		}
		// Wait blocks cheaply in the engine until the execution ends, asking the client the
		// workflow's questions on the way where it can; then read again, which also re-checks the
		// id's expiry.
		if err := d.r.tasks.Wait(waitCtx, t, d.r.elicitor(c, related)); err != nil && waitCtx.Err() == nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// errStillRunning answers a tasks/result that waited as long as a request may, with the task's
// status: 2025-11-25 lets a client whose tasks/result failed poll tasks/get, and call
// tasks/result again once the task has ended.
func errStillRunning(t *tasks.Task, bound time.Duration, related mcp.Meta) error {
	info := legacyInfo(t)
	data, _ := json.Marshal(map[string]any{"retryable": true, "retryAfterMs": info.PollInterval, "task": info, "_meta": related})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("Task still %s after %s, the longest this server holds a request: poll tasks/get every %d ms, and call tasks/result again once it has ended", info.Status, bound, info.PollInterval)}
}

// list answers tasks/list: the caller's own tasks.
func (d legacy) list(ctx context.Context, _ caps, p *taskParams) (mcp.Result, error) {
	listed, next, err := d.r.tasks.List(ctx, p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &legacyTaskList{Tasks: make([]legacyTaskInfo, 0, len(listed)), NextCursor: next}
	for _, t := range listed {
		res.Tasks = append(res.Tasks, legacyInfo(t))
	}
	return res, nil
}

// notifyStatus tells a client on a connection that can carry notifications (stdio) that a task
// it waits on changed status. The notification is optional: failures are only logged.
func (d legacy) notifyStatus(ctx context.Context, c caps, t *tasks.Task) {
	if c.Conn == nil || !c.tasks {
		return
	}
	if err := c.Conn.Notify(ctx, "notifications/tasks/status", legacyInfo(t)); err != nil {
		d.r.log.Warn("notifications/tasks/status not sent", "error", err)
	}
}

// legacyStatus is a task's status in the words of 2025-11-25, where a tool error fails the task.
func legacyStatus(t *tasks.Task) string { return endedWord(t, "working", "cancelled") }

// endedWord is completed or failed for an ended task, cancelled (spelled as the dialect does) for a
// cancelled one, input_required for one that waits on an answer, and running otherwise.
func endedWord(t *tasks.Task, running, cancelled string) string {
	switch t.Status.State {
	case adapters.Succeeded, adapters.Failed:
		if t.Failed() {
			return "failed"
		}
		return "completed"
	case adapters.Cancelled:
		return cancelled
	case adapters.InputRequired:
		return "input_required"
	}
	return running
}

// legacyInfo renders a task for 2025-11-25.
func legacyInfo(t *tasks.Task) legacyTaskInfo {
	return legacyTaskInfo{
		TaskID: t.ID, Status: legacyStatus(t), StatusMessage: t.Message(),
		CreatedAt: timestamp(t.CreatedAt()), LastUpdatedAt: timestamp(t.UpdatedAt()),
		TTL: ttlMs(t), PollInterval: t.PollInterval().Milliseconds(),
	}
}

// legacyTaskSupport is a tool's execution.taskSupport for a 2025-11-25 client: "required" only
// when a call without a task would be refused. A client whose declarations are unknown (stateless
// HTTP) gets a handle or the waited-for result in the handles and wait modes, so the tool is
// "optional" to it, and clients that honour the word (the TypeScript SDK refuses a plain call to a
// required tool) may call it plainly.
func legacyTaskSupport(c caps, t *mapping.Tool, mode NoTaskMode) mapping.TaskSupport {
	if t.TaskSupport == mapping.TaskRequired && !c.known && mode != NoTaskHide {
		return mapping.TaskOptional
	}
	return t.TaskSupport
}

// legacyInitialize replaces the tasks extension, which the SDK shows to every protocol, with the
// 2025-11-25 tasks capability (tasks/list included: a caller lists only its own tasks).
func legacyInitialize(res *mcp.InitializeResult) mcp.Result {
	out := &legacyInitializeResult{InitializeResult: res}
	if res.Capabilities != nil {
		out.Capabilities.ServerCapabilities = *res.Capabilities
	}
	ext := maps.Clone(out.Capabilities.Extensions)
	delete(ext, extensionTasks)
	if len(ext) == 0 {
		ext = nil
	}
	out.Capabilities.Extensions = ext
	return out
}

// 2025-11-25's results: the task of the extension, with the field names of that version and no
// resultType.

type legacyTaskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

type legacyCreateTaskResult struct {
	mcp.ResultBase
	Task legacyTaskInfo `json:"task"`
}

type legacyTask struct {
	mcp.ResultBase
	legacyTaskInfo
}

type legacyTasksCapability struct {
	Cancel   struct{} `json:"cancel"`
	List     struct{} `json:"list"`
	Requests struct {
		Tools struct {
			Call struct{} `json:"call"`
		} `json:"tools"`
	} `json:"requests"`
}

type legacyTaskList struct {
	mcp.ResultBase
	Tasks      []legacyTaskInfo `json:"tasks"`
	NextCursor string           `json:"nextCursor,omitempty"`
}

type legacyCapabilities struct {
	mcp.ServerCapabilities
	Tasks legacyTasksCapability `json:"tasks"`
}

// legacyInitializeResult is the SDK's initialize result with the 2025-11-25 tasks capability in
// place of the extension.
type legacyInitializeResult struct {
	*mcp.InitializeResult
	Capabilities legacyCapabilities `json:"capabilities"`
}
